// Cell tiers of a vector index too large to read whole (a Memory Base's base-wide index): the rows of
// many settled segments regrouped by their cell (codebook.ts), in buckets of neighbouring cells, so a
// search reads the buckets of the cells nearest its query instead of every segment. A bucket is stored
// as a vector segment (its rows, their chunks) with each row's cell. Cells are numbered so that a
// bucket's cells are a range, and buckets split and merge in order: a merge of two tiers builds each
// bucket from the few buckets of each that may hold its cells, one bucket at a time.
import { randomBytes } from 'node:crypto';

import { IndexDamagedError } from '../../errors';
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
	/** Buckets: a power of two, at most the codebook's cells. */
	buckets: number;
	bytes: number;
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

/** Buckets for `rows` rows of a codebook of `cells` cells: a power of two, about BUCKET_ROWS rows each. */
export function bucketsFor(rows: number, cells: number, per = BUCKET_ROWS): number {
	let b = 1;
	while (b * per < rows && b < cells) b *= 2;
	return b;
}

/** The bucket of a cell among `buckets` (the cell number's high bits). */
export const bucketOfCell = (cell: number, cells: number, buckets: number) =>
	Math.floor((cell * buckets) / cells);

export const newCellTierId = () => randomBytes(9).toString('hex');

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
			if (!ok || bucketOfCell(cell as number, cells, tier.buckets) !== b)
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

/** Writes a new tier's buckets (listed nowhere yet); on a failure, deletes those it may have written. */
async function writeBuckets(
	files: CellFiles,
	tier: CellTier,
	dims: number,
	bucket: (b: number) => Promise<Gathered>,
): Promise<CellTier> {
	const write = async (b: number) => {
		const body = (await bucket(b)).encode(dims);
		await files.storage.put(cellBucketKey(files.segmentsPrefix, tier, b), body, {
			ifVersion: null,
		});
		return body.byteLength;
	};
	const keys = cellBucketKeys(files.segmentsPrefix, tier);
	tier.bytes += await writeParts(tier.buckets, write, keys, (k) => files.storage.delete(k));
	return tier;
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
	const rows = refs.reduce((n, r) => n + r.count, 0);
	const tier: CellTier = {
		id: newCellTierId(),
		codebook,
		segments: refs.length,
		rows,
		buckets: bucketsFor(rows, cells, bucketRows),
		bytes: 0,
	};
	const gathered = Array.from({ length: tier.buckets }, () => new Gathered());
	for (const ref of refs) {
		const seg = await files.readSegment(ref, { quantize: false });
		if (!seg) throw new IndexDamagedError(files.kbId, [ref.key]);
		const d = seg.dimensions;
		seg.chunks.forEach((chunk, r) => {
			const row = seg.vectors.subarray(r * d, (r + 1) * d);
			const cell = cellOf(cb, row);
			gathered[bucketOfCell(cell, cells, tier.buckets)].add(chunk, row, cell);
		});
	}
	return writeBuckets(files, tier, cb.dimensions, async (b) => gathered[b]);
}

/** The buckets of `from` that may hold cells of bucket `b` of a tier of `mine` buckets. */
export function cellSources(from: CellTier, mine: number, b: number): number[] {
	const theirs = from.buckets;
	if (theirs <= mine) return [Math.floor((b * theirs) / mine)];
	const per = theirs / mine;
	return Array.from({ length: per }, (_, i) => b * per + i);
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
	const tier: CellTier = {
		id: newCellTierId(),
		codebook: a.codebook,
		segments: a.segments + b.segments,
		rows,
		buckets: bucketsFor(rows, cells),
		bytes: 0,
	};
	return writeBuckets(files, tier, cb.dimensions, async (t) => {
		const out = new Gathered();
		for (const from of [a, b])
			for (const s of cellSources(from, tier.buckets, t)) {
				const key = cellBucketKey(files.segmentsPrefix, from, s);
				const got = await files.storage.get(key);
				if (!got) throw new CellTierGone();
				const { segment, cells: rowCells } = decodeCellBucket(key, got.body, from, s, cells);
				const d = segment.dimensions;
				segment.chunks.forEach((chunk, r) => {
					if (bucketOfCell(rowCells[r], cells, tier.buckets) !== t) return;
					out.add(chunk, segment.vectors.subarray(r * d, (r + 1) * d), rowCells[r]);
				});
			}
		return out;
	});
}
