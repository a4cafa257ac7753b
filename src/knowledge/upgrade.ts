// Moving a base from one index for the whole base to one partition per user (partitions.ts), with
// every lock held, so no sync, Regenerate or Forget runs meanwhile; captures and folds go on:
//   1. the configuration says "moving": readers then read the single index and the partitions;
//   2. both single indexes are marked moved: a writer that read the layout before (and any later)
//      is refused there by compare-and-swap and writes to the partitions instead, so no write lands
//      where nobody copies it from;
//   3. their content is copied into the partitions as older than what those hold already, and the
//      logs the single index listed as open are folded (into the partitions);
//   4. the configuration says "partitioned"; then the single indexes are emptied (markers kept).
// Interrupted, it leaves "moving", which every reader and writer handles; the next sync or
// Regenerate starts it again, and copying twice only adds copies of the same chunks.
import { IndexDamagedError, SyncRunningError } from '../errors';
import type { IndexedChunk } from '../indexes';
import { locked } from '../store/lease-locks';
import { BaseIndexes } from './base-indexes';
import { fold, FOLD_BATCH } from './log-folding';
import type { BaseParts } from './parts';
import { byPart, layoutKind } from './partitions';
import type { MemoryBaseConfig } from './records';

/** Steps 1 and 2: the base is moving; returns its indexes as such (unchanged if partitioned). */
export async function beginMove(p: BaseParts): Promise<BaseIndexes> {
	const result = await p.configs.update(p.configKey, (cur) =>
		cur.version === null || cur.doc.layout !== undefined
			? undefined
			: { ...cur.doc, layout: 'moving', updated_at: new Date().toISOString() },
	);
	const indexes = await BaseIndexes.open(
		p,
		result.current.version === null ? null : result.current.doc,
	);
	if (indexes.kind !== 'moving') return indexes;
	const at = new Date().toISOString();
	await Promise.all([indexes.single().markMoved(at), indexes.singleVectors().markMoved(at)]);
	return indexes;
}

/** Step 4: the base is partitioned; the single indexes are emptied. */
export async function finishMove(p: BaseParts, indexes: BaseIndexes): Promise<void> {
	if (indexes.kind !== 'moving') return;
	await p.configs.update(p.configKey, (cur) =>
		cur.version === null || cur.doc.layout !== 'moving'
			? undefined
			: { ...cur.doc, layout: 'partitioned', updated_at: new Date().toISOString() },
	);
	indexes.kind = 'partitioned';
	await indexes.single().retire();
	await indexes.singleVectors().retire();
}

/** The live chunks of loaded segments (a later copy of an ID wins), in their order. */
function liveChunks(segments: Array<{ docs: IndexedChunk[] }>): IndexedChunk[] {
	const seen = new Set<string>();
	const out: IndexedChunk[] = [];
	for (let s = segments.length - 1; s >= 0; s--)
		for (let d = segments[s].docs.length - 1; d >= 0; d--) {
			const doc = segments[s].docs[d];
			if (seen.has(doc.id)) continue;
			seen.add(doc.id);
			out.push(doc);
		}
	return out.reverse();
}

/** Step 3 for words: the single index's chunks into their partitions, then its open logs folded. */
export async function copyLexical(p: BaseParts, indexes: BaseIndexes): Promise<void> {
	const single = indexes.single();
	const all = await single.loadAll();
	if (all.missing.length > 0) throw new IndexDamagedError(p.baseId, all.missing, 'lexical');
	for (const [part, chunks] of byPart(liveChunks(all.loaded)))
		await indexes.lexicalPart(part).addOlder(chunks);
	const open = (all.manifest.doc.open ?? []).map((o) => o.session_id);
	for (let i = 0; i < open.length; i += FOLD_BATCH) await fold(p, open.slice(i, i + FOLD_BATCH));
}

/** Step 3 for vectors: the single index's rows into their partitions (nothing is embedded again). */
export async function copyVectors(indexes: BaseIndexes): Promise<void> {
	const { segments, masks } = await indexes.singleVectors().loadFor({});
	const rows = new Map<IndexedChunk, number[]>();
	const chunks: IndexedChunk[] = [];
	segments.forEach((seg, s) =>
		seg.chunks.forEach((c, r) => {
			if (!masks[s][r]) return;
			chunks.push(c);
			const at = r * seg.dimensions;
			rows.set(c, Array.from(seg.vectors.subarray(at, at + seg.dimensions)));
		}),
	);
	for (const [part, group] of byPart(chunks))
		await indexes.vectorPart(part).add(
			group,
			group.map((c) => rows.get(c)!),
			{ older: true },
		);
}

/**
 * Moves a base still in one index (or half-way) to partitions, its locks held by the caller.
 * Returns whether it moved one.
 */
export async function movePartitions(p: BaseParts): Promise<boolean> {
	const indexes = await beginMove(p);
	if (indexes.kind !== 'moving') return false;
	await copyLexical(p, indexes);
	if (!p.external()) await copyVectors(indexes);
	await finishMove(p, indexes);
	return true;
}

/**
 * Before a sync writes: a base from before partitions is moved first, when every lock can be had now;
 * otherwise (a sync or Regenerate runs) the sync goes on as it is and a later one moves it.
 */
export async function upgradeBeforeSync(p: BaseParts, config: MemoryBaseConfig | null) {
	if (layoutKind(config) === 'partitioned') return;
	try {
		await locked(p.locks, undefined, 'upgrade to partitions', () => movePartitions(p));
	} catch (error) {
		if (!(error instanceof SyncRunningError)) throw error;
	}
}
