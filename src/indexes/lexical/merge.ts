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
 * While the newest FAN segments are of one level, or of two next to each other (adds of mixed
 * sizes, as many conversations' chunks at once beside a few, must not stop merging), and hold no
 * more than `cap` chunks together, merges them into one of the level above. Returns the segment list;
 * `written` and `merged` collect the segments written and replaced.
 */
export async function mergeDue(
	files: SegmentFiles,
	refs: LexicalRef[],
	out: { written: string[]; merged: string[]; cap: number },
): Promise<LexicalRef[]> {
	while (refs.length >= FAN) {
		const group = refs.slice(-FAN);
		const top = Math.max(...group.map((r) => r.level));
		if (group.some((r) => r.level < top - 1)) break;
		if (group.reduce((n, r) => n + r.count, 0) > out.cap) break;
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
		refs = [...refs.slice(0, -FAN), ref];
	}
	return refs;
}
