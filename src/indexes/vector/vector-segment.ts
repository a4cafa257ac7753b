// Segments of the embedded vector index: Float32 rows with their chunks, as stored (a binary file
// with a JSON header) and as searched (an int8 copy of the rows in WebAssembly memory where SIMD is
// available, for a first pass that an exact rerank over the Float32 rows corrects).
import { endianness } from 'node:os';

import { CorruptDocumentError, EmbeddingError } from '../../errors';
import { badChunk, chunkHeapBytes, chunkOrder } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
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

const MAGIC = Buffer.from('LLMVEC01', 'latin1');
const LITTLE_ENDIAN = endianness() === 'LE';

export interface Segment {
	key: string;
	dimensions: number;
	chunks: IndexedChunk[];
	/** count × dimensions, row after row, each row of length 1 (or 0). */
	vectors: Float32Array;
	/** The rows as int8 in WebAssembly memory, where WebAssembly SIMD is available. */
	quant?: QuantizedRows;
	/** Bytes as stored. */
	bytes: number;
}

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
	return seg.bytes + chunkHeapBytes(seg.chunks) + (seg.quant?.bytes ?? 0);
}

/** The picked rows of loaded segments, copied into one block (for a rewritten or merged segment). */
export function copyRows(picks: Array<{ seg: Segment; row: number }>, dims: number): Float32Array {
	const out = new Float32Array(picks.length * dims);
	picks.forEach((p, i) => out.set(rowOf(p.seg, p.row), i * dims));
	return out;
}

/** A decoded segment made ready to search: an int8 copy of its rows in WebAssembly memory where it can. */
export function prepare(seg: Segment): Segment {
	if (seg.quant || !simdAvailable()) return seg;
	return { ...seg, quant: new QuantizedRows(seg.vectors, seg.chunks.length, seg.dimensions) };
}

/**
 * Encodes a segment: magic, header length, JSON header (chunks, and `extra` fields of a segment of
 * another kind: a cell tier's bucket), padding to 4 bytes, Float32 LE rows.
 */
export function encodeSegment(
	dimensions: number,
	chunks: IndexedChunk[],
	vectors: Float32Array,
	extra: Record<string, unknown> = {},
): Buffer {
	const fields = { ...extra, dimensions, count: chunks.length, chunks };
	const header = Buffer.from(JSON.stringify(fields), 'utf8');
	const start = MAGIC.length + 4 + header.length;
	const pad = (4 - (start % 4)) % 4;
	const out = Buffer.alloc(start + pad + vectors.length * 4);
	MAGIC.copy(out, 0);
	out.writeUInt32LE(header.length, MAGIC.length);
	header.copy(out, MAGIC.length + 4);
	const body = start + pad;
	if (LITTLE_ENDIAN)
		Buffer.from(vectors.buffer, vectors.byteOffset, vectors.byteLength).copy(out, body);
	else for (let i = 0; i < vectors.length; i++) out.writeFloatLE(vectors[i], body + 4 * i);
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

/**
 * Decodes a segment; anything inconsistent is a CorruptDocumentError naming its key. `extra` checks
 * the header's other fields (a cell tier's bucket), and may call `fail`.
 */
export function decodeSegment(
	key: string,
	bytes: Uint8Array,
	extra?: (header: Record<string, unknown>, count: number, fail: (detail: string) => never) => void,
): Segment {
	const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	const fail = (detail: string): never => {
		throw new CorruptDocumentError(key, detail);
	};
	if (buf.length < MAGIC.length + 4 || !buf.subarray(0, MAGIC.length).equals(MAGIC))
		fail('not a vector segment');
	const headerLength = buf.readUInt32LE(MAGIC.length);
	const start = MAGIC.length + 4 + headerLength;
	if (start > buf.length) fail('its header is cut short');
	let header: { dimensions?: unknown; count?: unknown; chunks?: unknown };
	try {
		header = JSON.parse(buf.subarray(MAGIC.length + 4, start).toString('utf8'));
	} catch {
		return fail('its header is not JSON');
	}
	const { dimensions, count, chunks } = header;
	if (!Number.isSafeInteger(dimensions) || (dimensions as number) < 1) fail('bad dimensions');
	if (!Array.isArray(chunks) || chunks.length !== count || chunks.length === 0)
		fail('bad chunk list');
	const dims = dimensions as number;
	const list = chunks as IndexedChunk[];
	extra?.(header as Record<string, unknown>, list.length, fail);
	list.forEach((c, i) => {
		const bad = badChunk(c);
		if (bad) fail(`chunks.${i}.${bad}: not valid`);
	});
	const body = start + ((4 - (start % 4)) % 4);
	const n = list.length * dims;
	if (buf.length - body !== n * 4) fail(`${buf.length - body} bytes of vectors, expected ${n * 4}`);
	let vectors: Float32Array;
	if (LITTLE_ENDIAN && (buf.byteOffset + body) % 4 === 0)
		vectors = new Float32Array(buf.buffer, buf.byteOffset + body, n);
	else {
		vectors = new Float32Array(n);
		for (let i = 0; i < n; i++) vectors[i] = buf.readFloatLE(body + 4 * i);
	}
	const bad = badRow(vectors, dims);
	if (bad >= 0) fail(`row ${bad} is not a unit vector of finite numbers`);
	return { key, dimensions: dims, chunks: list, vectors, bytes: buf.length };
}

/** How far a stored row's squared length may be from 1 (Float32 rounding of a normalised row). */
const UNIT_TOLERANCE = 1e-3;

/**
 * The first row that is not as normaliseRows writes rows (unit length, or all zeros for an embedder's
 * zeros), or -1. A row altered on storage would otherwise rank by NaN or outweigh every other row.
 */
function badRow(vectors: Float32Array, dims: number): number {
	for (let r = 0, at = 0; at < vectors.length; r++, at += dims) {
		let norm = 0;
		for (let j = at; j < at + dims; j++) norm += vectors[j] * vectors[j];
		// NaN and Infinity fail both comparisons.
		if (!(norm === 0 || Math.abs(norm - 1) <= UNIT_TOLERANCE)) return r;
	}
	return -1;
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
			chunkOrder(segs[s1].chunks[r1], segs[s2].chunks[r2]);
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
	const { chunks, dimensions: dims } = seg;
	const quant = query && seg.quant;
	if (!quant) {
		for (let r = 0; r < chunks.length; r++)
			if (mask[r] !== 0) into.offer(s, r, dot(seg.vectors, r * dims, q, dims), 0);
		return;
	}
	const ints = quant.dots(query, mask);
	const { scale, error, reach } = quant;
	const { scale: t, norm, error: f } = query;
	for (let r = 0; r < chunks.length; r++)
		if (mask[r] !== 0)
			into.offer(s, r, ints[r] * scale[r] * t, error[r] * norm + reach[r] * f + ROUNDING);
}
