// One read of each manifest per search: the indexes a search opens share its reads, so the health
// check and both rankings see the same manifest version and storage is asked once. A search that must
// look again (a segment gone since, a source that moved past its listing) asks for a fresh read.

/** The manifest reads of one search (or one Status), by manifest key. */
export class ManifestReads {
	private readonly reads = new Map<string, Promise<unknown>>();

	/** The read of `key` this search made, or a new one (always with `fresh`). */
	once<T>(key: string, read: () => Promise<T>, fresh = false): Promise<T> {
		const known = this.reads.get(key);
		if (known && !fresh) return known as Promise<T>;
		const next = read();
		this.reads.set(key, next);
		return next;
	}
}
