// The documents holding a query's terms, noted while a streamed search takes its statistics (stream.ts):
// where each is and its term counts, so that once the statistics are known the k best are scored from
// these notes instead of reading every segment a second time. The noted chunks themselves are kept too,
// up to CANDIDATE_LIMITS.chunkBytes: then nothing is read again; past that, only the segments of the k
// best (and of those tying the k-th) are read again, for their chunks. Bounded: past
// CANDIDATE_LIMITS.bytes of notes it gives up, and the caller reads every segment again.
import { readInWindow } from '../../common/parallel';
import type { ReadBudget } from '../../common/parallel';
import { chunkHeapBytes, chunkOrder } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import { TopK } from '../chunks/top-k';
import { idfOf, weigh } from './bm25';
import type { ScopeStats } from './bm25';
import { docAt, postingOf } from './segment';
import type { LexicalSegment } from './segment';

export const CANDIDATE_LIMITS = {
	/** Bytes the notes may take (they are held until the statistics are complete). */
	bytes: 6 * 1024 * 1024,
	/** Bytes of noted chunks kept (so the segments of the best need not be read again). */
	chunkBytes: 4 * 1024 * 1024,
};

/** A segment noted: held by the search (tail, open sources) or read again by its key. */
type Source = LexicalSegment | string;

export class Candidates {
	private seg = new Uint32Array(1024);
	private doc = new Uint32Array(1024);
	private len = new Uint32Array(1024);
	private tf: Uint32Array;
	private count = 0;
	/** Each note's chunk, while they take no more than CANDIDATE_LIMITS.chunkBytes (then null). */
	private chunks: IndexedChunk[] | null = [];
	private chunkBytes = 0;
	/** Gave up: more documents hold the terms than the notes may take. */
	full = false;
	readonly sources: Source[] = [];

	constructor(
		private readonly terms: readonly string[],
		private readonly limit = Math.floor(CANDIDATE_LIMITS.bytes / (12 + 4 * terms.length)),
	) {
		this.tf = new Uint32Array(1024 * terms.length);
	}

	/** Notes the in-scope documents of `seg` that hold a term (`held`: the search holds it in memory). */
	add(seg: LexicalSegment, ok: Uint8Array, held: boolean): void {
		if (this.full) return;
		const s = this.sources.push(held ? seg : seg.key) - 1;
		const at = new Int32Array(seg.lengths.length).fill(-1);
		const q = this.terms.length;
		this.terms.forEach((term, j) => {
			const list = postingOf(seg, term);
			if (!list) return;
			for (let i = 0; i < list.length && !this.full; i += 2) {
				const d = list[i];
				if (!ok[d]) continue;
				if (at[d] < 0) at[d] = this.note(s, d, seg.lengths[d], () => docAt(seg, d));
				if (at[d] >= 0) this.tf[at[d] * q + j] = list[i + 1];
			}
		});
	}

	private note(s: number, d: number, length: number, chunkOf: () => IndexedChunk): number {
		if (this.count >= this.limit) {
			this.full = true;
			this.seg = this.doc = this.len = this.tf = new Uint32Array(0);
			this.chunks = null;
			return -1;
		}
		if (this.chunks) {
			const chunk = chunkOf();
			this.chunkBytes += chunkHeapBytes([chunk]);
			if (this.chunkBytes <= CANDIDATE_LIMITS.chunkBytes) this.chunks.push(chunk);
			else this.chunks = null;
		}
		if (this.count === this.seg.length) this.grow();
		this.seg[this.count] = s;
		this.doc[this.count] = d;
		this.len[this.count] = length;
		return this.count++;
	}

	private grow(): void {
		const size = Math.min(this.limit, this.seg.length * 2);
		const more = (a: Uint32Array, n: number) => {
			const b = new Uint32Array(n);
			b.set(a);
			return b;
		};
		this.seg = more(this.seg, size);
		this.doc = more(this.doc, size);
		this.len = more(this.len, size);
		this.tf = more(this.tf, size * this.terms.length);
	}

	/** Each note's BM25 under `stats`, summed term by term in the query's order (as a full pass sums). */
	private scores(stats: ScopeStats): Float64Array {
		const avg = stats.total / stats.n || 1;
		const q = this.terms.length;
		const out = new Float64Array(this.count);
		this.terms.forEach((term, j) => {
			const df = stats.df.get(term) ?? 0;
			if (df === 0) return;
			const idf = idfOf(stats.n, df);
			for (let c = 0; c < this.count; c++) {
				const tf = this.tf[c * q + j];
				if (tf > 0) out[c] += weigh(idf, tf, this.len[c], avg);
			}
		});
		return out;
	}

	/**
	 * The `k` best by their own words (ties by the chunks), their chunks read from the segments that hold
	 * them (at most every segment once, two at a time, within the search's `budget` of bytes read at once
	 * given the segments' `bytesOf`); or undefined when the notes gave up.
	 */
	async best(
		stats: ScopeStats,
		k: number,
		read: (key: string) => Promise<LexicalSegment>,
		reads: { bytesOf?: (key: string) => number; budget?: ReadBudget } = {},
	): Promise<IndexedChunk[] | undefined> {
		if (this.full) return undefined;
		const scores = this.scores(stats);
		// The k-th best score (ties kept in count), found without sorting a copy of every score.
		const values = new TopK(k);
		for (const score of scores) if (values.admits(score)) values.push(score, 0, 0);
		const kth = values.sorted().at(-1)?.score ?? Infinity;
		const wanted = new Map<number, number[]>();
		for (let c = 0; c < this.count; c++) {
			if (scores[c] < kth) continue;
			const list = wanted.get(this.seg[c]);
			if (list) list.push(c);
			else wanted.set(this.seg[c], [c]);
		}
		// Ranked as each segment comes in: however many tie, only the k best chunks are kept.
		const kept: IndexedChunk[] = [];
		const top = new TopK(k, (a, _b, c) => chunkOrder(kept[a], kept[c]));
		const noted = this.chunks;
		if (noted) {
			for (const list of wanted.values())
				for (const c of list)
					if (top.admits(scores[c])) top.push(scores[c], kept.push(noted[c]) - 1, 0);
			return top.sorted().map(({ a }) => kept[a]);
		}
		const sourceOf = (s: number) => this.sources[s];
		await readInWindow(
			[...wanted.keys()],
			{ window: 2, bytes: Infinity, budget: reads.budget },
			(s) => {
				const source = sourceOf(s);
				return typeof source === 'string' ? (reads.bytesOf?.(source) ?? 0) : 0;
			},
			async (s) => {
				const source = sourceOf(s);
				return typeof source === 'string' ? read(source) : source;
			},
			(seg, s) => {
				for (const c of wanted.get(s)!)
					if (top.admits(scores[c])) top.push(scores[c], kept.push(docAt(seg, this.doc[c])) - 1, 0);
			},
		);
		return top.sorted().map(({ a }) => kept[a]);
	}
}
