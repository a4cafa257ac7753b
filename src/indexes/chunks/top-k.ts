// The k best of a ranking, kept as it is scanned (both indexes rank with it).

/** The k best (score, a, b) seen, kept sorted best first; ties keep the earlier one. */
export class TopK {
	private readonly scores: number[] = [];
	private readonly refs: Array<[number, number]> = [];

	constructor(private readonly k: number) {}

	get min(): number {
		return this.scores.length < this.k ? -Infinity : this.scores[this.scores.length - 1];
	}

	push(score: number, a: number, b: number): void {
		let i = this.scores.length;
		while (i > 0 && this.scores[i - 1] < score) i--;
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
