// Merging a lexical index's segments: FAN segments of one level become one of the next, so an index
// of n chunks keeps O(log n) segments. An index may cap its segments' size (the base-wide one, whose
// searches read them one after another): past the cap, segments stay as they are.
import { IndexDamagedError } from '../../errors';
import { isGone } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import type { SegmentFiles } from './forget';
import type { LexicalRef, LexicalSegment } from './segment';

/** Segments of one level merged into one of the next. */
export const FAN = 8;

/**
 * Whether a segment of `count` chunks is past half the `cap`: no merge takes it again (two of its size
 * would pass the cap), so it is as settled as a full one, and goes into a tier however new.
 */
export const pastHalf = (count: number, cap: number) => 2 * count > cap;

/**
 * How many of the newest segments are due to merge (0: none). FAN of one level, or of two next to each
 * other (adds of mixed sizes, as many conversations' chunks at once beside a few, must not stop
 * merging), holding no more than `cap` chunks together. Where FAN of them would pass the cap, as many
 * of one level as the cap takes whole (at least two): an index of capped segments then keeps them near
 * the cap, not FAN times smaller (each one is a read for a search that needs a chunk of it). No group
 * takes a segment past half the cap (pastHalf) or one in a tier: a merge never makes a tier stale.
 */
export function dueCount(refs: readonly LexicalRef[], cap: number): number {
	const total = (group: readonly LexicalRef[]) => group.reduce((n, r) => n + r.count, 0);
	const settled = (group: readonly LexicalRef[]) =>
		group.some((r) => pastHalf(r.count, cap) || r.tier !== undefined);
	if (refs.length >= FAN) {
		const group = refs.slice(-FAN);
		const top = Math.max(...group.map((r) => r.level));
		if (group.some((r) => r.level < top - 1)) return 0;
		if (total(group) <= cap && !settled(group)) return FAN;
	}
	const last = refs[refs.length - 1];
	if (!last || !Number.isFinite(cap)) return 0;
	// FAN of its size would fit: the FAN rule merges them once there are FAN.
	const fit = Math.floor(cap / Math.max(1, last.count));
	if (fit < 2 || fit >= FAN) return 0;
	const group = refs.slice(-fit);
	if (group.length < fit || group.some((r) => r.level !== last.level)) return 0;
	return total(group) <= cap && !settled(group) ? fit : 0;
}

/**
 * While some of the newest segments are due (dueCount), merges them into one of the level above.
 * Returns the segment list; `written` and `merged` collect the segments written and replaced.
 */
export async function mergeDue(
	files: SegmentFiles,
	refs: LexicalRef[],
	out: { written: string[]; merged: string[]; cap: number },
): Promise<LexicalRef[]> {
	for (let n = dueCount(refs, out.cap); n > 0; n = dueCount(refs, out.cap)) {
		const group = refs.slice(-n);
		const top = Math.max(...group.map((r) => r.level));
		const loaded = await Promise.all(group.map((r) => files.readSegment(r)));
		if (loaded.some((s) => s === null))
			throw new IndexDamagedError(
				files.name,
				group.map((r) => r.key),
			);
		const byId = new Map<string, IndexedChunk>();
		for (const seg of loaded as LexicalSegment[])
			for (const d of seg.docs) {
				if (isGone(d)) continue;
				byId.delete(d.id); // a later copy wins and takes the later place
				byId.set(d.id, d);
			}
		const ref = await files.writeSegment(top + 1, [...byId.values()]);
		out.written.push(ref.key);
		out.merged.push(...group.map((r) => r.key));
		refs = [...refs.slice(0, -n), ref];
	}
	return refs;
}
