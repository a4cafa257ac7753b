// The k best of a ranking, kept as it is scanned (both indexes rank with it).

/**
 * Orders two entries of equal score: negative when (a1, b1) goes first. Rankings over chunks break
 * ties by the chunks themselves (chunkOrder), so the k best do not depend on how the chunks happen to
 * be split into segments (a user's partition, the base-wide index).
 */
export type TieOrder = (a1: number, b1: number, a2: number, b2: number) => number;

/** The k best (score, a, b) seen, kept sorted best first; ties by `tie`, else the earlier one first. */
export class TopK {
	private readonly scores: number[] = [];
	private readonly refs: Array<[number, number]> = [];

	constructor(
		private readonly k: number,
		private readonly tie?: TieOrder,
	) {}

	/** The k-th best score so far (-Infinity until k were seen): a lower score cannot be kept. */
	get min(): number {
		return this.scores.length < this.k ? -Infinity : this.scores[this.scores.length - 1];
	}

	/** The k-th best entry's `a` (undefined until k were seen). */
	get minA(): number | undefined {
		return this.scores.length < this.k ? undefined : this.refs[this.refs.length - 1][0];
	}

	/** Whether an entry of this score may be kept (one tying the k-th may go before it by `tie`). */
	admits(score: number): boolean {
		return this.tie ? score >= this.min : score > this.min;
	}

	/** Whether (score, a, b) goes before entry j. */
	private before(score: number, a: number, b: number, j: number): boolean {
		const other = this.scores[j];
		if (other !== score) return other < score;
		return this.tie !== undefined && this.tie(a, b, this.refs[j][0], this.refs[j][1]) < 0;
	}

	push(score: number, a: number, b: number): void {
		let i = this.scores.length;
		while (i > 0 && this.before(score, a, b, i - 1)) i--;
		if (i >= this.k) return;
		this.scores.splice(i, 0, score);
		this.refs.splice(i, 0, [a, b]);
		if (this.scores.length > this.k) {
			this.scores.pop();
			this.refs.pop();
		}
	}

	sorted(): Array<{ score: number; a: number; b: number }> {
		return this.scores.map((score, i) => ({ score, a: this.refs[i][0], b: this.refs[i][1] }));
	}
}
