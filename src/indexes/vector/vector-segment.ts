// Segments of the embedded vector index: Float32 rows with their chunks, as searched (an int8 copy of
// the rows in WebAssembly memory where SIMD is available, for a first pass that an exact rerank over
// the Float32 rows corrects). How they are stored: stored-vectors.ts.
import { EmbeddingError } from '../../errors';
import { chunkHeapBytes, chunkOrder } from '../chunks/chunk';
import type { IndexedChunk, OrderFields } from '../chunks/chunk';
import { isUnfiltered, passes } from '../chunks/filter';
import type { ChunkFilter } from '../chunks/filter';
import { TopK } from '../chunks/top-k';
import { QuantizedRows, quantizeQuery, simdAvailable } from './simd';
import type { QuantizedQuery } from './simd';

export interface VectorMatch extends IndexedChunk {
	/** Cosine similarity with the query, −1 … 1. */
	score: number;
	/** The chunk's normalised vector (the embedded index gives it; for near-duplicate checks). */
	vector?: Float32Array;
}

/** An add writes at most this many vectors per segment. */
export const SEGMENT_MAX_VECTORS = 1024;
/** Past this many segments, small neighbouring segments are merged. */
export const MAX_SEGMENTS = 16;
/** Segments below this many vectors are merged (into segments of up to about twice as many). */
export const COMPACT_BELOW = 4096;
/** Search results at most (top K). */
export const MAX_TOP_K = 1000;

/** What orders a row among rows alike (chunkOrder), from a table; its chunk decoded when asked for. */
export interface RowChunk extends OrderFields {
	chunk(): IndexedChunk;
}

/** What a segment read in blocks offers beside its `chunks` (which decode every block). */
export interface LazyRows {
	/** Chunk `r`, decoding only its block. */
	at(r: number): IndexedChunk;
	/** Block `b`'s chunks (rows b × BLOCK on), decoded and checked, not kept: for a reader that passes once. */
	block(b: number): IndexedChunk[];
	/** What orders row `r` among rows alike (chunkOrder), from the table: its block decoded for its ID only. */
	key(r: number): RowChunk;
	/**
	 * The keys of rows `rows`, each holding a copy of its block only (rows of one block share one), not
	 * the segment: what a search keeps of a segment past its turn.
	 */
	detach(rows: readonly number[]): RowChunk[];
	/** Each row's message (messageHash of its ID) and chunk index, from the segment's table. */
	messages: Uint32Array;
	chunkIndexes: Uint32Array;
	/** The heap its chunks take once decoded, about. */
	heap: number;
}

export interface Segment {
	key: string;
	dimensions: number;
	/** Every chunk (of a segment read in blocks: every block decoded; chunkAt decodes one). */
	chunks: IndexedChunk[];
	/** count × dimensions, row after row, each row of length 1 (or 0). */
	vectors: Float32Array;
	/** The rows as int8 in WebAssembly memory, where WebAssembly SIMD is available. */
	quant?: QuantizedRows;
	/** Bytes as stored. */
	bytes: number;
	/** Present when it was read in blocks (stored-vectors.ts). */
	lazy?: LazyRows;
}

/**
 * Which rows pass the filter (1) and which do not (0). Without a filter no chunk is decoded: a
 * segment read in blocks decodes only those a search returns.
 */
export function rowMask(seg: Segment, filter: ChunkFilter): Uint8Array {
	if (isUnfiltered(filter)) return new Uint8Array(rowCount(seg)).fill(1);
	return Uint8Array.from(seg.chunks, (c) => (passes(c, filter) ? 1 : 0));
}

/** Its rows. */
export const rowCount = (seg: Segment) => seg.vectors.length / seg.dimensions;

/** The chunk of row r (of a segment read in blocks, decoding only its block). */
export const chunkAt = (seg: Segment, r: number): IndexedChunk =>
	seg.lazy ? seg.lazy.at(r) : seg.chunks[r];

/** What chunkOrder compares of row r (of a segment read in blocks, from its table). */
export const rowKey = (seg: Segment, r: number): OrderFields =>
	seg.lazy ? seg.lazy.key(r) : seg.chunks[r];

/** Row r of a segment (its dimensions floats). */
export function rowOf(seg: Segment, r: number): Float32Array {
	return seg.vectors.subarray(r * seg.dimensions, (r + 1) * seg.dimensions);
}

/**
 * What a decoded segment holds in memory: its stored bytes (the Float32 rows are a view of them), its
 * chunks once parsed (without them, a segment of 64-dimension rows weighed 0.65 of what it held), and
 * the int8 rows.
 */
export function weightOf(seg: Segment): number {
	return seg.bytes + (seg.lazy?.heap ?? chunkHeapBytes(seg.chunks)) + (seg.quant?.bytes ?? 0);
}

/** The picked rows of loaded segments, copied into one block (for a rewritten or merged segment). */
export function copyRows(picks: Array<{ seg: Segment; row: number }>, dims: number): Float32Array {
	const out = new Float32Array(picks.length * dims);
	picks.forEach((p, i) => out.set(rowOf(p.seg, p.row), i * dims));
	return out;
}

/**
 * A decoded segment made ready to search: an int8 copy of its rows in WebAssembly memory where it can.
 * (A copy by descriptors: spreading it would decode every block of a segment read in blocks.)
 */
export function prepare(seg: Segment): Segment {
	if (seg.quant || !simdAvailable()) return seg;
	const out = Object.defineProperties({}, Object.getOwnPropertyDescriptors(seg)) as Segment;
	out.quant = new QuantizedRows(seg.vectors, rowCount(seg), seg.dimensions);
	return out;
}

/**
 * Where the segments of an add end: at most SEGMENT_MAX_VECTORS rows each, and no more than `maxBytes`
 * (a row's floats and its chunk as stored), one row at least. An index whose searches read its
 * segments one after another (the base-wide one) keeps each small enough to hold, whatever the
 * dimensions.
 */
export function partsOf(chunks: readonly IndexedChunk[], dims: number, maxBytes: number): number[] {
	const ends: number[] = [];
	let bytes = 0;
	let start = 0;
	for (let i = 0; i < chunks.length; i++) {
		const row = Number.isFinite(maxBytes)
			? 4 * dims + Buffer.byteLength(JSON.stringify(chunks[i]))
			: 0;
		if (i > start && (i - start >= SEGMENT_MAX_VECTORS || bytes + row > maxBytes)) {
			ends.push(i);
			start = i;
			bytes = 0;
		}
		bytes += row;
	}
	ends.push(chunks.length);
	return ends;
}

/** Copies rows into one normalised Float32Array, checking count, dimensions and numbers. */
export function normaliseRows(rows: unknown, count: number, dimensions?: number): Float32Array {
	if (!Array.isArray(rows) || rows.length !== count)
		throw new EmbeddingError(
			`expected ${count} vectors, got ${Array.isArray(rows) ? rows.length : typeof rows}`,
		);
	const dims = dimensions ?? (rows[0] as ArrayLike<number> | undefined)?.length ?? 0;
	if (!Number.isSafeInteger(dims) || dims < 1) throw new EmbeddingError('a vector without numbers');
	const out = new Float32Array(count * dims);
	rows.forEach((row: unknown, r) => {
		const v = row as ArrayLike<number>;
		if (!v || typeof v !== 'object' || v.length !== dims)
			throw new EmbeddingError(`vector ${r} has ${v?.length ?? 'no'} dimensions, not ${dims}`);
		let norm = 0;
		for (let j = 0; j < dims; j++) {
			const x = v[j];
			if (typeof x !== 'number' || !Number.isFinite(x))
				throw new EmbeddingError(`vector ${r} holds ${String(x)} at ${j}`);
			norm += x * x;
		}
		const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
		for (let j = 0; j < dims; j++) out[r * dims + j] = v[j] * scale;
	});
	return out;
}

/** Dot product of row `offset` of `v` with `q`, summed in Float64 (4 accumulators: about twice as fast as one). */
export function dot(v: Float32Array, offset: number, q: Float32Array, dims: number): number {
	const row = v.subarray(offset, offset + dims);
	let s0 = 0;
	let s1 = 0;
	let s2 = 0;
	let s3 = 0;
	let j = 0;
	for (; j + 3 < dims; j += 4) {
		s0 += row[j] * q[j];
		s1 += row[j + 1] * q[j + 1];
		s2 += row[j + 2] * q[j + 2];
		s3 += row[j + 3] * q[j + 3];
	}
	for (; j < dims; j++) s0 += row[j] * q[j];
	return s0 + s1 + s2 + s3;
}

/**
 * Widens every first-pass bound for the Float64 rounding around it (of the int8 products' scaling,
 * of the bound itself, and of dot()): each is below 1e-12 at thousands of dimensions.
 */
const ROUNDING = 1e-9;

/**
 * The k best rows of `segs` for `q` (scores as dot() gives them; ties: by chunkOrder), as
 * TopK.sorted() names them (a: segment, b: row). Rows count when `mask` marks them. With WebAssembly SIMD, a first pass of int8 dot products gives each row
 * a range its exact score lies in (see scanSegment); every row whose range reaches the k-th best
 * lower end is scored again exactly. A row below that has k rows surely better than it, so it cannot
 * be among the k best: the result is the one an exact pass over every row gives.
 */
export function topRows(
	segs: Segment[],
	masks: Uint8Array[],
	q: Float32Array,
	k: number,
): Array<{ score: number; a: number; b: number }> {
	const query = simdAvailable() ? quantizeQuery(q) : undefined;
	const candidates = new Candidates(k);
	segs.forEach((seg, s) => scanSegment(seg, s, masks[s], q, query, candidates));
	return candidates.best(segs, q);
}

/** The rows of one search as ranges (score ± bound); then the ones that may be among the k best, exactly. */
class Candidates {
	private readonly lower: TopK;
	/** The k-th best lower end so far. */
	private floor = -Infinity;
	/** Segment, row and upper end of each row whose upper end reached `floor` when offered. */
	private readonly picked: number[] = [];

	constructor(private readonly k: number) {
		this.lower = new TopK(k);
	}

	/** Row r of segment s, its exact score within score ± bound. */
	offer(s: number, r: number, score: number, bound: number): void {
		if (score - bound > this.floor) {
			this.lower.push(score - bound, s, r);
			this.floor = this.lower.min;
		}
		if (score + bound >= this.floor) this.picked.push(s, r, score + bound);
	}

	/** The k best rows, scored exactly: those picked whose upper end reaches the final floor. */
	best(segs: Segment[], q: Float32Array): Array<{ score: number; a: number; b: number }> {
		// Ties by the chunks themselves: the same k best however the rows are split into segments.
		const tie = (s1: number, r1: number, s2: number, r2: number) =>
			chunkOrder(rowKey(segs[s1], r1), rowKey(segs[s2], r2));
		const top = new TopK(this.k, tie);
		const picked = this.picked;
		for (let i = 0; i < picked.length; i += 3) {
			if (picked[i + 2] < this.floor) continue;
			const seg = segs[picked[i]];
			const score = dot(seg.vectors, picked[i + 1] * seg.dimensions, q, seg.dimensions);
			if (top.admits(score)) top.push(score, picked[i], picked[i + 1]);
		}
		return top.sorted();
	}
}

/**
 * Offers one segment's rows: int8 scores with their bound, or exact scores (bound 0) where the
 * segment has no int8 rows or SIMD is off.
 *
 * Bound: with row x ≈ x̂·s (error e) and query q ≈ q̂·t (error f), x·q − (x̂·q̂)·s·t = e·q + (x̂·s)·f,
 * so |x·q − (x̂·q̂)·s·t| ≤ ‖e‖·‖q‖ + ‖x̂·s‖·‖f‖ (Cauchy–Schwarz, twice); x̂·q̂ is exact in i32.
 */
function scanSegment(
	seg: Segment,
	s: number,
	mask: Uint8Array,
	q: Float32Array,
	query: QuantizedQuery | undefined,
	into: Candidates,
): void {
	const { dimensions: dims } = seg;
	const n = rowCount(seg);
	const quant = query && seg.quant;
	if (!quant) {
		for (let r = 0; r < n; r++)
			if (mask[r] !== 0) into.offer(s, r, dot(seg.vectors, r * dims, q, dims), 0);
		return;
	}
	const ints = quant.dots(query, mask);
	const { scale, error, reach } = quant;
	const { scale: t, norm, error: f } = query;
	for (let r = 0; r < n; r++)
		if (mask[r] !== 0)
			into.offer(s, r, ints[r] * scale[r] * t, error[r] * norm + reach[r] * f + ROUNDING);
}
