// Where a cell tier's rows are: its cells in ranges of neighbouring cells (a power of two of them), in
// order, each range in one bucket or split among a power of two of buckets by the row's chunk ID, so
// that a bucket of large vectors stays within BUCKET_BYTES. A tier lists which ranges split and how
// much (`parts`): a crowded cell splits its own range only, and a search near the others still reads
// one bucket per range. Tiers written before that split every range alike (`split`), and are read so.
import { fnv1a32 } from '../../common/hash';
import type { CellTier } from './cell-tiers';

/** Rows of vectors per cell are counted in a tier (`cellRows`) when its codebook has at most this many cells. */
export const COUNTED_CELLS = 1024;

/** The bucket of a cell among `ranges` ranges (the cell number's high bits). */
export const bucketOfCell = (cell: number, cells: number, ranges: number) =>
	Math.floor((cell * ranges) / cells);

/** A tier's ranges of cells. */
export const rangesOf = (tier: Pick<CellTier, 'buckets' | 'split' | 'ranges'>) =>
	tier.ranges ?? tier.buckets / (tier.split ?? 1);

/** The cells of range `r` of `ranges`: from, to (excluded). */
export const cellsOfRange = (r: number, cells: number, ranges: number): [number, number] => [
	Math.ceil((r * cells) / ranges),
	Math.ceil(((r + 1) * cells) / ranges),
];

/** Rows of range `r` of `ranges` when `counts` are each cell's rows. */
export const rangeRows =
	(counts: ArrayLike<number>, cells: number, ranges: number) => (r: number) => {
		const [lo, hi] = cellsOfRange(r, cells, ranges);
		let n = 0;
		for (let c = lo; c < hi; c++) n += counts[c];
		return n;
	};

/** The buckets of a tier, by range: computed from its entry for one operation (not kept). */
export class TierLayout {
	readonly ranges: number;
	/** Per-range tiers: the first bucket of each range, and the bucket count after the last. */
	private readonly starts?: Uint32Array;
	private readonly split: number;

	constructor(
		tier: Pick<CellTier, 'buckets' | 'split' | 'ranges' | 'parts'>,
		readonly cells: number,
	) {
		this.split = tier.split ?? 1;
		this.ranges = rangesOf(tier);
		if (!tier.parts) return;
		const of = new Map(tier.parts);
		this.starts = new Uint32Array(this.ranges + 1);
		for (let r = 0; r < this.ranges; r++) this.starts[r + 1] = this.starts[r] + (of.get(r) ?? 1);
	}

	first(range: number): number {
		return this.starts ? this.starts[range] : range * this.split;
	}

	splitOf(range: number): number {
		return this.starts ? this.starts[range + 1] - this.starts[range] : this.split;
	}

	rangeOfCell(cell: number): number {
		return bucketOfCell(cell, this.cells, this.ranges);
	}

	rangeOfBucket(b: number): number {
		if (!this.starts) return Math.floor(b / this.split);
		let lo = 0;
		let hi = this.ranges - 1;
		while (lo < hi) {
			const mid = (lo + hi + 1) >> 1;
			if (this.starts[mid] <= b) lo = mid;
			else hi = mid - 1;
		}
		return lo;
	}

	/** The bucket holding a row of `cell` whose chunk is `id` (FNV-1a of the ID, fixed forever). */
	bucketOfRow(cell: number, id: string): number {
		const r = this.rangeOfCell(cell);
		const s = this.splitOf(r);
		return s === 1 ? this.first(r) : this.first(r) + (fnv1a32(id) & (s - 1));
	}

	bucketsOfCell(cell: number): number[] {
		const r = this.rangeOfCell(cell);
		return Array.from({ length: this.splitOf(r) }, (_, s) => this.first(r) + s);
	}

	holdsCell(b: number, cell: number): boolean {
		return this.rangeOfCell(cell) === this.rangeOfBucket(b);
	}

	/** The cells bucket `b` holds: from, to (excluded). */
	cellsOfBucket(b: number): [number, number] {
		return cellsOfRange(this.rangeOfBucket(b), this.cells, this.ranges);
	}
}

/**
 * The buckets of `from` that may hold rows of bucket `b` of `to`: those of its cells, and of a split
 * range only those whose share of the chunk IDs meets b's (both splits are powers of two).
 */
export function sourcesOf(from: TierLayout, to: TierLayout, b: number): number[] {
	const [lo, hi] = to.cellsOfBucket(b);
	const r = to.rangeOfBucket(b);
	const mine = to.splitOf(r);
	const sub = b - to.first(r);
	const out: number[] = [];
	if (hi <= lo) return out;
	for (let fr = from.rangeOfCell(lo); fr <= from.rangeOfCell(hi - 1); fr++) {
		const theirs = from.splitOf(fr);
		const m = Math.min(theirs, mine);
		for (let s = 0; s < theirs; s++) if (s % m === sub % m) out.push(from.first(fr) + s);
	}
	return out;
}

/** The split that keeps `rows` rows of `dims` dimensions within `maxBytes` a bucket: a power of two. */
export function splitFor(rows: number, dims: number, maxBytes: number): number {
	let split = 1;
	while ((rows / split) * 4 * dims > maxBytes && split < 2 ** 10) split *= 2;
	return split;
}

/**
 * A per-range layout of `ranges` ranges whose rows are `rowsIn(range)`, at most: each range split as
 * its own rows need. Fields of a tier entry (`parts` lists the ranges that split).
 */
export function rangeLayout(
	ranges: number,
	dims: number,
	maxBytes: number,
	rowsIn: (range: number) => number,
): { buckets: number; ranges: number; parts: Array<[number, number]> } {
	const parts: Array<[number, number]> = [];
	let buckets = 0;
	for (let r = 0; r < ranges; r++) {
		const s = splitFor(rowsIn(r), dims, maxBytes);
		if (s > 1) parts.push([r, s]);
		buckets += s;
	}
	return { buckets, ranges, parts };
}

/** Whether a tier's cell counts can bound a merge's ranges (counted, and for this codebook). */
export const countsCells = (
	tier: CellTier,
	cells: number,
): tier is CellTier & { cellRows: number[] } =>
	tier.cellRows !== undefined && tier.cellRows.length === cells;
