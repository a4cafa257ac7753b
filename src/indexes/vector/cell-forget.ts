// Taking a conversation's rows out of cell tiers without dropping them (a Forget, an expiry): the
// buckets that hold those rows are found by placing the rows with the tier's codebook, and only they
// are written again, each as a new version (a new key) listed in the tier. Dropping the tier instead
// would make every search of the index read its segments until later syncs regrouped them.
import { deleteParts, mapOrUndo, ReadBudget, withBytes } from '../../common/parallel';
import type { IndexedChunk } from '../chunks/chunk';
import { listedAsRead, newPartVersion, REWRITE_BYTES } from '../chunks/tiering';
import { TierLayout } from './cell-layout';
import { bucketBytesOf } from './cell-search';
import { cellBucketKey, cellBucketKeys, decodeCellBucket } from './cell-tiers';
import type { CellFiles, CellTier } from './cell-tiers';
import type { Codebook } from './codebook';
import { cellCount, cellOf } from './codebook';
import type { IndexManifest, SegmentRef } from './manifest';
import { encodeRows, keptRows } from './segment-writer';
import { rowCount } from './vector-segment';

/** A bucket a rewrite needs is not held: the tier is dropped instead (its segments still hold every row). */
class BucketGone extends Error {}

/** A tier with some buckets written again: its new entry, and the bucket keys it wrote and replaced. */
export interface RewrittenTier {
	was: CellTier;
	tier: CellTier;
	written: string[];
	replaced: string[];
	removed: number;
}

/** The tier's buckets that hold the rows `taken` (each placed with the tier's codebook). */
export function bucketsHolding(cb: Codebook, tier: CellTier, taken: TakenRows): Set<number> {
	const d = cb.dimensions;
	const layout = new TierLayout(tier, cellCount(cb));
	const out = new Set<number>();
	taken.ids.forEach((id, i) => {
		const cell = cellOf(cb, taken.vectors.subarray(i * d, (i + 1) * d));
		out.add(layout.bucketOfRow(cell, id));
	});
	return out;
}

/**
 * New versions of the tier's buckets `buckets`, without the rows whose chunk `drop` names; listed
 * nowhere yet (the caller's swap lists the returned entry). On a failure, what it wrote is deleted.
 */
export async function rewriteBuckets(
	files: CellFiles,
	cb: Codebook,
	tier: CellTier,
	buckets: Iterable<number>,
	drop: (chunk: IndexedChunk) => boolean,
): Promise<RewrittenTier> {
	const numbers = [...buckets].sort((x, y) => x - y);
	const undo = (done: Array<{ fresh: string } | undefined>) =>
		deleteParts(
			done.flatMap((d) => (d ? [d.fresh] : [])),
			(k) => files.storage.delete(k),
		);
	// A bucket of a large tier (millions of rows) is megabytes stored, and its rewrite holds it and the
	// one it writes (with a block of chunks decoded): about 2.5 times, within REWRITE_BYTES together.
	const budget = new ReadBudget(REWRITE_BYTES);
	const bytes = 2.5 * bucketBytesOf(tier);
	const results = await mapOrUndo(
		numbers,
		(b) => withBytes(budget, bytes, () => rewriteOne(files, cb, tier, b, drop)),
		undo,
	);
	const written = results.flatMap((r) => (r ? [r.fresh] : []));
	const out: RewrittenTier = { was: tier, tier: { ...tier }, written, replaced: [], removed: 0 };
	const versions = { ...tier.versions };
	for (const r of results) {
		if (!r) continue;
		versions[r.b] = r.version;
		out.replaced.push(r.key);
		out.removed += r.removed;
		out.tier.bytes = Math.max(0, out.tier.bytes + r.bytes);
	}
	out.tier = { ...out.tier, versions, rows: tier.rows - out.removed };
	return out;
}

/** Bucket `b` written again without the rows `drop` names, as a new version; undefined if none went. */
async function rewriteOne(
	files: CellFiles,
	cb: Codebook,
	tier: CellTier,
	b: number,
	drop: (chunk: IndexedChunk) => boolean,
) {
	const key = cellBucketKey(files.segmentsPrefix, tier, b);
	const got = await files.storage.get(key);
	if (!got) throw new BucketGone(key);
	const { segment, cells } = decodeCellBucket(key, got.body, tier, b, cellCount(cb));
	const count = rowCount(segment);
	let removed = 0;
	const keep = (c: IndexedChunk) => {
		if (!drop(c)) return true;
		removed++;
		return false;
	};
	// A block of chunks at a time: the bucket is not decoded whole beside the one written.
	const rows = keptRows(segment, keep, cells);
	const body = encodeRows(segment.dimensions, rows, count, { kind: 'cells' }, true);
	if (removed === 0) return undefined;
	const version = newPartVersion();
	const fresh = cellBucketKey(files.segmentsPrefix, { id: tier.id, versions: { [b]: version } }, b);
	await files.storage.put(fresh, body, { ifVersion: null });
	return { b, key, fresh, version, removed, bytes: body.byteLength - got.body.byteLength };
}

/** Rows taken out of a segment that is in a tier: their chunks' IDs and their vectors, in order. */
export interface TakenRows {
	tier: CellTier;
	ids: string[];
	vectors: Float32Array;
}

/**
 * For each tier that lost rows, its buckets holding them written again (rewriteBuckets); a tier
 * whose buckets are not all held is named in `dropped` instead (as before tiers were kept).
 */
export async function rewriteTiers(
	files: CellFiles,
	codebookOf: (key: string) => Promise<Codebook>,
	taken: readonly TakenRows[],
	drop: (chunk: IndexedChunk) => boolean,
): Promise<{ rewritten: RewrittenTier[]; dropped: Set<string> }> {
	const byTier = new Map<string, TakenRows[]>();
	for (const t of taken) byTier.set(t.tier.id, [...(byTier.get(t.tier.id) ?? []), t]);
	const rewritten: RewrittenTier[] = [];
	const dropped = new Set<string>();
	try {
		for (const list of byTier.values()) {
			const tier = list[0].tier;
			const cb = await codebookOf(tier.codebook);
			const buckets = new Set(list.flatMap((t) => [...bucketsHolding(cb, tier, t)]));
			try {
				rewritten.push(await rewriteBuckets(files, cb, tier, buckets, drop));
			} catch (error) {
				if (!(error instanceof BucketGone)) throw error;
				dropped.add(tier.id);
			}
		}
		return { rewritten, dropped };
	} catch (error) {
		await undoRewrites(files, rewritten);
		throw error;
	}
}

/** Deletes the buckets rewrites wrote (their swap did not happen). */
export async function undoRewrites(files: CellFiles, rewritten: readonly RewrittenTier[]) {
	const keys = rewritten.flatMap((r) => r.written);
	await Promise.all(keys.map((k) => files.storage.delete(k).catch(() => {})));
}

/** Whether each rewritten tier is still listed as the rewrite read it. */
export const stillAsRead = (doc: IndexManifest, rewritten: readonly RewrittenTier[]) =>
	listedAsRead(
		doc.cells?.tiers ?? [],
		rewritten.map((r) => r.was),
	);

/**
 * The manifest with the rewritten tiers in place of what they were, over `segments` (the rewritten
 * segments keep their place): each tier's segments numbered again in order (a segment left empty is
 * gone), and a tier left without segments dropped. Returns the keys that tier stored.
 */
export function withRewritten(
	doc: IndexManifest,
	segments: SegmentRef[],
	rewritten: readonly RewrittenTier[],
	segmentsPrefix: string,
): { doc: IndexManifest; emptied: string[] } {
	const next = new Map(rewritten.map((r) => [r.tier.id, { ...r.tier, segments: 0 }]));
	const placed = segments.map((ref) => {
		const tier = ref.tier && next.get(ref.tier.id);
		return tier ? { ...ref, tier: { id: tier.id, ord: tier.segments++ } } : ref;
	});
	const emptied = [...next.values()].filter((t) => t.segments === 0);
	const tiers = (doc.cells?.tiers ?? []).flatMap((t) => {
		const now = next.get(t.id);
		return !now ? [t] : now.segments === 0 ? [] : [now];
	});
	return {
		doc: { ...doc, segments: placed, cells: { ...doc.cells, tiers } },
		emptied: emptied.flatMap((t) => cellBucketKeys(segmentsPrefix, t)),
	};
}
