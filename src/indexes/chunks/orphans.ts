// Parts of an index that its manifest does not list: what a writer killed between writing a part and
// listing it (or between a swap and its deletes) left behind. Both indexes sweep them the same way.
import { ConflictError } from '../../errors';
import type { MemoryStorage } from '../../store/storage';

/**
 * How old an unlisted part of a tier (a bucket, a codebook) must be before a sweep takes it: a merge of
 * large tiers writes its parts for minutes before its swap lists them.
 */
export const TIER_PART_SWEEP_MS = 60 * 60_000;

/** An index's stored parts as a sweep sees them. */
export interface SweptIndex {
	readonly storage: MemoryStorage;
	readonly segmentsPrefix: string;
	/** Every key the manifest as read now lists (segments, tier parts, retired ones). */
	listed: ReadonlySet<string>;
	isTierPart(key: string): boolean;
	/** Drops a deleted part from the caches. */
	uncache(key: string): void;
}

/**
 * Deletes the parts the manifest does not list that nobody wrote for `olderThanMs` (tier parts: for
 * TIER_PART_SWEEP_MS at least), each only if still unmodified since then (one written again meanwhile
 * is not an orphan). Returns the keys deleted.
 */
export async function sweepUnlisted(index: SweptIndex, olderThanMs: number): Promise<string[]> {
	const now = Date.now();
	const swept: string[] = [];
	for (const o of await index.storage.list(index.segmentsPrefix)) {
		const age = index.isTierPart(o.key) ? Math.max(olderThanMs, TIER_PART_SWEEP_MS) : olderThanMs;
		const cutoff = new Date(now - age);
		if (index.listed.has(o.key) || o.lastModified > cutoff) continue;
		try {
			await index.storage.delete(o.key, { ifUnmodifiedSince: cutoff });
		} catch (error) {
			if (error instanceof ConflictError) continue;
			throw error;
		}
		index.uncache(o.key);
		swept.push(o.key);
	}
	return swept;
}
