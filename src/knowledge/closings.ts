// Logs a sync closed that the base-wide word index (or a base's single index) still lists. A sync's
// cursor swap is its last write, so the sync closes the log in that swap and leaves the unlisting to
// this process's next write of that index (a sync's, a capture's or a fold's), which carries it at no
// cost of its own. Until then, and if the process ends first, a search reads the closed log for
// nothing (as after a crash between a fold's writes) and a fold unlists it later. An unlisting names
// the opening it closed, so a listing opened since (a newer `gen`) stays.
import { BoundedCache } from '../common/bounded-cache';
import type { ClosedSource, IndexedChunk, LexicalIndex, Listing } from '../indexes';
import { storageIdentity } from '../store/storage';
import type { BaseParts } from './parts';

/** Closings kept per base: past it, the oldest wait for a fold. */
const PER_BASE = 256;

const waiting = new BoundedCache<ClosedSource[]>({ name: 'closed logs listed', maxEntries: 256 });

const baseKey = (p: BaseParts) =>
	JSON.stringify([storageIdentity(p.storage), p.keyPrefix ?? '', p.baseId]);

/** A sync closed this opening of a log that the base-wide index lists. */
export function noteClosed(p: BaseParts, closed: ClosedSource): void {
	const list = waiting.getOrSet(baseKey(p), () => []);
	list.push(closed);
	if (list.length > PER_BASE) list.splice(0, list.length - PER_BASE);
}

/**
 * `listing` with this base's closings added, and what to call once a manifest holding it is written
 * (those closings are then done; any noted meanwhile wait for the next write).
 */
function withClosings(p: BaseParts, listing: Listing): { listing: Listing; written(): void } {
	const key = baseKey(p);
	const taken = [...(waiting.get(key) ?? [])];
	if (taken.length === 0) return { listing, written: () => undefined };
	return {
		listing: { ...listing, closed: [...(listing.closed ?? []), ...taken] },
		written: () => {
			const done = new Set(taken);
			const left = (waiting.get(key) ?? []).filter((c) => !done.has(c));
			if (left.length > 0) waiting.set(key, left);
			else waiting.delete(key);
		},
	};
}

/** Adds to an index of every conversation, carrying this base's closings (see withClosings). */
export async function addCarrying(
	p: BaseParts,
	index: LexicalIndex,
	chunks: IndexedChunk[],
	listing: Listing,
) {
	const carried = withClosings(p, listing);
	const written = await index.add(chunks, carried.listing);
	carried.written();
	return written;
}
