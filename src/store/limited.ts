// A storage that lets at most `limit` requests run at once, queueing the rest in order. An operation
// that visits many parts side by side (a Memory Base's partitions, logs, segments, leases) then never
// has more than that many requests in flight, however large the base: a loaded S3 endpoint is not
// flooded, and its client's connection pool is not outgrown (a request waiting for a connection
// times out like one the server never answered). Each request takes its turn alone, so a holder never
// waits for another turn while keeping one: nothing can deadlock.
import { folderNames, keyPages, listedPages, storageIdentity } from './storage';
import type {
	DeleteOptions,
	FolderPage,
	GetOptions,
	ListedObject,
	ListOptions,
	MemoryStorage,
	NotModified,
	PutOptions,
	StoredObject,
} from './storage';

export class LimitedStorage implements MemoryStorage {
	private running = 0;
	private readonly waiting: Array<() => void> = [];
	/** The most requests that ran at once (for tests and benchmarks). */
	peak = 0;
	readonly sweep?: (prefix: string, olderThanMs: number) => Promise<string[]>;

	constructor(
		readonly inner: MemoryStorage,
		readonly limit: number,
	) {
		const sweep = inner.sweep?.bind(inner);
		if (sweep) this.sweep = (prefix, olderThanMs) => this.turn(() => sweep(prefix, olderThanMs));
	}

	private async turn<T>(request: () => Promise<T>): Promise<T> {
		if (this.running >= this.limit) await new Promise<void>((go) => this.waiting.push(go));
		else this.running++;
		this.peak = Math.max(this.peak, this.running);
		try {
			return await request();
		} finally {
			const next = this.waiting.shift();
			// The turn passes straight to the next waiter: the count stays as it is.
			if (next) next();
			else this.running--;
		}
	}

	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	get(key: string, options?: GetOptions): Promise<StoredObject | NotModified | null> {
		return this.turn(() => this.inner.get(key, options ?? {}));
	}

	put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ version: string }> {
		return this.turn(() => this.inner.put(key, body, options));
	}

	delete(key: string, options?: DeleteOptions): Promise<void> {
		return this.turn(() => this.inner.delete(key, options));
	}

	list(prefix: string): Promise<ListedObject[]> {
		return this.turn(() => this.inner.list(prefix));
	}

	listFolders(prefix: string, page?: FolderPage): Promise<string[]> {
		return this.turn(() => folderNames(this.inner, prefix, page));
	}

	listPages(prefix: string, options?: ListOptions): AsyncGenerator<ListedObject[]> {
		return this.inTurns(listedPages(this.inner, prefix, options));
	}

	listKeys(prefix: string): AsyncGenerator<string[]> {
		return this.inTurns(keyPages(this.inner, prefix));
	}

	/** The inner store's pages, each read in a turn of its own (a caller works on a page between turns). */
	private async *inTurns<T>(pages: AsyncGenerator<T>): AsyncGenerator<T> {
		try {
			for (;;) {
				const next = await this.turn(() => pages.next());
				if (next.done) return;
				yield next.value;
			}
		} finally {
			await pages.return(undefined);
		}
	}

	describe(): string {
		return this.inner.describe();
	}

	/** The storage's own: caches are shared with whoever uses it unlimited. */
	identity(): string {
		return storageIdentity(this.inner);
	}
}

/** `storage` with at most `limit` requests at once (a limited one is not wrapped twice). */
export function limitRequests(storage: MemoryStorage, limit: number): MemoryStorage {
	if (storage instanceof LimitedStorage && storage.limit <= limit) return storage;
	return new LimitedStorage(storage, limit);
}
