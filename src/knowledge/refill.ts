// Regenerate refills the base-wide index once, from the partitions, instead of writing it with every
// conversation: each write of it rewrites its manifests, which list every segment, so writing it per
// conversation made Regenerate grow with the square of the base (at 1,000 users, 1,427 writes of the
// base-wide vector manifest). Meanwhile:
//   - the configuration says `wide.refill` (records.ts): searches of every conversation still read the
//     base-wide index, whose vectors are missing until the refill ends (no mismatch is raised for that);
//   - Regenerate's own writes go to the partitions only (BaseIndexes.deferred); captures meanwhile
//     write both, as always, and the copy reads their partitions after them;
//   - the words are refilled once every log was read again (before the embedding starts), the
//     vectors at the end.
// Cut short, `refill` stays: the next search, capture or sync that finds the base idle copies the
// partitions into the base-wide index anew, as an upgrade does (upgrade.ts).
import type { BaseIndexes } from './base-indexes';
import type { BaseParts } from './parts';
import { finishMove } from './upgrade';
import { copyVectorsToWide, copyWordsToWide } from './wide';

/** Marks the base-wide index as refilled by this Regenerate, whose writes then skip it. */
export async function beginRefill(p: BaseParts, indexes: BaseIndexes): Promise<void> {
	indexes.deferred.add('lexical').add('vector');
	if (indexes.wide !== 'ready') return; // being built: searches read the partitions meanwhile
	const now = new Date().toISOString();
	await p.configs.update(p.configKey, (cur) =>
		cur.version === null || cur.doc.wide?.state !== 'ready'
			? undefined
			: { ...cur.doc, wide: { ...cur.doc.wide, refill: now }, updated_at: now },
	);
}

/** The base-wide word index anew from the partitions; Regenerate's word writes go there again. */
export async function refillWords(p: BaseParts, indexes: BaseIndexes): Promise<void> {
	await indexes.wideLexical().reset();
	await copyWordsToWide(p, indexes);
	indexes.deferred.delete('lexical');
}

/**
 * The base-wide vector index anew from the partitions (unless `vectors` is false: none changed), and
 * the refill marked done.
 */
export async function endRefill(
	p: BaseParts,
	indexes: BaseIndexes,
	vectors: boolean,
): Promise<void> {
	if (vectors && !p.external()) {
		await indexes.wideVectors().clear();
		await copyVectorsToWide(p, indexes);
	}
	indexes.deferred.delete('vector');
	// finishMove also ends a refill (needsUpgrade holds while `refill` is set).
	indexes.wide = 'building';
	await finishMove(p, indexes);
}
