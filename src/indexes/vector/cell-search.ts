// The k best rows of cell tiers for a query: the cells nearest the query (codebook.ts), and in
// each tier only the buckets holding them, nearest cells first up to a fixed number of buckets for
// all tiers together (so a search's reads stay flat as a base grows), a few read at a time or one
// when large (chunks/search-reads.ts), and kept within the cache's bounds for the next search near them;
// every row of a bucket read is scored exactly (a bucket's other cells are near too, and cost nothing
// more to score).
// Approximate: a row in a cell not probed is not seen.
import type { IndexedChunk } from '../chunks/chunk';
import type { ChunkFilter } from '../chunks/filter';
import { BestChunks } from './best-chunks';
import { cellBucketKey, decodeCellBucket } from './cell-tiers';
import { rangeRows, TierLayout } from './cell-layout';
import type { CellFiles, CellTier } from './cell-tiers';
import type { Codebook } from './codebook';
import { cellCount, probe } from './codebook';
import { readInWindow } from '../../common/parallel';
import { searchLimits } from '../chunks/search-reads';
import { rowMask } from './vector-segment';

/** Cells probed, and the parents they are picked among (tuned on measured recall; see bench). */
export const PROBE_CELLS = 64;
export const PROBE_PARENTS = 8;
/**
 * Buckets a search reads, at most, of all tiers together: those of the nearest probed cells first.
 * While tiers are small, a bucket holds many cells and every probed cell is read within it; as a base
 * grows, its tiers' buckets hold fewer cells each and the farthest probed cells are left unread.
 */
export const PROBE_BUCKETS = 32;

/** How far a search probes: cells, the parents they are picked among, buckets read at most. */
export interface ProbeOptions {
	cells?: number;
	parents?: number;
	buckets?: number;
}

/** A bucket a search needs is not held (a newer manifest replaced its tier): the search starts over. */
export class CellBucketGone extends Error {
	constructor(readonly key: string) {
		super(key);
	}
}

/**
 * The buckets of each tier holding the probed cells (nearest first), as (tier, bucket) pairs: a cell's
 * buckets of every tier are taken together, cell after cell, while they fit in `budget` (the nearest
 * cell's always).
 */
export function bucketsToRead(
	cb: Codebook,
	tiers: readonly CellTier[],
	cells: readonly number[],
	budget = PROBE_BUCKETS,
) {
	const total = cellCount(cb);
	const layouts = tiers.map((tier) => new TierLayout(tier, total));
	const taken = tiers.map(() => new Set<number>());
	let count = 0;
	for (const cell of cells) {
		const more = layouts.map((layout, i) =>
			layout.bucketsOfCell(cell).filter((b) => !taken[i].has(b)),
		);
		const adds = more.reduce((sum, bs) => sum + bs.length, 0);
		if (count > 0 && count + adds > budget) break;
		more.forEach((bs, i) => bs.forEach((b) => taken[i].add(b)));
		count += adds;
	}
	return tiers.flatMap((tier, i) => [...taken[i]].sort((a, b) => a - b).map((b) => ({ tier, b })));
}

/** The k best rows of the tiers' probed buckets (each chunk once), best first. */
export async function bestInCells(
	files: CellFiles,
	cb: Codebook,
	tiers: readonly CellTier[],
	q: Float32Array,
	k: number,
	filter: ChunkFilter,
	options: ProbeOptions = {},
): Promise<Array<{ chunk: IndexedChunk; score: number }>> {
	const best = new BestChunks(k);
	await offerCells(best, files, cb, tiers, q, filter, options);
	return best.sorted();
}

/**
 * Offers `best` the rows of the tiers' probed buckets: a ranking that goes on to other segments
 * decodes only the chunks that end among its best.
 */
export async function offerCells(
	best: BestChunks,
	files: CellFiles,
	cb: Codebook,
	tiers: readonly CellTier[],
	q: Float32Array,
	filter: ChunkFilter,
	options: ProbeOptions = {},
): Promise<void> {
	const cells = probe(cb, q, options.cells ?? PROBE_CELLS, options.parents ?? PROBE_PARENTS);
	const reads = bucketsToRead(cb, tiers, cells, options.buckets);
	// Large vectors' buckets are read one at a time (readInWindow): each is scored as it comes, then let go.
	await readInWindow(
		reads,
		searchLimits(files.reads),
		({ tier }) => bucketBytesOf(tier),
		async ({ tier, b }) => {
			const key = cellBucketKey(files.segmentsPrefix, tier, b);
			const got = await files.readCellBucket(
				key,
				(body) => decodeCellBucket(key, body, tier, b, cellCount(cb)).segment,
			);
			if (!got) throw new CellBucketGone(key);
			return got;
		},
		(seg) => best.offerRows(seg, rowMask(seg, filter), q),
	);
}

/**
 * What one of a tier's buckets weighs, about: the average, or in a split tier the share of its
 * fullest range of cells (a crowded cell's buckets can hold most of its rows); in a per-range tier,
 * the fullest range's share of its own split, by the rows its cells count.
 */
export function bucketBytesOf(tier: CellTier): number {
	const perRow = tier.bytes / Math.max(1, tier.rows);
	const average = tier.bytes / tier.buckets;
	if (tier.parts && tier.cellRows)
		return Math.max(average, fullestBucket(tier, tier.cellRows) * perRow);
	if (!tier.split || tier.largest === undefined) return average;
	return Math.max(average, Math.ceil(tier.largest / tier.split) * perRow);
}

/** Rows of a per-range tier's fullest bucket, about (each range's rows shared by its split). */
function fullestBucket(tier: CellTier, counts: readonly number[]): number {
	const layout = new TierLayout(tier, counts.length);
	const rowsIn = rangeRows(counts, counts.length, layout.ranges);
	let most = 0;
	for (let r = 0; r < layout.ranges; r++)
		most = Math.max(most, Math.ceil(rowsIn(r) / layout.splitOf(r)));
	return most;
}
