// What one search reads, and how much at once. Parts of a large index (word segments, vector
// segments, cell buckets) are read up to WINDOW at a time by each reader, unless together they take
// more than WINDOW_BYTES (large vectors: one at a time), and all readers of one search together hold
// at most SEARCH_BYTES.bytes of what they are reading (common/parallel.ts: ReadBudget), so what a
// search holds of what it read is bounded in bytes as well as in parts, whatever the dimensions. Each
// manifest is read once per search: the indexes a search opens share its reads, so the health check
// and both rankings see the same manifest version and storage is asked once. A search that must look
// again (a segment gone since, a source that moved past its listing) asks for a fresh read.
import { ReadBudget } from '../../common/parallel';

/** Parts read at once, at most… */
export const WINDOW = 4;
/** …unless together they take more bytes than this. */
export const WINDOW_BYTES = 8 * 2 ** 20;

const SEARCH_READS = { window: WINDOW, bytes: WINDOW_BYTES };

/** A reader's limits within a search: its window, and the search's budget when it has one. */
export const searchLimits = (reads?: SearchReads) => ({ ...SEARCH_READS, budget: reads?.budget });

/**
 * Bytes all readers of one search hold of what they are reading, together: the word ranking's and the
 * vector ranking's windows and the segments of the best matches (an object: tests lower it).
 */
export const SEARCH_BYTES = { bytes: 12 * 2 ** 20 };

/** The reads of one search (or one Status): each manifest once, by key, and the bytes read at once. */
export class SearchReads {
	private readonly reads = new Map<string, Promise<unknown>>();
	readonly budget = new ReadBudget(SEARCH_BYTES.bytes);

	/** The read of `key` this search made, or a new one (always with `fresh`). */
	once<T>(key: string, read: () => Promise<T>, fresh = false): Promise<T> {
		const known = this.reads.get(key);
		if (known && !fresh) return known as Promise<T>;
		const next = read();
		this.reads.set(key, next);
		return next;
	}
}
