// Reference rankings for recall-locomo.ts, computed outside the package's index on the same texts:
// plain BM25 (Robertson–Spärck Jones IDF, as Lucene writes it) and brute-force cosine in Float64.
// They show what the package's lexical and vector search should reach at least, and whether its
// vector index returns the exact nearest neighbours.

/** Lucene's and the literature's usual defaults. */
const K1 = 1.2;
const B = 0.75;

/** Lower-cased runs of letters and digits: no stemming, no stop words (the "plain words" BM25 row). */
export const plainWords = (text: string): string[] =>
	text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Indices of the `k` best scores, best first; equal scores keep document order. */
function topIndices(scores: ArrayLike<number>, k: number): number[] {
	const order = Array.from(scores, (_, i) => i);
	order.sort((a, b) => scores[b] - scores[a] || a - b);
	return order.slice(0, k);
}

/** BM25 over one collection (one conversation's turns): its statistics are the collection's own. */
export class Bm25 {
	private readonly docs: Array<Map<string, number>>;
	private readonly lengths: number[];
	private readonly avgLength: number;
	private readonly df = new Map<string, number>();

	constructor(
		texts: string[],
		private readonly tokenize: (text: string) => string[],
	) {
		this.docs = texts.map((t) => {
			const tf = new Map<string, number>();
			for (const term of tokenize(t)) tf.set(term, (tf.get(term) ?? 0) + 1);
			return tf;
		});
		this.lengths = texts.map((_, i) => [...this.docs[i].values()].reduce((a, b) => a + b, 0));
		this.avgLength = this.lengths.reduce((a, b) => a + b, 0) / Math.max(1, texts.length);
		for (const tf of this.docs)
			for (const term of tf.keys()) this.df.set(term, (this.df.get(term) ?? 0) + 1);
	}

	private idf(term: string): number {
		const n = this.docs.length;
		const df = this.df.get(term) ?? 0;
		return Math.log(1 + (n - df + 0.5) / (df + 0.5));
	}

	/** The `k` best documents (indices) for the query; documents sharing no term score 0 and trail. */
	rank(query: string, k: number): number[] {
		// A repeated query word counts once per occurrence, as in the classic formula's sum over terms.
		const terms = this.tokenize(query).filter((t) => this.df.has(t));
		const scores = new Float64Array(this.docs.length);
		for (const term of terms) {
			const idf = this.idf(term);
			this.docs.forEach((tf, i) => {
				const f = tf.get(term);
				if (!f) return;
				const norm = K1 * (1 - B + (B * this.lengths[i]) / this.avgLength);
				scores[i] += (idf * f * (K1 + 1)) / (f + norm);
			});
		}
		return topIndices(scores, k);
	}
}

/** Cosine similarity in Float64 (the embedders' vectors are normalised, but not all exactly). */
export function cosine64(a: ArrayLike<number>, b: ArrayLike<number>): number {
	let dot = 0;
	let na = 0;
	let nb = 0;
	for (let i = 0; i < a.length; i++) {
		dot += a[i] * b[i];
		na += a[i] * a[i];
		nb += b[i] * b[i];
	}
	return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Every document's exact cosine with the query, and the `k` best (ties broken by turn order). */
export function exactCosine(
	docs: number[][],
	query: number[],
	k: number,
): { top: number[]; scores: Float64Array } {
	const scores = Float64Array.from(docs, (d) => cosine64(d, query));
	return { top: topIndices(scores, k), scores };
}

/**
 * Whether `got` is the exact list up to ties: at every place, the two entries' exact cosines differ
 * by less than `eps` (so entries that tie, or nearly, may swap, also across the k-th place).
 */
export function sameUpToTies(
	got: number[],
	exact: number[],
	scores: ArrayLike<number>,
	eps = 1e-6,
): boolean {
	if (got.length !== exact.length) return false;
	return got.every((g, i) => g === exact[i] || Math.abs(scores[g] - scores[exact[i]]) < eps);
}
