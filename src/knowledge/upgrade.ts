// Upgrading a base's layout, with every lock held, so no sync, Regenerate or Forget runs meanwhile;
// captures and folds go on. Two upgrades, one after the other when both are due:
//   - from one index for the whole base to one partition per user (partitions.ts);
//   - the base-wide index beside the partitions (searches of every conversation read it).
// Steps:
//   1. the configuration says "moving" (a single base) and the base-wide index "building": readers
//      then read the single index and the partitions, and every write of a partition also goes into
//      the base-wide index (a writer that read the configuration before looks again after its write);
//   2. the single indexes are marked moved: a writer that read the layout before (and any later) is
//      refused there by compare-and-swap and writes to the partitions instead, so no write lands where
//      nobody copies it from;
//   3. what was there before is copied, as older than what the targets hold already: the single
//      index's content into the partitions and the base-wide index (its open logs folded), or, for a
//      base already in partitions, every partition's content into the base-wide index (open logs
//      folded);
//   4. the configuration says "partitioned" and the base-wide index "ready"; then the single indexes
//      are emptied (markers kept).
// Interrupted, it leaves "moving" or "building", which every reader and writer handles; the next
// search, capture, sync or Regenerate that finds the base idle starts it again, and copying twice only
// adds copies of the same chunks.
import { IndexDamagedError, SyncRunningError } from '../errors';
import type { IndexedChunk } from '../indexes';
import { BoundedCache } from '../common/bounded-cache';
import { locked } from '../store/lease-locks';
import { storageIdentity } from '../store/storage';
import { BaseIndexes } from './base-indexes';
import type { BaseParts } from './parts';
import { byPart, layoutKind, wideState } from './partitions';
import type { MemoryBaseConfig } from './records';
import { copyVectorsToWide, copyWordsToWide, rowsOf } from './wide';

/** Whether a base is in an older layout than the one bases are created in now. */
export function needsUpgrade(config: MemoryBaseConfig | null): boolean {
	return (
		config !== null &&
		(layoutKind(config) !== 'partitioned' ||
			wideState(config) !== 'ready' ||
			config.wide?.refill !== undefined)
	);
}

/** Step 1 (and 2 for a single base); returns the base's indexes as such (unchanged if up to date). */
export async function beginMove(p: BaseParts): Promise<BaseIndexes> {
	const result = await p.configs.update(p.configKey, (cur) => {
		if (cur.version === null || !needsUpgrade(cur.doc)) return undefined;
		const since = new Date().toISOString();
		const layout = cur.doc.layout ?? 'moving';
		// A refill cut short (a Regenerate's) is copied anew, as a base-wide index being built.
		const wide =
			cur.doc.wide?.refill === undefined
				? (cur.doc.wide ?? { state: 'building' as const, since })
				: { state: 'building' as const, since: cur.doc.wide.since };
		// Begun already (an upgrade cut short): resumed as it stands.
		if (layout === cur.doc.layout && wide === cur.doc.wide) return undefined;
		return { ...cur.doc, layout, wide, updated_at: since };
	});
	const indexes = await BaseIndexes.open(
		p,
		result.current.version === null ? null : result.current.doc,
	);
	if (indexes.kind !== 'moving') return indexes;
	const at = new Date().toISOString();
	await Promise.all([indexes.single().markMoved(at), indexes.singleVectors().markMoved(at)]);
	return indexes;
}

/** Step 4: the base is partitioned, its base-wide index ready; the single indexes are emptied. */
export async function finishMove(p: BaseParts, indexes: BaseIndexes): Promise<void> {
	if (indexes.kind !== 'moving' && indexes.wide !== 'building') return;
	// Made even when there was nothing to copy: from now on a missing one is a lost one.
	await indexes.wideLexical().ensure();
	const now = new Date().toISOString();
	await p.configs.update(p.configKey, (cur) =>
		cur.version === null || !needsUpgrade(cur.doc)
			? undefined
			: {
					...cur.doc,
					layout: 'partitioned',
					wide: { state: 'ready', since: cur.doc.wide?.since ?? now },
					updated_at: now,
				},
	);
	const moving = indexes.kind === 'moving';
	indexes.kind = 'partitioned';
	indexes.wide = 'ready';
	if (!moving) return;
	await indexes.single().retire();
	await indexes.singleVectors().retire();
}

/**
 * Step 3 for words of a single base: its chunks into their partitions, one segment at a time, newest
 * first (each copy listed before the ones already copied: a newer copy of a chunk wins), so no more
 * than one of its segments is held; returns the logs it lists as open (folded once the base-wide
 * index holds the partitions' copies).
 */
export async function copyLexical(p: BaseParts, indexes: BaseIndexes): Promise<string[]> {
	const single = indexes.single();
	const { manifest, missing } = await single.lostSegments();
	if (missing.length > 0) throw new IndexDamagedError(p.baseId, missing, 'lexical');
	if (manifest.version === null) return [];
	const copy = async (docs: IndexedChunk[]) => {
		for (const [part, chunks] of byPart(docs)) await indexes.lexicalPart(part).addOlder(chunks);
	};
	await copy(manifest.doc.tail);
	for (const ref of [...manifest.doc.segments].reverse()) {
		const seg = await single.readSegment(ref);
		if (!seg) throw new IndexDamagedError(p.baseId, [ref.key], 'lexical');
		await copy(seg.docs);
	}
	return (manifest.doc.open ?? []).map((o) => o.session_id);
}

/**
 * Step 3 for vectors of a single base: its rows into their partitions (nothing is embedded again),
 * one segment at a time, newest first.
 */
export async function copyVectors(indexes: BaseIndexes): Promise<void> {
	const single = indexes.singleVectors();
	const manifest = await single.readManifest(true);
	if (manifest.version === null) return;
	for (const ref of [...manifest.doc.segments].reverse()) {
		const seg = await single.readSegment(ref);
		if (!seg) throw new IndexDamagedError(single.kbId, [ref.key]);
		const { chunks, rows } = rowsOf([seg], [new Uint8Array(seg.chunks.length).fill(1)]);
		for (const [part, group] of byPart(chunks))
			await indexes.vectorPart(part).add(
				group,
				group.map((c) => rows.get(c)!),
				{ older: true },
			);
	}
}

/**
 * Upgrades a base in an older layout (or half-way), its locks held by the caller. Returns whether it
 * upgraded anything.
 */
export async function upgradeLayout(p: BaseParts): Promise<boolean> {
	const indexes = await beginMove(p);
	if (indexes.kind !== 'moving' && indexes.wide !== 'building') return false;
	const open = indexes.kind === 'moving' ? await copyLexical(p, indexes) : [];
	if (indexes.kind === 'moving' && !p.external()) await copyVectors(indexes);
	// Then the partitions (the single index's content among them) into the base-wide index, emptied
	// first: what an earlier attempt copied is copied again, and a copy counts once in its statistics
	// (what writers put there meanwhile is in their partitions, copied now; its open logs are kept).
	await indexes.wideLexical().reset();
	if (!p.external()) await indexes.wideVectors().clear();
	await copyWordsToWide(p, indexes, open);
	if (!p.external()) await copyVectorsToWide(p, indexes);
	await finishMove(p, indexes);
	return true;
}

/** How long a process leaves a busy base alone before it tries its upgrade again. */
const BUSY_BACKOFF_MS = 30_000;
/**
 * When this process last found a conversation of a base busy, by storage and base: trying takes the
 * base's lease and then one lease per conversation until one is held, so every capture of a base
 * whose conversations keep syncing would pay that. (The base's own lease held is one read: no wait.)
 */
const busy = new BoundedCache<number>({ name: 'busy bases', maxEntries: 256 });

/**
 * On first use (a search, capture or sync): a base in an older layout is upgraded when every lock can
 * be had now; otherwise (a sync, Regenerate or Forget runs) it is used as it is and a later use
 * upgrades it (after a conversation's sync held it up, this process tries again after BUSY_BACKOFF_MS).
 * Returns the configuration as it is now.
 */
export async function upgradeIfIdle(
	p: BaseParts,
	config: MemoryBaseConfig | null,
): Promise<MemoryBaseConfig | null> {
	if (!needsUpgrade(config)) return config;
	const id = `${storageIdentity(p.storage)}\n${p.configKey}`;
	if (Date.now() - (busy.get(id) ?? 0) < BUSY_BACKOFF_MS) return config;
	try {
		await locked(p.locks, undefined, 'upgrade of the layout', () => upgradeLayout(p));
	} catch (error) {
		if (!(error instanceof SyncRunningError)) throw error;
		if (error.sessionId !== null) busy.set(id, Date.now());
		return config;
	}
	busy.delete(id);
	return p.config();
}

/**
 * An upgrade now (the Manager's Upgrade Memory Base): SyncRunningError when the base is busy. Says
 * whether it upgraded anything and the layout the base is in after it.
 */
export async function upgradeNow(
	p: BaseParts,
): Promise<{ baseId: string; upgraded: boolean; layout: string; wide: string }> {
	const config = await p.config();
	const upgraded =
		needsUpgrade(config) &&
		(await locked(p.locks, undefined, 'upgrade of the layout', () => upgradeLayout(p)));
	const after = upgraded ? await p.config() : config;
	return {
		baseId: p.baseId,
		upgraded,
		layout: after === null ? 'none' : layoutKind(after),
		wide: after === null ? 'none' : wideState(after),
	};
}
