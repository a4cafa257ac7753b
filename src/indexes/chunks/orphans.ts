// Parts of an index that its manifest does not list: what a writer killed between writing a part and
// listing it (or between a swap and its deletes) left behind. Both indexes sweep them the same way.
import { ConflictError } from '../../errors';
import type { Versioned } from '../../store/document-store';
import { forEachListed } from '../../store/storage';
import type { MemoryStorage } from '../../store/storage';
import { ListedKeys } from './listed';
import type { NamedParts } from './listed';
import { retiredKeys } from './retiring';
import type { Retiring } from './retiring';

/**
 * How old an unlisted part of a tier (a bucket, a codebook) must be before a sweep takes it: a merge of
 * large tiers writes its parts for minutes before its swap lists them.
 */
export const TIER_PART_SWEEP_MS = 60 * 60_000;

/** What a manifest lists of its own parts, besides its tiers'. */
type Listing = Retiring & { segments: ReadonlyArray<{ key: string }> };

/** An index as a sweep sees it: its manifest and where its parts are. */
export interface SweptIndex<D extends Listing> {
	readonly storage: MemoryStorage;
	readonly segmentsPrefix: string;
	readManifest(fresh: boolean): Promise<Versioned<D>>;
	/** Drops a deleted part from the caches. */
	uncacheSegment(key: string): void;
}

/** What kind of index a sweep reads: its tiers' parts (and other keys of them), and how to tell one. */
export interface TierParts<D> {
	tiers(doc: D | undefined): NamedParts[];
	/** A tier part not named by tier and part number (a codebook). */
	keys(doc: D | undefined): string[];
	isTierPart(key: string): boolean;
}

/**
 * The keys a manifest lists as its own: its segments and its tiers' parts; with `retired`, the parts it
 * retired too (kept a while, not to be swept, though they may be deleted any time).
 */
export const listedBy = <D extends Listing>(
	prefix: string,
	tiers: TierParts<D>,
	doc: D | undefined,
	retired = false,
) =>
	new ListedKeys(
		prefix,
		[
			...(doc?.segments.map((r) => r.key) ?? []),
			...tiers.keys(doc),
			...(retired ? retiredKeys(doc) : []),
		],
		tiers.tiers(doc),
	);

/**
 * Deletes the parts the manifest does not list (segments, tier parts, retired parts) that nobody
 * wrote for `olderThanMs` (tier parts: for TIER_PART_SWEEP_MS at least), each only if still unmodified
 * since then (one written again meanwhile is not an orphan). Returns the keys deleted.
 */
export async function sweepUnlisted<D extends Listing>(
	index: SweptIndex<D>,
	tiers: TierParts<D>,
	olderThanMs: number,
): Promise<string[]> {
	const manifest = await index.readManifest(true);
	const doc = manifest.version === null ? undefined : manifest.doc;
	const listed = listedBy(index.segmentsPrefix, tiers, doc, true);
	const now = Date.now();
	const swept: string[] = [];
	await forEachListed(
		index.storage,
		index.segmentsPrefix,
		async (o) => {
			const age = tiers.isTierPart(o.key) ? Math.max(olderThanMs, TIER_PART_SWEEP_MS) : olderThanMs;
			const cutoff = new Date(now - age);
			if (listed.has(o.key) || o.lastModified > cutoff) return;
			try {
				await index.storage.delete(o.key, { ifUnmodifiedSince: cutoff });
			} catch (error) {
				if (error instanceof ConflictError) return;
				throw error;
			}
			index.uncacheSegment(o.key);
			swept.push(o.key);
		},
		{ anyOrder: true },
	);
	return swept;
}
