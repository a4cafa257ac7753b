// Emptying a lexical index in one compare-and-swap, then deleting what it held: a moved index for
// good, or any index for a rebuild. What it lists as retired (chunks/retiring.ts) goes too.
import { forEachListed } from '../../store/storage';
import { retiredKeys } from '../chunks/retiring';
import type { LexicalIndex } from './lexical-index';
import { emptyManifest } from './manifest';
import { OPEN_STALE_MS } from './open-sources';
import { bucketKeys } from './tiers';

/** Empties a moved index for good (its marker stays, so a late writer is still refused). */
export async function emptyMoved(index: LexicalIndex): Promise<string[]> {
	let listed: string[] = [];
	await index.update(
		(cur) => {
			if (cur.version === null || cur.doc.moved_at === undefined) return undefined;
			listed = [...cur.doc.segments.map((r) => r.key), ...retiredKeys(cur.doc)];
			return { ...emptyManifest(), moved_at: cur.doc.moved_at };
		},
		{ onMoved: 'allow' },
	);
	for (const key of listed) await index.deleteSegment(key);
	return listed;
}

/**
 * Empties the index for a rebuild in one compare-and-swap to a new manifest that keeps the open
 * sources (one listed meanwhile is never lost), then deletes the segments, tier buckets and retired
 * parts the old one listed, and unlisted ones older than OPEN_STALE_MS (left by crashed writers; a
 * running write is younger).
 */
export async function resetIndex(index: LexicalIndex): Promise<void> {
	let listed: string[] = [];
	await index.update((cur) => {
		// A missing manifest reads as an empty one.
		const tiers = (cur.doc.terms ?? []).flatMap((t) => bucketKeys(index.segmentsPrefix, t));
		listed = [...cur.doc.segments.map((r) => r.key), ...tiers, ...retiredKeys(cur.doc)];
		return { ...emptyManifest(), ...(cur.doc.open ? { open: cur.doc.open } : {}) };
	});
	const old = Date.now() - OPEN_STALE_MS;
	const stale: string[] = [];
	await forEachListed(index.storage, index.segmentsPrefix, (o) => {
		if (o.lastModified.getTime() < old) stale.push(o.key);
	});
	for (const key of new Set([...listed, ...stale])) await index.deleteSegment(key);
}
