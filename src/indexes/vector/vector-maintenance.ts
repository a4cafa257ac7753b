// Keeping the embedded vector index small and exact: forgetting a session's rows for good, sweeping
// segments nobody lists, and merging small segments. Each rewrites write-once segments and swaps them
// into the manifest by compare-and-swap; a concurrent change of the same segments makes it start over
// (forget) or give up (compaction).
import { deleteParts } from '../../common/parallel';
import { FlushConflictError, IndexDamagedError } from '../../errors';
import type { IndexedChunk } from '../chunks/chunk';
import { sweepUnlisted } from '../chunks/orphans';
import { retiredKeys, retireParts } from '../chunks/retiring';
import { dropStale, tiersOf } from '../chunks/tiering';
import { rewriteTiers, stillAsRead, undoRewrites, withRewritten } from './cell-forget';
import type { RewrittenTier, TakenRows } from './cell-forget';
import { cellBucketKeys } from './cell-tiers';
import { cellKeys, cellTiers, isCellKey, readCodebook } from './cell-upkeep';
import type { IndexManifest, SegmentRef } from './manifest';
import type { EmbeddedIndex } from './vector-index';
import { COMPACT_BELOW, copyRows, MAX_SEGMENTS } from './vector-segment';
import type { Segment } from './vector-segment';
import type { Touched } from '../chunks/touched';

/**
 * Removes one session's chunks for good (text and vectors): each segment listing the session is
 * rewritten without its rows, or dropped when nothing else is in it, swapped into the manifest by
 * compare-and-swap, then deleted. Segments are write-once, so a concurrent compaction of one of them
 * makes the swap fail and the whole pass start over on the new manifest. Returns the rows removed.
 */
export async function forgetSessionRows(
	index: EmbeddedIndex,
	sessionId: string,
	maxAttempts: number,
	touched?: Touched,
): Promise<number> {
	const drop = (c: IndexedChunk) => c.session_id === sessionId;
	for (let attempt = 1; ; attempt++) {
		const manifest = await index.readManifest(true);
		if (manifest.version === null) return 0;
		const refs = manifest.doc.segments.filter((s) => s.sessions.includes(sessionId));
		if (refs.length === 0) return 0;
		const { replaced, removed, taken } = await withoutSession(index, refs, drop, manifest.doc);
		const fresh = [...replaced.values()].flatMap((r) => (r ? [r] : []));
		const undoSegments = () =>
			Promise.all(fresh.map((r) => index.storage.delete(r.ref.key).catch(() => {})));
		let kept: Awaited<ReturnType<typeof rewriteTiers>>;
		try {
			kept = await rewriteTiers(index, (key) => readCodebook(index, key), taken, drop);
		} catch (error) {
			await undoSegments();
			throw error;
		}
		let dropped: string[] = [];
		const result = await index.updateManifest((cur) => {
			if (cur.version === null || !stillAsRead(cur.doc, kept.rewritten)) return undefined;
			const keys = new Set(cur.doc.segments.map((s) => s.key));
			if (![...replaced.keys()].every((k) => keys.has(k))) return undefined;
			const next = withoutRows(index, cur.doc, replaced, kept);
			dropped = next.dropped;
			return next.doc;
		}, 'allow'); // what is forgotten goes from a moved index too
		if (!result.written) {
			await undoSegments();
			await undoRewrites(index, kept.rewritten);
			if (result.current.version === null) return 0;
			if (attempt >= maxAttempts) throw new FlushConflictError(index.manifestKey, attempt);
			continue;
		}
		for (const r of fresh) index.cacheSegment(r.segment);
		const buckets = kept.rewritten.flatMap((r) => r.replaced);
		for (const key of replaced.keys()) {
			index.uncacheSegment(key);
			await index.storage.delete(key);
		}
		await deleteParts([...buckets, ...dropped], (key) => index.storage.delete(key));
		touched?.deleted.push(...replaced.keys(), ...buckets, ...dropped);
		touched?.rewritten.push(
			index.manifestKey,
			...fresh.map((r) => r.ref.key),
			...kept.rewritten.flatMap((r) => r.written),
		);
		return removed;
	}
}

/**
 * The manifest after a Forget's rewrite: each rewritten segment in place of its old one (keeping its
 * place in a tier kept), the tiers kept with their new buckets, any other tier of a rewritten segment
 * dropped, and every retired part due; `dropped` are the keys to delete once it is stored.
 */
function withoutRows(
	index: EmbeddedIndex,
	doc: IndexManifest,
	replaced: Map<string, { ref: SegmentRef } | null>,
	kept: { rewritten: RewrittenTier[]; dropped: Set<string> },
): { doc: IndexManifest; dropped: string[] } {
	const segments = doc.segments.flatMap((s) => {
		if (!replaced.has(s.key)) return [s];
		const next = replaced.get(s.key);
		if (!next) return [];
		// Its rows are read from the kept tier's buckets: it keeps its place there.
		return [s.tier && !kept.dropped.has(s.tier.id) ? { ...next.ref, tier: s.tier } : next.ref];
	});
	const stamped = { ...doc, updated_at: new Date().toISOString() };
	const placed = withRewritten(stamped, segments, kept.rewritten, index.segmentsPrefix);
	// Any other tier of a rewritten segment holds its rows: dropped in the same swap.
	const next = dropStale(cellTiers, placed.doc, (t) => cellBucketKeys(index.segmentsPrefix, t));
	// Parts replaced earlier may hold the session's rows: they go now, whatever their grace.
	const purged = retireParts(next.doc, [], index.retiring, { all: true });
	return { doc: purged.doc, dropped: [...next.keys, ...placed.emptied, ...purged.due] };
}

/**
 * The segments `refs` rewritten without the rows `drop` names (null: nothing else was in it), written;
 * and, for those in a usable cell tier of `doc`, which rows went (their buckets are written again).
 */
async function withoutSession(
	index: EmbeddedIndex,
	refs: readonly SegmentRef[],
	drop: (c: IndexedChunk) => boolean,
	doc: IndexManifest,
): Promise<{
	replaced: Map<string, { ref: SegmentRef; segment: Segment } | null>;
	removed: number;
	taken: TakenRows[];
}> {
	const tierOf = new Map(
		tiersOf(cellTiers, doc).usable.flatMap((u) => u.refs.map((r) => [r.key, u.tier] as const)),
	);
	const replaced = new Map<string, { ref: SegmentRef; segment: Segment } | null>();
	const taken: TakenRows[] = [];
	let removed = 0;
	for (const ref of refs) {
		const seg = await index.readSegment(ref);
		if (!seg) throw new IndexDamagedError(index.kbId, [ref.key]);
		const rows = seg.chunks.flatMap((c, r) => (drop(c) ? [] : [r]));
		const gone = seg.chunks.flatMap((c, r) => (drop(c) ? [r] : []));
		removed += gone.length;
		const tier = tierOf.get(ref.key);
		if (tier && gone.length > 0) taken.push({ tier, seg, rows: gone });
		if (rows.length === 0) {
			replaced.set(ref.key, null);
			continue;
		}
		const chunks = rows.map((r) => seg.chunks[r]);
		const vectors = copyRows(
			rows.map((row) => ({ seg, row })),
			doc.dimensions,
		);
		replaced.set(ref.key, await index.writeSegment(doc.dimensions, chunks, vectors));
	}
	return { replaced, removed, taken };
}

/**
 * Deletes segments the manifest does not list and nobody wrote for `olderThanMs` (cell tier parts: for
 * an hour at least; chunks/orphans.ts).
 */
export const sweepOrphanSegments = (index: EmbeddedIndex, olderThanMs: number) =>
	sweepUnlisted(index, { keys: cellKeys, isTierPart: isCellKey }, olderThanMs);

/**
 * The first run of two or more neighbouring small segments, as many as merge into at most twice
 * COMPACT_BELOW vectors and at most `maxBytes` together; null if none. Any run, not only the first
 * small segment's: a lone small one between large ones (a segment a Forget made smaller) must not
 * stop every later merge. Segments in a cell tier are left alone: searches read their rows from the
 * tier's buckets, so their size costs nothing, and merging one would drop its whole tier (hundreds
 * of segments, regrouped again over many later syncs, each then slow).
 */
export function smallRun<R extends { count: number; bytes: number; tier?: unknown }>(
	refs: readonly R[],
	maxBytes = Infinity,
): R[] | null {
	for (let start = 0; start < refs.length; start++) {
		let end = start;
		let total = 0;
		let bytes = 0;
		const fits = (r: R) => end === start || bytes + r.bytes <= maxBytes;
		while (
			end < refs.length &&
			refs[end].tier === undefined &&
			refs[end].count < COMPACT_BELOW &&
			total < 2 * COMPACT_BELOW &&
			fits(refs[end])
		) {
			total += refs[end].count;
			bytes += refs[end++].bytes;
		}
		if (end - start >= 2) return refs.slice(start, end);
		start = Math.max(start, end - 1);
	}
	return null;
}

/**
 * Past MAX_SEGMENTS, merges a run of neighbouring small segments into one (superseded chunks dropped),
 * swaps it into the manifest in their place, then deletes them. A concurrent change of that run
 * abandons the merge. Failing to compact never fails the write that triggered it.
 */
export async function compactIndex(index: EmbeddedIndex): Promise<boolean> {
	try {
		const manifest = await index.readManifest(true);
		if (manifest.version === null || manifest.doc.segments.length <= MAX_SEGMENTS) return false;
		const run = smallRun(manifest.doc.segments, index.segmentBytes);
		if (!run) return false;
		const loaded = await Promise.all(run.map((r) => index.readSegment(r)));
		if (loaded.some((s) => s === null)) return false;
		const dims = manifest.doc.dimensions;
		const byId = new Map<string, { chunk: IndexedChunk; seg: Segment; row: number }>();
		for (const seg of loaded as Segment[])
			seg.chunks.forEach((chunk, row) => {
				byId.delete(chunk.id); // a later copy wins, and takes the later place
				byId.set(chunk.id, { chunk, seg, row });
			});
		const kept = [...byId.values()];
		const written = await index.writeSegment(
			dims,
			kept.map((k) => k.chunk),
			copyRows(kept, dims),
		);
		const merged = written.ref;
		let due: string[] = [];
		const result = await index.updateManifest((cur) => {
			if (cur.version === null) return undefined;
			const at = cur.doc.segments.findIndex((s) => s.key === run[0].key);
			// Unchanged, and still in no tier: upkeep may have regrouped the run meanwhile (smallRun).
			const same =
				at >= 0 &&
				run.every((r, i) => {
					const now = cur.doc.segments[at + i];
					return now?.key === r.key && now.tier === undefined;
				});
			if (!same) return undefined;
			const next = [...cur.doc.segments];
			next.splice(at, run.length, merged);
			// Searches still reading the manifest before this one read the run: kept a while (retiring.ts).
			const retired = retireParts(
				{ ...cur.doc, segments: next, updated_at: merged.created_at },
				run.map((r) => ({ key: r.key, bytes: r.bytes })),
				index.retiring,
			);
			due = retired.due;
			return retired.doc;
		});
		if (!result.written) {
			await index.storage.delete(merged.key);
			return false;
		}
		index.cacheSegment(written.segment);
		for (const key of [...run.map((r) => r.key), ...due]) index.uncacheSegment(key);
		await deleteParts(due, (key) => index.storage.delete(key));
		return true;
	} catch {
		// Compaction is an optimisation: the segments it would have merged stay as they are.
		return false;
	}
}

/** Empties a moved index for good (its marker stays, so a late writer is still refused). */
export async function emptyMovedIndex(index: EmbeddedIndex): Promise<string[]> {
	let listed: string[] = [];
	await index.updateManifest((cur) => {
		if (cur.version === null || cur.doc.moved_at === undefined) return undefined;
		listed = [...cur.doc.segments.map((r) => r.key), ...retiredKeys(cur.doc)];
		return { ...cur.doc, segments: [], retired: undefined, updated_at: new Date().toISOString() };
	}, 'allow');
	for (const key of listed) {
		index.uncacheSegment(key);
		await index.storage.delete(key);
	}
	return listed;
}
