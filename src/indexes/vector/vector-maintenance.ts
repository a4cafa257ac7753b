// Keeping the embedded vector index exact: forgetting a session's rows for good, sweeping segments
// nobody lists, emptying a moved index. Each rewrites write-once segments and swaps them into the
// manifest by compare-and-swap; a concurrent change of the same segments makes a Forget start over.
// Merging segments: vector-merge.ts.
import { deleteParts } from '../../common/parallel';
import { FlushConflictError, IndexDamagedError } from '../../errors';
import type { IndexedChunk } from '../chunks/chunk';
import { sweepUnlisted } from '../chunks/orphans';
import { retiredKeys, retireParts } from '../chunks/retiring';
import { dropStale, tiersOf } from '../chunks/tiering';
import { rewriteTiers, stillAsRead, undoRewrites, withRewritten } from './cell-forget';
import type { RewrittenTier, TakenRows } from './cell-forget';
import { cellBucketKeys } from './cell-tiers';
import { cellTierParts, cellTiers, readCodebook } from './cell-upkeep';
import type { IndexManifest, SegmentRef } from './manifest';
import type { EmbeddedIndex } from './vector-index';
import { keptRows } from './segment-writer';
import { copyRows, rowCount } from './vector-segment';
import { markForget, stillListed, withForgetMark } from './vector-merge';
import type { Touched } from '../chunks/touched';

/**
 * Removes one session's chunks for good (text and vectors): each segment listing the session is
 * rewritten without its rows, or dropped when nothing else is in it, swapped into the manifest by
 * compare-and-swap, then deleted. The session is marked in the manifest meanwhile, so merges leave
 * its segments alone (syncs of other sessions merge the newest segments as they come); any other
 * change of them (a Forget of another session, cell tiers) makes the pass start over on the new
 * manifest. Returns the rows removed.
 */
export async function forgetSessionRows(
	index: EmbeddedIndex,
	sessionId: string,
	maxAttempts: number,
	touched?: Touched,
): Promise<number> {
	// Nothing is marked (or written) where no segment lists the session.
	if (!(await markForget(index, sessionId, true))) return 0;
	let unmarked = false;
	try {
		for (let attempt = 1; ; attempt++) {
			const done = await forgetAttempt(index, sessionId, touched);
			if (done !== 'again') {
				unmarked = done.unmarked;
				return done.removed;
			}
			if (attempt >= maxAttempts) throw new FlushConflictError(index.manifestKey, attempt);
		}
	} finally {
		// The swap that removed the rows took the mark off; otherwise it goes now (or in time).
		if (!unmarked) await markForget(index, sessionId, false).catch(() => {});
	}
}

/** Whether a segment a Forget found missing was replaced meanwhile (no longer listed), not lost. */
const replacedMeanwhile = async (index: EmbeddedIndex, error: unknown) =>
	error instanceof IndexDamagedError && !(await stillListed(index, error.missing));

/** One pass of forgetSessionRows: the rows removed (and whether its swap took the mark off), or 'again'. */
async function forgetAttempt(
	index: EmbeddedIndex,
	sessionId: string,
	touched?: Touched,
): Promise<{ removed: number; unmarked: boolean } | 'again'> {
	const drop = (c: IndexedChunk) => c.session_id === sessionId;
	const manifest = await index.readManifest(true);
	if (manifest.version === null) return { removed: 0, unmarked: false };
	const refs = manifest.doc.segments.filter((s) => s.sessions.includes(sessionId));
	if (refs.length === 0) return { removed: 0, unmarked: false };
	let rewrite: Awaited<ReturnType<typeof withoutSession>>;
	try {
		rewrite = await withoutSession(index, refs, drop, manifest.doc);
	} catch (error) {
		if (await replacedMeanwhile(index, error)) return 'again';
		throw error;
	}
	const { replaced, removed, taken } = rewrite;
	const fresh = [...replaced.values()].flatMap((r) => (r ? [r] : []));
	const undoSegments = () =>
		Promise.all(fresh.map((r) => index.storage.delete(r.key).catch(() => {})));
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
		return withForgetMark(next.doc, sessionId, false);
	}, 'allow'); // what is forgotten goes from a moved index too
	if (!result.written) {
		await undoSegments();
		await undoRewrites(index, kept.rewritten);
		return result.current.version === null ? { removed: 0, unmarked: false } : 'again';
	}
	const buckets = kept.rewritten.flatMap((r) => r.replaced);
	for (const key of replaced.keys()) {
		index.uncacheSegment(key);
		await index.storage.delete(key);
	}
	for (const key of [...buckets, ...dropped]) index.uncacheSegment(key);
	await deleteParts([...buckets, ...dropped], (key) => index.storage.delete(key));
	touched?.deleted.push(...replaced.keys(), ...buckets, ...dropped);
	touched?.rewritten.push(
		index.manifestKey,
		...fresh.map((r) => r.key),
		...kept.rewritten.flatMap((r) => r.written),
	);
	return { removed, unmarked: true };
}

/**
 * The manifest after a Forget's rewrite: each rewritten segment in place of its old one (keeping its
 * place in a tier kept), the tiers kept with their new buckets, any other tier of a rewritten segment
 * dropped, and every retired part due; `dropped` are the keys to delete once it is stored.
 */
function withoutRows(
	index: EmbeddedIndex,
	doc: IndexManifest,
	replaced: Map<string, SegmentRef | null>,
	kept: { rewritten: RewrittenTier[]; dropped: Set<string> },
): { doc: IndexManifest; dropped: string[] } {
	const segments = doc.segments.flatMap((s) => {
		if (!replaced.has(s.key)) return [s];
		const next = replaced.get(s.key);
		if (!next) return [];
		// Its rows are read from the kept tier's buckets: it keeps its place there.
		return [s.tier && !kept.dropped.has(s.tier.id) ? { ...next, tier: s.tier } : next];
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
 * The segments `refs` rewritten without the rows `drop` names (null: nothing else was in it), written
 * a block of chunks at a time; and, for those in a usable cell tier of `doc`, the rows that went (their
 * buckets are written again).
 */
async function withoutSession(
	index: EmbeddedIndex,
	refs: readonly SegmentRef[],
	drop: (c: IndexedChunk) => boolean,
	doc: IndexManifest,
): Promise<{ replaced: Map<string, SegmentRef | null>; removed: number; taken: TakenRows[] }> {
	const tierOf = new Map(
		tiersOf(cellTiers, doc).usable.flatMap((u) => u.refs.map((r) => [r.key, u.tier] as const)),
	);
	const replaced = new Map<string, SegmentRef | null>();
	const taken: TakenRows[] = [];
	let removed = 0;
	for (const ref of refs) {
		const seg = await index.readSegment(ref);
		if (!seg) throw new IndexDamagedError(index.kbId, [ref.key]);
		const gone: Array<{ id: string; row: number }> = [];
		const keep = (c: IndexedChunk, row: number) => {
			if (!drop(c)) return true;
			gone.push({ id: c.id, row });
			return false;
		};
		const rows = keptRows(seg, keep);
		replaced.set(ref.key, await index.writeRows(doc.dimensions, rows, rowCount(seg)));
		removed += gone.length;
		const tier = tierOf.get(ref.key);
		// Copies of the rows that went, not the segment: it is held until every tier is rewritten.
		if (tier && gone.length > 0)
			taken.push({
				tier,
				ids: gone.map((g) => g.id),
				vectors: copyRows(
					gone.map((g) => ({ seg, row: g.row })),
					doc.dimensions,
				),
			});
	}
	return { replaced, removed, taken };
}

/**
 * Deletes segments the manifest does not list and nobody wrote for `olderThanMs` (cell tier parts: for
 * an hour at least; chunks/orphans.ts).
 */
export const sweepOrphanSegments = (index: EmbeddedIndex, olderThanMs: number) =>
	sweepUnlisted(index, cellTierParts, olderThanMs);

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
