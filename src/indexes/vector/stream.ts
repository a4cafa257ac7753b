// Exact cosine ranking over a vector index too large to hold, one segment after another (a Memory
// Base's base-wide index): each segment's k best (topRows: an int8 pass, then an exact rerank) merged
// into the k best overall, ties by the chunks (chunkOrder), so memory holds a couple of segments and
// the k best. The answer is the one rankOver gives over the whole index loaded at once; a chunk copied
// into two segments (a retried write) has one vector and counts once among the k best.
import { DimensionMismatchError, IndexDamagedError } from '../../errors';
import type { Versioned } from '../../store/document-store';
import { isUnfiltered } from '../chunks/filter';
import { tiersOf } from '../chunks/tiering';
import { BestChunks } from './best-chunks';
import { CellBucketGone, offerCells } from './cell-search';
import { cellTiers, readCodebook } from './cell-upkeep';
import type { ChunkFilter } from '../chunks/filter';
import type { IndexManifest, SegmentRef } from './manifest';
import { similaritiesOf } from './ranking';
import type { VectorRanking } from './ranking';
import type { EmbeddedIndex } from './vector-index';
import { readInWindow } from '../../common/parallel';
import { searchLimits } from '../chunks/search-reads';
import { MAX_TOP_K, normaliseRows, rowMask } from './vector-segment';
import type { Segment, VectorMatch } from './vector-segment';

/** Times a ranking starts over on a newer manifest when a segment it lists is gone (compacted meanwhile). */
const ATTEMPTS = 3;

class SegmentGone extends Error {
	constructor(readonly key: string) {
		super(key);
	}
}

const clampCosine = (score: number) => Math.max(-1, Math.min(1, score));

/**
 * Runs `fn` over the segments of `refs` with their rows in the filter, in order, a few read at a time
 * (large segments, of indexes from before a cap, one at a time: readInWindow).
 */
async function visit(
	index: EmbeddedIndex,
	refs: readonly SegmentRef[],
	filter: ChunkFilter,
	fn: (seg: Segment, mask: Uint8Array) => void,
): Promise<void> {
	await readInWindow(
		refs,
		searchLimits(index.reads),
		(r) => r.bytes,
		(r) => index.readSegment(r, { quantize: false }),
		(seg, r) => {
			if (!seg) throw new SegmentGone(r.key);
			fn(seg, rowMask(seg, filter));
		},
	);
}

/** Chunks named by message ID and chunk indexes (what a ranking's similarities are asked for). */
type Wanted = Map<string, Set<number>>;

/** Whether every chunk `asked` names is among those `scanned` named. */
const within = (asked: Wanted, scanned: Wanted) =>
	[...asked].every(([m, chunks]) => [...chunks].every((c) => scanned.get(m)?.has(c) ?? false));

/**
 * The k best rows of the segments `refs`, offered to `best` (which may hold the cell tiers' best
 * already): each chunk once; `also` sees every segment on the way.
 */
async function rankRest(
	best: BestChunks,
	index: EmbeddedIndex,
	refs: readonly SegmentRef[],
	q: Float32Array,
	filter: ChunkFilter,
	also?: (seg: Segment, mask: Uint8Array) => void,
): Promise<VectorMatch[]> {
	await visit(index, refs, filter, (seg, mask) => {
		also?.(seg, mask);
		best.offerRows(seg, mask, q);
	});
	return best.sorted().map(({ chunk, score }) => ({ ...chunk, score: clampCosine(score) }));
}

/** One search's reading of a manifest: its ranking, or SegmentGone / CellBucketGone (start over). */
async function rankOnce(
	index: EmbeddedIndex,
	doc: IndexManifest,
	q: Float32Array,
	n: number,
	filter: ChunkFilter,
	handed: Promise<Wanted | undefined>,
	exhaustive: boolean,
): Promise<VectorRanking> {
	// Settled segments in cell tiers: only the buckets of the cells nearest the query.
	// (`exhaustive`: every segment read, what the cells are measured against.)
	const { usable } = isUnfiltered(filter) && !exhaustive ? tiersOf(cellTiers, doc) : { usable: [] };
	const tiered = new Set(usable.flatMap((u) => u.refs.map((r) => r.key)));
	const codebook = doc.cells?.codebook;
	const tiers = usable.map((u) => u.tier);
	// The buckets need nothing of the word ranking: they are read while it runs.
	const best = new BestChunks(n);
	if (tiers.length > 0 && codebook)
		await offerCells(best, index, await readCodebook(index, codebook), tiers, q, filter);
	// With tiers, similarities read their chunks' segments again (below): the buckets' pass notes none,
	// so the pass over the other segments does not wait for the word ranking either.
	const scanned = tiered.size === 0 ? await handed : undefined;
	const known = new Map<string, number>();
	const also =
		scanned &&
		((seg: Segment, mask: Uint8Array) => {
			for (const [key, cosine] of similaritiesOf([seg], [mask], q, scanned)) known.set(key, cosine);
		});
	const rest = doc.segments.filter((r) => !tiered.has(r.key));
	const matches = await rankRest(best, index, rest, q, filter, also);
	const similarities = async (wanted: Wanted, sessions: ReadonlySet<string>) => {
		// Every live row of these chunks was met on the pass: what it did not meet has no vector.
		if (scanned && within(wanted, scanned) && tiered.size === 0) return known;
		const out = new Map<string, number>();
		const refs = doc.segments.filter((r) => r.sessions.some((s) => sessions.has(s)));
		await visit(index, refs, filter, (seg, mask) => {
			for (const [key, cosine] of similaritiesOf([seg], [mask], q, wanted)) out.set(key, cosine);
		});
		return out;
	};
	return { matches, similarities };
}

/**
 * The `k` chunks most similar to `query` over the index, read one segment after another (settled
 * segments in cell tiers: the buckets of the cells nearest the query), with a way to score more chunks
 * of the scope afterwards. The chunks `wanted` gives (the word ranking's, once it has them) are scored
 * on the same pass; others are scored by reading again the segments of their conversations.
 */
export async function streamedRanking(
	index: EmbeddedIndex,
	query: unknown,
	k: number,
	filter: ChunkFilter,
	wanted?: Promise<Wanted | undefined>,
	options: { exhaustive?: boolean } = {},
): Promise<VectorRanking> {
	const q = normaliseRows([query], 1);
	// Awaited only before the segments it is scored on; a failed or absent word ranking gives undefined.
	const given = Promise.resolve(wanted).catch(() => undefined);
	const n = Math.max(1, Math.min(k, MAX_TOP_K));
	for (let attempt = 0; ; attempt++) {
		const manifest: Versioned<IndexManifest> = await index.readManifest(attempt > 0);
		if (manifest.version === null || manifest.doc.segments.length === 0)
			return { matches: [], similarities: () => new Map() };
		if (manifest.doc.dimensions !== q.length)
			throw new DimensionMismatchError(index.kbId, manifest.doc.dimensions, q.length);
		try {
			return await rankOnce(index, manifest.doc, q, n, filter, given, options.exhaustive === true);
		} catch (error) {
			if (!(error instanceof SegmentGone || error instanceof CellBucketGone)) throw error;
			if (attempt + 1 >= ATTEMPTS) throw new IndexDamagedError(index.kbId, [error.key]);
		}
	}
}
