// Emptying a lexical index in one compare-and-swap, then deleting what it held: a moved index for
// good, or any index for a rebuild. What it lists as retired (chunks/retiring.ts) goes too.
import { forEachListed } from '../../store/storage';
import type { NamedParts } from '../chunks/listed';
import { retiredKeys } from '../chunks/retiring';
import type { LexicalIndex } from './lexical-index';
import { emptyManifest } from './manifest';
import { OPEN_STALE_MS } from './open-sources';
import { bucketKey, termParts } from './tiers';

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
 * running write is younger). Tier buckets are named one at a time, not held as a list of keys.
 */
export async function resetIndex(index: LexicalIndex): Promise<void> {
	let listed: string[] = [];
	let tiers: NamedParts[] = [];
	await index.update((cur) => {
		// A missing manifest reads as an empty one.
		listed = [...cur.doc.segments.map((r) => r.key), ...retiredKeys(cur.doc)];
		tiers = termParts(cur.doc);
		return { ...emptyManifest(), ...(cur.doc.open ? { open: cur.doc.open } : {}) };
	});
	for (const key of listed) await index.deleteSegment(key);
	for (const { tier, count } of tiers)
		for (let b = 0; b < count; b++)
			await index.deleteSegment(bucketKey(index.segmentsPrefix, tier, b));
	const old = Date.now() - OPEN_STALE_MS;
	await forEachListed(
		index.storage,
		index.segmentsPrefix,
		async (o) => {
			if (o.lastModified.getTime() < old) await index.deleteSegment(o.key);
		},
		{ anyOrder: true },
	);
}
