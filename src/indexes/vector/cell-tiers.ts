// Cell tiers of a vector index too large to read whole (a Memory Base's base-wide index): the rows of
// many settled segments regrouped by their cell (codebook.ts), in buckets of neighbouring cells, so a
// search reads the buckets of the cells nearest its query instead of every segment. A bucket is stored
// as a vector segment (its rows, their chunks) with each row's cell. Cells are numbered so that a
// bucket's cells are a range, and buckets split and merge in order: a merge of two tiers builds each
// bucket from the few buckets of each that may hold its cells, one bucket at a time. When the rows of a
// range of cells would make a bucket too large (large vectors, or one crowded cell), every range is
// split among as many buckets by its rows' chunk IDs, so no bucket a search or a merge holds outgrows
// BUCKET_BYTES, whatever the dimensions, and a small tier still has few buckets.
import { randomBytes } from 'node:crypto';

import { fnv1a32 } from '../../common/hash';
import { CorruptDocumentError, IndexDamagedError } from '../../errors';
import type { MemoryStorage } from '../../store/storage';
import { tierPartKey, writeParts } from '../chunks/tiering';
import type { PartNames } from '../chunks/tiering';
import type { IndexedChunk } from '../chunks/chunk';
import type { Codebook } from './codebook';
import { cellCount, cellOf } from './codebook';
import type { SegmentRef } from './manifest';
import { decodeSegment, encodeSegment } from './stored-vectors';
import type { Segment } from './vector-segment';

/** A tier as the manifest lists it. */
export interface CellTier {
	id: string;
	/** The key of the codebook its rows were placed with. */
	codebook: string;
	/** Segments it was built from. */
	segments: number;
	rows: number;
	/**
	 * Buckets: its ranges of cells (a power of two, at most the codebook's cells) times its split.
	 */
	buckets: number;
	bytes: number;
	/** Buckets per range of cells, a power of two (absent: 1, each bucket holds whole cells). */
	split?: number;
	/** Rows of its fullest range of cells (absent in tiers built before it was kept). */
	largest?: number;
	/** Buckets a Forget wrote again, by number: each one's version (chunks/tiering.ts: PartNames). */
	versions?: PartNames['versions'];
}

/** A decoded bucket: its rows as a segment, and each row's cell. */
export interface CellBucket {
	segment: Segment;
	cells: Uint16Array;
}

/** Rows a bucket gets, about. */
export const BUCKET_ROWS = 2048;

/**
 * Bytes of vectors a bucket holds, at most, about: BUCKET_ROWS rows of 1,536 dimensions. Past it, a
 * cell's rows are split among several buckets (a search reads one at a time, read-groups.ts).
 */
export const BUCKET_BYTES = 12 * 2 ** 20;

/** Buckets for `rows` rows of a codebook of `cells` cells: a power of two, about BUCKET_ROWS rows each. */
export function bucketsFor(rows: number, cells: number, per = BUCKET_ROWS): number {
	let b = 1;
	while (b * per < rows && b < cells) b *= 2;
	return b;
}

/** The bucket of a cell among `buckets` (the cell number's high bits). */
export const bucketOfCell = (cell: number, cells: number, buckets: number) =>
	Math.floor((cell * buckets) / cells);

/**
 * A new tier's ID. A split tier's is longer: versions that do not know splits refuse its manifest
 * instead of reading, merging or forgetting one bucket of each cell as if it held the whole cell.
 */
export const newCellTierId = (split = 1) => randomBytes(split > 1 ? 10 : 9).toString('hex');

/** A tier's ranges of cells: its buckets, less its split. */
export const rangesOf = (tier: CellTier) => tier.buckets / (tier.split ?? 1);

/**
 * The bucket of a tier holding a row of `cell` whose chunk is `id`: in a split tier, its range's part
 * that FNV-1a of the ID picks (fixed forever: a Forget finds the row where a build put it).
 */
export function bucketOfRow(tier: CellTier, cells: number, cell: number, id: string): number {
	const split = tier.split ?? 1;
	const range = bucketOfCell(cell, cells, rangesOf(tier));
	return split === 1 ? range : range * split + (fnv1a32(id) & (split - 1));
}

/** The buckets of a tier that hold rows of `cell`. */
export function bucketsOfCell(tier: CellTier, cells: number, cell: number): number[] {
	const split = tier.split ?? 1;
	const range = bucketOfCell(cell, cells, rangesOf(tier));
	return Array.from({ length: split }, (_, s) => range * split + s);
}

/** Whether bucket `b` of a tier holds rows of `cell`. */
const holdsCell = (tier: CellTier, cells: number, b: number, cell: number) =>
	bucketOfCell(cell, cells, rangesOf(tier)) === Math.floor(b / (tier.split ?? 1));

/**
 * How a tier of `ranges` ranges of cells splits them: not at all while the fullest range's vectors
 * (`largest` rows, at most) fit in `maxBytes`, else every range in as many buckets as it needs.
 */
export function layoutFor(
	ranges: number,
	dims: number,
	largest: number,
	maxBytes = BUCKET_BYTES,
): { buckets: number; split?: number } {
	let split = 1;
	while ((largest / split) * 4 * dims > maxBytes && split < 2 ** 10) split *= 2;
	return split > 1 ? { buckets: ranges * split, split } : { buckets: ranges };
}

/**
 * A bound on the rows a range of `ranges` (a power of two) takes from a tier: its fullest range's
 * (or, built before that was kept, twice its average), times the tier's ranges one of those covers.
 */
function largestIn(tier: CellTier, ranges: number): number {
	const own = rangesOf(tier);
	const fullest = tier.largest ?? Math.ceil((2 * tier.rows) / own);
	return Math.min(tier.rows, fullest * Math.max(1, own / ranges));
}

/** Where a tier's bucket is stored (beside the segments, so clearing the index clears it). */
export const cellBucketKey = (segmentsPrefix: string, tier: PartNames, b: number) =>
	tierPartKey(segmentsPrefix, 'cells', tier, b, 'vcl');

export const cellBucketKeys = (segmentsPrefix: string, tier: CellTier) =>
	Array.from({ length: tier.buckets }, (_, b) => cellBucketKey(segmentsPrefix, tier, b));

export function encodeCellBucket(
	dims: number,
	chunks: IndexedChunk[],
	vectors: Float32Array,
	cells: ArrayLike<number>,
): Buffer {
	return encodeSegment(dims, chunks, vectors, { kind: 'cells' }, cells);
}

/**
 * A stored bucket, checked: a vector segment whose every row names a cell of this bucket. Anything
 * else is a CorruptDocumentError naming the key.
 */
export function decodeCellBucket(
	key: string,
	bytes: Uint8Array,
	tier: CellTier,
	b: number,
	cells: number,
): CellBucket {
	let out: Uint16Array | undefined;
	const segment = decodeSegment(key, bytes, (header, count, fail, tags) => {
		// Each row's cell: its tag, or (stored before tags) a list in the header.
		const list: ArrayLike<unknown> | undefined =
			tags ?? (Array.isArray(header.cells) ? header.cells : undefined);
		if (header.kind !== 'cells' || !list || list.length !== count) return fail('not a cell bucket');
		out = new Uint16Array(count);
		for (let r = 0; r < count; r++) {
			const cell = list[r];
			const ok = Number.isInteger(cell) && (cell as number) >= 0 && (cell as number) < cells;
			if (!ok || !holdsCell(tier, cells, b, cell as number))
				fail(`row ${r} names cell ${String(cell)}, not one of this bucket`);
			out[r] = cell as number;
		}
	});
	return { segment, cells: out! };
}

/** Where a tier's buckets are, and how its segments are read. */
export interface CellFiles {
	readonly storage: MemoryStorage;
	readonly segmentsPrefix: string;
	readonly kbId: string;
	readSegment(ref: SegmentRef, options?: { quantize?: boolean }): Promise<Segment | null>;
	/** A bucket for a search (kept for the next within the cache's bounds); null when not held. */
	readCellBucket(key: string, decode: (body: Uint8Array) => Segment): Promise<Segment | null>;
	/** Bytes of vectors a bucket it writes holds, at most (BUCKET_BYTES unless set). */
	readonly bucketBytes?: number;
}

/** Rows gathered for one bucket. */
class Gathered {
	chunks: IndexedChunk[] = [];
	rows: Float32Array[] = [];
	cells: number[] = [];

	add(chunk: IndexedChunk, row: Float32Array, cell: number) {
		this.chunks.push(chunk);
		this.rows.push(row);
		this.cells.push(cell);
	}

	encode(dims: number): Buffer {
		const vectors = new Float32Array(this.rows.length * dims);
		this.rows.forEach((r, i) => vectors.set(r, i * dims));
		return encodeCellBucket(dims, this.chunks, vectors, this.cells);
	}
}

/**
 * Writes a new tier's buckets (listed nowhere yet) and notes its fullest range of cells; on a failure,
 * deletes those it may have written.
 */
async function writeBuckets(
	files: CellFiles,
	tier: CellTier,
	dims: number,
	bucket: (b: number) => Promise<Gathered>,
): Promise<CellTier> {
	const perRange = new Uint32Array(rangesOf(tier));
	const write = async (b: number) => {
		const got = await bucket(b);
		perRange[Math.floor(b / (tier.split ?? 1))] += got.chunks.length;
		const body = got.encode(dims);
		await files.storage.put(cellBucketKey(files.segmentsPrefix, tier, b), body, {
			ifVersion: null,
		});
		return body.byteLength;
	};
	const keys = cellBucketKeys(files.segmentsPrefix, tier);
	tier.bytes += await writeParts(tier.buckets, write, keys, (k) => files.storage.delete(k));
	tier.largest = perRange.reduce((m, n) => Math.max(m, n), 0);
	return tier;
}

/** A tier entry of `ranges` ranges of cells, split as its fullest (`largest` rows) needs. */
function newTier(
	files: CellFiles,
	cb: Codebook,
	fields: { codebook: string; segments: number; rows: number },
	ranges: number,
	largest: number,
): CellTier {
	const layout = layoutFor(ranges, cb.dimensions, largest, files.bucketBytes);
	return { id: newCellTierId(layout.split), ...fields, ...layout, bytes: 0 };
}

/** A new tier of these segments (their rows held while it is built), its buckets written. */
export async function buildCellTier(
	files: CellFiles,
	cb: Codebook,
	refs: SegmentRef[],
	bucketRows = BUCKET_ROWS,
	codebook = '',
): Promise<CellTier> {
	const cells = cellCount(cb);
	const all = new Gathered();
	for (const ref of refs) {
		const seg = await files.readSegment(ref, { quantize: false });
		if (!seg) throw new IndexDamagedError(files.kbId, [ref.key]);
		const d = seg.dimensions;
		seg.chunks.forEach((chunk, r) => {
			const row = seg.vectors.subarray(r * d, (r + 1) * d);
			all.add(chunk, row, cellOf(cb, row));
		});
	}
	const rows = all.chunks.length;
	const ranges = bucketsFor(rows, cells, bucketRows);
	const perRange = new Uint32Array(ranges);
	for (const cell of all.cells) perRange[bucketOfCell(cell, cells, ranges)]++;
	const largest = perRange.reduce((m, n) => Math.max(m, n), 0);
	const tier = newTier(files, cb, { codebook, segments: refs.length, rows }, ranges, largest);
	const gathered = Array.from({ length: tier.buckets }, () => new Gathered());
	all.chunks.forEach((chunk, i) => {
		const cell = all.cells[i];
		gathered[bucketOfRow(tier, cells, cell, chunk.id)].add(chunk, all.rows[i], cell);
	});
	return writeBuckets(files, tier, cb.dimensions, async (b) => gathered[b]);
}

/** The cells bucket `b` of a tier holds: from, to (excluded). */
function cellsOfBucket(tier: CellTier, cells: number, b: number): [number, number] {
	const r = Math.floor(b / (tier.split ?? 1));
	const ranges = rangesOf(tier);
	return [Math.ceil((r * cells) / ranges), Math.ceil(((r + 1) * cells) / ranges)];
}

/**
 * The buckets of `from` that may hold rows of bucket `b` of `to`: those of its cells, and of a split
 * cell only those whose share of the chunk IDs meets b's (both splits are powers of two).
 */
export function cellSources(from: CellTier, to: CellTier, cells: number, b: number): number[] {
	const [lo, hi] = cellsOfBucket(to, cells, b);
	const theirs = from.split ?? 1;
	const mine = to.split ?? 1;
	const m = Math.min(theirs, mine);
	const out = new Set<number>();
	for (let c = lo; c < hi; c++)
		for (const s of bucketsOfCell(from, cells, c))
			if (theirs === 1 || (s % theirs) % m === (b % mine) % m) out.add(s);
	return [...out].sort((x, y) => x - y);
}

/** A bucket of a tier being merged is not held (another process replaced the tier, or it was lost). */
export class CellTierGone extends Error {}

/** One tier of two (the segments of `a`, then those of `b`), its buckets written bucket by bucket. */
export async function mergeCellTiers(
	files: CellFiles,
	cb: Codebook,
	a: CellTier,
	b: CellTier,
): Promise<CellTier> {
	const cells = cellCount(cb);
	const rows = a.rows + b.rows;
	const ranges = bucketsFor(rows, cells);
	const fields = { codebook: a.codebook, segments: a.segments + b.segments, rows };
	const tier = newTier(files, cb, fields, ranges, largestIn(a, ranges) + largestIn(b, ranges));
	return writeBuckets(files, tier, cb.dimensions, async (t) => {
		const out = new Gathered();
		for (const from of [a, b])
			for (const s of cellSources(from, tier, cells, t)) {
				const key = cellBucketKey(files.segmentsPrefix, from, s);
				const got = await files.storage.get(key);
				if (!got) throw new CellTierGone();
				const { segment, cells: rowCells } = decodeCellBucket(key, got.body, from, s, cells);
				const d = segment.dimensions;
				segment.chunks.forEach((chunk, r) => {
					// A row out of its place would be missed by the buckets meant to take it.
					if (bucketOfRow(from, cells, rowCells[r], chunk.id) !== s)
						throw new CorruptDocumentError(key, `row ${r} is not of this bucket`);
					if (bucketOfRow(tier, cells, rowCells[r], chunk.id) !== t) return;
					out.add(chunk, segment.vectors.subarray(r * d, (r + 1) * d), rowCells[r]);
				});
			}
		return out;
	});
}
