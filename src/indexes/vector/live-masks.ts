// Which rows of an embedded index's segments a search may return: live (a later segment supersedes an
// earlier copy of a chunk ID) and passing the filter, kept per manifest version and filter.
import { BoundedCache } from '../../common/bounded-cache';
import { isUnfiltered, passes } from '../chunks/filter';
import type { ChunkFilter } from '../chunks/filter';
import type { SegmentRef } from './manifest';
import type { Segment } from './vector-segment';

const liveMasks = new BoundedCache<Uint8Array[]>({ name: 'vector live masks', maxEntries: 64 });

export const clearLiveMasks = () => liveMasks.clear();

/**
 * The rows of the segments `refs` (as loaded) a search may return, for a manifest version and filter
 * of the index cached as `indexId`. Cached, so a user's searches do not test every chunk again, and
 * the int8 pass can skip the rows left out. Version and filter are part of the key: a new manifest
 * version never meets an older one's masks.
 */
export function liveMask(
	indexId: string,
	version: string,
	refs: SegmentRef[],
	loaded: Array<Segment | null>,
	filter: ChunkFilter | 'stats',
): Uint8Array[] {
	const id = `${indexId}\n${version}\n${JSON.stringify(filter)}`;
	const cached = liveMasks.get(id);
	if (cached) return cached;
	const wanted = filter === 'stats' || isUnfiltered(filter) ? undefined : filter;
	const seen = new Set<string>();
	const masks: Uint8Array[] = new Array(refs.length);
	for (let s = refs.length - 1; s >= 0; s--) {
		const seg = loaded[s];
		const mask = new Uint8Array(seg ? seg.chunks.length : 0);
		if (seg)
			for (let r = seg.chunks.length - 1; r >= 0; r--) {
				const chunk = seg.chunks[r];
				if (seen.has(chunk.id)) continue;
				seen.add(chunk.id);
				mask[r] = wanted && !passes(chunk, wanted) ? 0 : 1;
			}
		masks[s] = mask;
	}
	return liveMasks.set(id, masks);
}
