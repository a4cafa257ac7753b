// Merging an embedded vector index's segments: the newest as they come (tailRun), small neighbours past
// MAX_SEGMENTS (smallRun), each merge swapped into the manifest by compare-and-swap and given up when
// its segments changed meanwhile. A Forget marks its conversation in the manifest while it rewrites
// that conversation's segments, and no merge takes one of them then: syncs of other conversations,
// each merging the newest segments, would otherwise make every attempt of the Forget start over.
import { deleteParts } from '../../common/parallel';
import type { IndexedChunk } from '../chunks/chunk';
import { retireParts } from '../chunks/retiring';
import type { IndexManifest, SegmentRef } from './manifest';
import type { EmbeddedIndex } from './vector-index';
import { COMPACT_BELOW, copyRows, MAX_SEGMENTS } from './vector-segment';
import type { Segment } from './vector-segment';

/** What picking a run needs of a segment's entry. */
interface Mergeable {
	count: number;
	bytes: number;
	tier?: unknown;
	sessions?: readonly string[];
}

const NONE: ReadonlySet<string> = new Set();

/** Small, in no tier, and holding no conversation a Forget is rewriting. */
const mergeable = (r: Mergeable, held: ReadonlySet<string>) =>
	r.tier === undefined &&
	r.count < COMPACT_BELOW &&
	(held.size === 0 || !r.sessions?.some((s) => held.has(s)));

/** Whether the newest manifest still lists one of `keys` (else merges replaced them: not lost). */
export async function stillListed(index: EmbeddedIndex, keys: readonly string[]): Promise<boolean> {
	const now = await index.readManifest(true);
	const listed = new Set(now.version === null ? [] : now.doc.segments.map((s) => s.key));
	return keys.some((k) => listed.has(k));
}

/** How long a Forget's mark keeps merges off its conversation's segments at most (one that died). */
export const FORGET_MARK_MS = 15 * 60_000;

/** The conversations a running Forget is rewriting, as the manifest marks them (live marks only). */
export function forgetting(doc: IndexManifest, now = Date.now()): Set<string> {
	return new Set(
		(doc.forgetting ?? []).flatMap((m) => (Date.parse(m.until) > now ? [m.session] : [])),
	);
}

/** `doc` with `sessionId` marked as being forgotten (`on`) or not; marks past their time dropped. */
export function withForgetMark(
	doc: IndexManifest,
	sessionId: string,
	on: boolean,
	now = Date.now(),
): IndexManifest {
	const live = (doc.forgetting ?? []).filter(
		(m) => m.session !== sessionId && Date.parse(m.until) > now,
	);
	if (on) live.push({ session: sessionId, until: new Date(now + FORGET_MARK_MS).toISOString() });
	const next = { ...doc };
	if (live.length > 0) next.forgetting = live;
	else delete next.forgetting;
	return next;
}

/**
 * Marks `sessionId` in the manifest as being forgotten (`on`) or takes the mark off. Marking, true
 * when a segment lists it (nothing is written otherwise); taking off, true when there is a manifest.
 * A merge that read the manifest before the mark finds it in its own swap.
 */
export async function markForget(
	index: EmbeddedIndex,
	sessionId: string,
	on: boolean,
): Promise<boolean> {
	const listed = (doc: IndexManifest) => doc.segments.some((s) => s.sessions.includes(sessionId));
	const result = await index.updateManifest((cur) => {
		if (cur.version === null || (on && !listed(cur.doc))) return undefined;
		const marked = forgetting(cur.doc).has(sessionId);
		if (marked === on && (on || !cur.doc.forgetting)) return undefined;
		return withForgetMark(cur.doc, sessionId, on);
	}, 'allow');
	const now = result.current;
	return now.version !== null && (!on || listed(now.doc));
}

/**
 * The first run of two or more neighbouring small segments, as many as merge into at most twice
 * COMPACT_BELOW vectors and at most `maxBytes` together; null if none. Any run, not only the first
 * small segment's: a lone small one between large ones (a segment a Forget made smaller) must not
 * stop every later merge. Segments in a cell tier are left alone: searches read their rows from the
 * tier's buckets, so their size costs nothing, and merging one would drop its whole tier (hundreds
 * of segments, regrouped again over many later syncs, each then slow).
 */
export function smallRun<R extends Mergeable>(
	refs: readonly R[],
	maxBytes = Infinity,
	held: ReadonlySet<string> = NONE,
): R[] | null {
	for (let start = 0; start < refs.length; start++) {
		let end = start;
		let total = 0;
		let bytes = 0;
		const fits = (r: R) => end === start || bytes + r.bytes <= maxBytes;
		while (
			end < refs.length &&
			mergeable(refs[end], held) &&
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

/** A newest segment under this many bytes is merged with the one before it whatever their sizes. */
export const TAIL_FLOOR_BYTES = 64 * 1024;

/**
 * The newest segments to merge as they come (null: none): the newest one, with each one before it
 * that is no larger than all after it together (or under TAIL_FLOOR_BYTES), while they are small and
 * in no tier, within `maxBytes` and twice COMPACT_BELOW vectors. Each segment left is then larger
 * than all newer ones together, so the small segments a search reads whole stay a handful however
 * many syncs added a few rows each (not up to MAX_SEGMENTS of them), and a row is rewritten about
 * log2 times on its way to a full segment (not with every MAX_SEGMENTS adds, as the first small
 * segment of a run was).
 */
export function tailRun<R extends Mergeable>(
	refs: readonly R[],
	maxBytes = Infinity,
	held: ReadonlySet<string> = NONE,
): R[] | null {
	const small = (r: R) => mergeable(r, held);
	let start = refs.length - 1;
	if (start < 1 || !small(refs[start])) return null;
	let { count, bytes } = refs[start];
	while (start > 0) {
		const before = refs[start - 1];
		if (!small(before) || bytes + before.bytes > maxBytes) break;
		if (count + before.count > 2 * COMPACT_BELOW) break;
		if (before.bytes > bytes && before.bytes >= TAIL_FLOOR_BYTES) break;
		count += before.count;
		bytes += before.bytes;
		start--;
	}
	return start < refs.length - 1 ? refs.slice(start) : null;
}

/**
 * The segments to merge next (null: none): the newest as they come, or past MAX_SEGMENTS a small run;
 * never one holding a conversation in `held` (a running Forget rewrites those).
 */
export function runToMerge<R extends Mergeable>(
	refs: readonly R[],
	maxBytes = Infinity,
	held: ReadonlySet<string> = NONE,
): R[] | null {
	const tail = tailRun(refs, maxBytes, held);
	return tail ?? (refs.length > MAX_SEGMENTS ? smallRun(refs, maxBytes, held) : null);
}

/**
 * Merges the run runToMerge picks into one segment (superseded chunks dropped), swaps it into the
 * manifest in their place, then deletes them. A concurrent change of that run abandons the merge.
 * Failing to compact never fails the write that triggered it.
 */
export async function compactIndex(index: EmbeddedIndex): Promise<boolean> {
	try {
		const manifest = await index.readManifest(true);
		if (manifest.version === null) return false;
		const held = forgetting(manifest.doc);
		const run = runToMerge(manifest.doc.segments, index.segmentBytes, held);
		return run ? await mergeRun(index, manifest.doc.dimensions, run) : false;
	} catch {
		// Compaction is an optimisation: the segments it would have merged stay as they are.
		return false;
	}
}

/** Writes `run` merged and swaps it in (see compactIndex); false when the run changed meanwhile. */
async function mergeRun(index: EmbeddedIndex, dims: number, run: SegmentRef[]): Promise<boolean> {
	const loaded = await Promise.all(run.map((r) => index.readSegment(r)));
	if (loaded.some((s) => s === null)) return false;
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
		// A Forget that began meanwhile rewrites segments of its conversation: those stay as they are.
		const held = forgetting(cur.doc);
		if (run.some((r) => r.sessions.some((s) => held.has(s)))) return undefined;
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
}
