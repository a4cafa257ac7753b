// What a process keeps of vector indexes it read: decoded segments, and the buckets of cell tiers its
// searches read. Names of both are random and never reused (a Forget writes a new version under a new
// name), so an entry is valid for as long as it is kept; whoever deletes one drops it here too
// (EmbeddedIndex.uncacheSegment), and no reader reaches it again through a manifest (read with a
// conditional read each search).
import { BoundedCache } from '../../common/bounded-cache';
import type { MemoryStorage } from '../../store/storage';
import { weightOf } from './vector-segment';
import type { Segment } from './vector-segment';

/** Bytes of decoded segments this process keeps, for every index together (LLM_MEMORY_VECTOR_CACHE_MB). */
export const VECTOR_CACHE_BYTES = (Number(process.env.LLM_MEMORY_VECTOR_CACHE_MB) || 512) * 2 ** 20;

/** Decoded segments by storage and key. */
export const segments = new BoundedCache<Segment>({
	name: 'vector segments',
	maxWeight: VECTOR_CACHE_BYTES,
});

/** The buckets' share of the vector cache, and of an index's own cap. */
const SHARE = 4;

/**
 * Decoded buckets by storage and key, apart from the segments: a search of every conversation (a
 * hundred buckets on a large base) never pushes out the segments one user's searches keep.
 */
export const cellBuckets = new BoundedCache<Segment>({
	name: 'vector cell buckets',
	maxWeight: VECTOR_CACHE_BYTES / SHARE,
});

/**
 * A bucket decoded (and checked) by `decode` once per process, `id` its cache key; null when storage
 * does not hold it. `groupMax`: the index's cap, of which buckets take a quarter.
 */
export async function readCellBucket(
	storage: MemoryStorage,
	id: string,
	key: string,
	decode: (body: Uint8Array) => Segment,
	cap: { group: string; groupMax?: number },
): Promise<Segment | null> {
	const cached = cellBuckets.get(id);
	if (cached) return cached;
	const got = await storage.get(key);
	if (!got) return null;
	const bucket = decode(got.body);
	return cellBuckets.set(id, bucket, {
		weight: weightOf(bucket),
		group: cap.group,
		groupMax: cap.groupMax === undefined ? undefined : cap.groupMax / SHARE,
	});
}
