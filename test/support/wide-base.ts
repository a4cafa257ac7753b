// Shared by the tests of searches across every conversation: a storage that counts requests (by kind
// and key), bytes read and the most requests in flight at once, a way to make a base busy (a lease as
// a sync of the whole base holds it), and a base of many users' conversations to search.
import {
	acquireLease,
	folderNames,
	keyPages,
	listedPages,
	LocalDiskStorage,
	MemoryBase,
	memoryBaseConfigKey,
	memoryBaseLeaseKey,
} from '../../src/internal';
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
} from '../../src/internal';
import { TestEmbedder } from './embeddings';
import { tempDir } from './storages';

/** Counts every request by kind and key, the bytes read, and the most requests in flight at once. */
export class MeteredStorage implements MemoryStorage {
	gets = new Map<string, number>();
	counts = { get: 0, put: 0, delete: 0, list: 0 };
	bytesRead = 0;
	inFlight = 0;
	peak = 0;

	constructor(readonly inner: MemoryStorage) {}

	describe(): string {
		return `metered ${this.inner.describe()}`;
	}

	/** The inner storage's identity: the process's caches are shared with it. */
	identity(): string {
		return this.inner.identity?.() ?? this.inner.describe();
	}

	private async count<T>(kind: keyof MeteredStorage['counts'], run: () => Promise<T>): Promise<T> {
		this.counts[kind]++;
		this.inFlight++;
		this.peak = Math.max(this.peak, this.inFlight);
		try {
			return await run();
		} finally {
			this.inFlight--;
		}
	}

	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	async get(key: string, options: GetOptions = {}): Promise<StoredObject | NotModified | null> {
		this.gets.set(key, (this.gets.get(key) ?? 0) + 1);
		const got = await this.count('get', () => this.inner.get(key, options));
		if (got && 'body' in got) this.bytesRead += got.body.byteLength;
		return got;
	}

	/** Writes by key since the last reset. */
	puts = new Map<string, number>();

	put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ version: string }> {
		this.puts.set(key, (this.puts.get(key) ?? 0) + 1);
		return this.count('put', () => this.inner.put(key, body, options));
	}

	delete(key: string, options?: DeleteOptions): Promise<void> {
		return this.count('delete', () => this.inner.delete(key, options));
	}

	/** The prefixes listed whole (list), in order. */
	listed: string[] = [];

	list(prefix: string): Promise<ListedObject[]> {
		this.listed.push(prefix);
		return this.count('list', () => this.inner.list(prefix));
	}

	listFolders(prefix: string, page?: FolderPage): Promise<string[]> {
		return this.count('list', () => folderNames(this.inner, prefix, page));
	}

	/** The prefixes listed page by page (listPages), in order. */
	paged: string[] = [];

	/** The inner store's pages, each one a list request. */
	listPages(prefix: string, options?: ListOptions): AsyncGenerator<ListedObject[]> {
		return this.counted(prefix, listedPages(this.inner, prefix, options));
	}

	/** The inner store's pages of keys alone, likewise. */
	listKeys(prefix: string): AsyncGenerator<string[]> {
		return this.counted(prefix, keyPages(this.inner, prefix));
	}

	private async *counted<T>(prefix: string, pages: AsyncGenerator<T>): AsyncGenerator<T> {
		this.paged.push(prefix);
		for (;;) {
			const next = await this.count('list', () => pages.next());
			if (next.done) return;
			yield next.value;
		}
	}

	/** Requests since the last reset, and resets. */
	take(): {
		requests: number;
		gets: Map<string, number>;
		puts: Map<string, number>;
		bytes: number;
	} {
		const c = this.counts;
		const out = {
			requests: c.get + c.put + c.delete + c.list,
			gets: this.gets,
			puts: this.puts,
			bytes: this.bytesRead,
		};
		this.counts = { get: 0, put: 0, delete: 0, list: 0 };
		this.gets = new Map();
		this.puts = new Map();
		this.bytesRead = 0;
		this.listed = [];
		this.paged = [];
		return out;
	}
}

/**
 * Runs `fn` while the base's lock is held as a sync of the whole base in another process holds it:
 * searches and captures find the base busy and use it as it stands (no upgrade).
 */
export async function whileBusy<T>(
	storage: MemoryStorage,
	baseId: string,
	fn: () => Promise<T>,
): Promise<T> {
	const lease = await acquireLease(
		storage,
		memoryBaseLeaseKey(baseId),
		{ ttlMs: 60_000, operation: 'sync of the whole base' },
		() => new Error('the base is busy already'),
	);
	try {
		return await fn();
	} finally {
		await lease.release();
	}
}

/** The base's configuration as stored. */
export async function storedConfig(storage: MemoryStorage, baseId: string) {
	const got = await storage.get(memoryBaseConfigKey(baseId));
	return got ? JSON.parse(Buffer.from(got.body).toString('utf8')) : null;
}

/** Rewrites the stored configuration (a test stepping a base back to an earlier state). */
export async function editConfig(
	storage: MemoryStorage,
	baseId: string,
	edit: (config: Record<string, unknown>) => Record<string, unknown>,
): Promise<void> {
	const config = await storedConfig(storage, baseId);
	await storage.put(memoryBaseConfigKey(baseId), Buffer.from(JSON.stringify(edit(config))));
}

/** Words the synthetic users talk about (three per user, some shared). */
const TOPICS = [
	'kayak pricing',
	'canoe pricing',
	'heron sighting',
	'lantern repair',
	'glider rental',
	'pricing plan',
	'orchard harvest',
	'heron nest',
];

/** A base of `users` users with `turns` captured turns each, on a metered local disk. */
export async function manyUsers(options: {
	users: number;
	turns?: number;
	threshold?: number;
	baseId?: string;
	dimensions?: number;
}) {
	const root = tempDir('wide');
	const storage = new MeteredStorage(new LocalDiskStorage({ root }));
	const embedder = new TestEmbedder(options.dimensions ?? 32);
	const baseId = options.baseId ?? 'kb';
	const base = new MemoryBase({
		storage,
		baseId,
		embedder,
		threshold: options.threshold ?? 4,
	});
	const turns = options.turns ?? 6;
	for (let u = 0; u < options.users; u++)
		for (let t = 0; t < turns; t++) {
			const topic = TOPICS[(u + t) % TOPICS.length];
			await base.capture({
				sessionId: `chat-${u}-${t % 2}`,
				userId: `user-${u}`,
				runId: `run-${u}-${t}`,
				messages: [
					{ role: 'user', text: `user ${u} asks about the ${topic} number ${t}` },
					{ role: 'assistant', text: `the ${topic} answer for user ${u} is ${t * 7}` },
				],
			});
		}
	return { root, storage, base, embedder, baseId };
}
