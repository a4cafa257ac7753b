// Cell tiers of a vector index too large to read whole (a Memory Base's base-wide index): the rows of
// many settled segments regrouped by their cell (codebook.ts), in buckets of neighbouring cells, so a
// search reads the buckets of the cells nearest its query instead of every segment. A bucket is stored
// as a vector segment (its rows, their chunks) with each row's cell. Cells are numbered so that a
// bucket's cells are a range, and buckets split and merge in order: a merge of two tiers builds each
// bucket from the few buckets of each that may hold its cells, one bucket at a time. A range whose rows
// would make a bucket too large (large vectors, or one crowded cell) is split among as many buckets by
// its rows' chunk IDs (cell-layout.ts), so no bucket a search or a merge holds outgrows BUCKET_BYTES,
// whatever the dimensions, and a small tier still has few buckets.
import { randomBytes } from 'node:crypto';

import { CorruptDocumentError, IndexDamagedError } from '../../errors';
import type { MemoryStorage } from '../../store/storage';
import { tierPartKey, writeParts } from '../chunks/tiering';
import type { PartNames } from '../chunks/tiering';
import type { NamedParts } from '../chunks/listed';
import type { IndexedChunk } from '../chunks/chunk';
import type { Codebook } from './codebook';
import { cellCount, cellOf } from './codebook';
import {
	COUNTED_CELLS,
	countsCells,
	rangeLayout,
	rangeRows,
	rangesOf,
	sourcesOf,
	splitFor,
	TierLayout,
} from './cell-layout';
import type { SegmentRef } from './manifest';
import { encodeRows, encodeSegment } from './segment-writer';
import { decodeSegment } from './stored-vectors';
import type { Segment } from './vector-segment';
import type { SearchReads } from '../chunks/search-reads';

/** A tier as the manifest lists it. */
export interface CellTier {
	id: string;
	/** The key of the codebook its rows were placed with. */
	codebook: string;
	/** Segments it was built from. */
	segments: number;
	rows: number;
	/** Buckets: its ranges of cells (a power of two, at most the codebook's cells), each split or not. */
	buckets: number;
	bytes: number;
	/** Written before per-range splits: buckets of every range of cells, a power of two (absent: 1). */
	split?: number;
	/** Ranges of cells of a per-range tier (a power of two); its buckets are these plus its splits'. */
	ranges?: number;
	/** A per-range tier's ranges that split, and in how many buckets each: [range, split], in order. */
	parts?: Array<[number, number]>;
	/** Rows of its fullest range of cells (absent in tiers built before it was kept). */
	largest?: number;
	/** Rows in each cell, at most, when its codebook has at most COUNTED_CELLS cells: a merge's bounds. */
	cellRows?: number[];
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
 * range's rows are split among several buckets (a search reads one at a time, chunks/search-reads.ts).
 */
export const BUCKET_BYTES = 12 * 2 ** 20;

/** Buckets for `rows` rows of a codebook of `cells` cells: a power of two, about BUCKET_ROWS rows each. */
export function bucketsFor(rows: number, cells: number, per = BUCKET_ROWS): number {
	let b = 1;
	while (b * per < rows && b < cells) b *= 2;
	return b;
}

/**
 * A new tier's ID. A split tier's is longer (20 digits; 22 for one split per range): versions that do
 * not know its layout refuse its manifest instead of reading, merging or forgetting one bucket of a
 * range as if it held the whole range.
 */
export const newCellTierId = (split = 1, perRange = false) =>
	randomBytes(perRange ? 11 : split > 1 ? 10 : 9).toString('hex');

/** The bucket of a tier holding a row of `cell` whose chunk is `id` (cell-layout.ts). */
export const bucketOfRow = (tier: CellTier, cells: number, cell: number, id: string) =>
	new TierLayout(tier, cells).bucketOfRow(cell, id);

/** The buckets of a tier that hold rows of `cell`. */
export const bucketsOfCell = (tier: CellTier, cells: number, cell: number) =>
	new TierLayout(tier, cells).bucketsOfCell(cell);

/**
 * How a tier of `ranges` ranges of cells splits them, every range alike: not at all while the fullest
 * range's vectors (`largest` rows, at most) fit in `maxBytes`, else in as many buckets as it needs.
 * For merges of tiers that do not count their cells' rows.
 */
export function layoutFor(
	ranges: number,
	dims: number,
	largest: number,
	maxBytes = BUCKET_BYTES,
): { buckets: number; split?: number } {
	const split = splitFor(largest, dims, maxBytes);
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

/** How a cell tier's buckets are named. */
const CELL_PARTS = { kind: 'cells', ext: 'vcl' } as const;

/** Where a tier's bucket is stored (beside the segments, so clearing the index clears it). */
export const cellBucketKey = (segmentsPrefix: string, tier: PartNames, b: number) =>
	tierPartKey(segmentsPrefix, CELL_PARTS.kind, tier, b, CELL_PARTS.ext);

/** A tier's buckets, by tier (chunks/listed.ts). */
export const cellParts = (tier: CellTier): NamedParts => ({
	...CELL_PARTS,
	tier,
	count: tier.buckets,
});

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
	const layout = new TierLayout(tier, cells);
	const segment = decodeSegment(key, bytes, (header, count, fail, tags) => {
		// Each row's cell: its tag, or (stored before tags) a list in the header.
		const list: ArrayLike<unknown> | undefined =
			tags ?? (Array.isArray(header.cells) ? header.cells : undefined);
		if (header.kind !== 'cells' || !list || list.length !== count) return fail('not a cell bucket');
		out = new Uint16Array(count);
		for (let r = 0; r < count; r++) {
			const cell = list[r];
			const ok = Number.isInteger(cell) && (cell as number) >= 0 && (cell as number) < cells;
			if (!ok || !layout.holdsCell(b, cell as number))
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
	/** Its search's reads: what its readers may hold at once, together (chunks/search-reads.ts). */
	readonly reads?: SearchReads;
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

	/** Its rows stored (each row copied once, into the stored bytes). */
	encode(dims: number): Buffer {
		const rows = this.chunks.map((chunk, i) => ({
			chunk,
			vectors: this.rows[i],
			row: 0,
			tag: this.cells[i],
		}));
		return encodeRows(dims, rows, rows.length, { kind: 'cells' }, true);
	}
}

/**
 * Writes a new tier's buckets (listed nowhere yet) and notes its fullest range of cells, and its cells'
 * rows when they are few enough to list; on a failure, deletes those it may have written.
 */
async function writeBuckets(
	files: CellFiles,
	tier: CellTier,
	cb: Codebook,
	bucket: (b: number) => Promise<Gathered>,
): Promise<CellTier> {
	const cells = cellCount(cb);
	const layout = new TierLayout(tier, cells);
	const perRange = new Uint32Array(layout.ranges);
	const perCell = cells <= COUNTED_CELLS ? new Array<number>(cells).fill(0) : undefined;
	const write = async (b: number) => {
		const got = await bucket(b);
		perRange[layout.rangeOfBucket(b)] += got.chunks.length;
		if (perCell) for (const c of got.cells) perCell[c]++;
		const body = got.encode(cb.dimensions);
		await files.storage.put(cellBucketKey(files.segmentsPrefix, tier, b), body, {
			ifVersion: null,
		});
		return body.byteLength;
	};
	const keys = cellBucketKeys(files.segmentsPrefix, tier);
	tier.bytes += await writeParts(tier.buckets, write, keys, (k) => files.storage.delete(k));
	tier.largest = perRange.reduce((m, n) => Math.max(m, n), 0);
	if (perCell) tier.cellRows = perCell;
	return tier;
}

/**
 * A tier entry of `ranges` ranges of cells: each range split as its own rows need when `rowsIn` bounds
 * them (a per-range tier), else every range as the fullest (`largest` rows) needs.
 */
function newTier(
	files: CellFiles,
	cb: Codebook,
	fields: { codebook: string; segments: number; rows: number },
	ranges: number,
	bound: { largest: number; rowsIn?: (range: number) => number },
): CellTier {
	const maxBytes = files.bucketBytes ?? BUCKET_BYTES;
	if (bound.rowsIn) {
		const layout = rangeLayout(ranges, cb.dimensions, maxBytes, bound.rowsIn);
		// No range split: the form every version reads.
		if (layout.parts.length === 0)
			return { id: newCellTierId(), ...fields, buckets: ranges, bytes: 0 };
		return { id: newCellTierId(1, true), ...fields, ...layout, bytes: 0 };
	}
	const layout = layoutFor(ranges, cb.dimensions, bound.largest, maxBytes);
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
	const perCell = new Uint32Array(cells);
	for (const cell of all.cells) perCell[cell]++;
	const rowsIn = rangeRows(perCell, cells, ranges);
	let largest = 0;
	for (let r = 0; r < ranges; r++) largest = Math.max(largest, rowsIn(r));
	const fields = { codebook, segments: refs.length, rows };
	const tier = newTier(files, cb, fields, ranges, {
		largest,
		rowsIn: cells <= COUNTED_CELLS ? rowsIn : undefined,
	});
	const layout = new TierLayout(tier, cells);
	const gathered = Array.from({ length: tier.buckets }, () => new Gathered());
	all.chunks.forEach((chunk, i) => {
		const cell = all.cells[i];
		gathered[layout.bucketOfRow(cell, chunk.id)].add(chunk, all.rows[i], cell);
	});
	return writeBuckets(files, tier, cb, async (b) => gathered[b]);
}

/** A bucket of a tier being merged is not held (another process replaced the tier, or it was lost). */
export class CellTierGone extends Error {}

/**
 * The bound a merge of `a` and `b` into `ranges` ranges lays its buckets out by: each range's rows
 * when both count their cells' rows, else the fullest range's.
 */
function mergeBound(a: CellTier, b: CellTier, cells: number, ranges: number) {
	const largest = largestIn(a, ranges) + largestIn(b, ranges);
	if (!countsCells(a, cells) || !countsCells(b, cells)) return { largest };
	const both = a.cellRows.map((n, c) => n + b.cellRows[c]);
	const rowsIn = rangeRows(both, cells, ranges);
	return { largest, rowsIn };
}

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
	const tier = newTier(files, cb, fields, ranges, mergeBound(a, b, cells, ranges));
	const [into, layouts] = [
		new TierLayout(tier, cells),
		[a, b].map((t) => new TierLayout(t, cells)),
	];
	return writeBuckets(files, tier, cb, async (t) => {
		const out = new Gathered();
		for (const [i, from] of [a, b].entries())
			for (const s of sourcesOf(layouts[i], into, t)) {
				const key = cellBucketKey(files.segmentsPrefix, from, s);
				const got = await files.storage.get(key);
				if (!got) throw new CellTierGone();
				const { segment, cells: rowCells } = decodeCellBucket(key, got.body, from, s, cells);
				const d = segment.dimensions;
				segment.chunks.forEach((chunk, r) => {
					// A row out of its place would be missed by the buckets meant to take it.
					if (layouts[i].bucketOfRow(rowCells[r], chunk.id) !== s)
						throw new CorruptDocumentError(key, `row ${r} is not of this bucket`);
					if (into.bucketOfRow(rowCells[r], chunk.id) !== t) return;
					out.add(chunk, segment.vectors.subarray(r * d, (r + 1) * d), rowCells[r]);
				});
			}
		return out;
	});
}
