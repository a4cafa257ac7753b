import { KeyedQueue } from '../common/keyed-queue';
import { sleep } from '../common/sleep';
import { ConflictError, FlushConflictError } from '../errors';
import { deepFreeze, documentCache } from './document-cache';
import { storageIdentity } from './storage';
import type { MemoryStorage } from './storage';

/** How one kind of document is stored. decode must refuse (throw) anything it cannot fully read. */
export interface DocumentCodec<T> {
	decode(key: string, bytes: Uint8Array): T;
	encode(doc: T): Uint8Array;
	empty(): T;
}

/** A document with the stored version it was read at; version null means the key does not exist yet. */
export interface Versioned<T> {
	doc: T;
	version: string | null;
}

export interface UpdateResult<T> {
	written: boolean;
	attempts: number;
	/** The stored document after the update (or as found, when nothing was written). */
	current: Versioned<T>;
}

export interface DocumentStoreOptions {
	/** Conditional-write attempts before update() gives up (default 12). */
	maxAttempts?: number;
	/** First retry delay in ms; doubles per attempt, capped at 1 s, with full jitter (default 5). */
	retryBaseMs?: number;
}

/** Updates of one document by this process run one after another: they would only conflict. */
const updates = new KeyedQueue();
/** The cache's version tag for write-once objects under random names (never compared with storage). */
const WRITE_ONCE = 'write-once';

/**
 * Reads and writes whole JSON documents on a MemoryStorage: a cached conditional read, and a
 * compare-and-swap update that re-reads and re-applies its change on every conflict. Every feature that
 * keeps a document (chat memory, versioned data, the Memory Base) goes through here.
 * A stored document that cannot be read is an error, never "empty", and is never overwritten.
 *
 * The cache rule: a decoded object is served without asking storage only when its key can never be
 * deleted and created again with other bytes (write-once objects under random names: readWriteOnce).
 * Everything else, including write-once objects under reusable names such as version numbers, is
 * re-validated with a conditional read each time (read, readObject), so a delete or an overwrite by
 * any process is seen at once.
 */
export class DocumentStore<T> {
	constructor(
		readonly storage: MemoryStorage,
		private readonly codec: DocumentCodec<T>,
		private readonly options: DocumentStoreOptions = {},
	) {}

	private cacheId(key: string): string {
		return `${storageIdentity(this.storage)}\n${key}`;
	}

	/** The document as this process last read it (no request), or undefined: a guess, until read. */
	cached(key: string): T | undefined {
		return (documentCache.get(this.cacheId(key)) as { doc: T } | undefined)?.doc;
	}

	/** The current document: decoded once per stored version, then a conditional read that skips the body. */
	async read(key: string): Promise<Versioned<T>> {
		const got = await this.readObject(key, (bytes) => this.codec.decode(key, bytes));
		return got ?? { doc: this.codec.empty(), version: null };
	}

	/**
	 * Any object whose key may be deleted and written again (a version object, say), decoded by
	 * `decode`: one conditional read each time, the body transferred and decoded only when its stored
	 * version changed. Null when the key does not exist.
	 */
	async readObject<U>(key: string, decode: (bytes: Uint8Array) => U): Promise<Versioned<U> | null> {
		const id = this.cacheId(key);
		const cached = documentCache.get(id);
		const got = await this.storage.get(key, { ifNoneMatch: cached?.version });
		if (!got) {
			documentCache.delete(id);
			return null;
		}
		if ('notModified' in got) return { doc: (cached as { doc: U }).doc, version: got.version };
		const doc = deepFreeze(decode(got.body));
		documentCache.set(id, { version: got.version, doc }, { weight: 2 * got.body.byteLength });
		return { doc, version: got.version };
	}

	/**
	 * Compare-and-swap update. `change` gets the current document and returns the next one, or undefined
	 * when there is nothing to write; it must not modify what it is given (cached documents are frozen).
	 * It may be async (it may read or create other objects first, e.g. write-once segments the next
	 * document will reference). On a conflict the document is read again and `change` applied again, with
	 * jittered backoff. `assumed` is a version the caller already holds, tried first instead of reading.
	 */
	update(
		key: string,
		change: (current: Versioned<T>) => T | undefined | Promise<T | undefined>,
		assumed?: Versioned<T>,
	): Promise<UpdateResult<T>> {
		return updates.run(this.cacheId(key), () => this.updateNow(key, change, assumed));
	}

	/**
	 * The version this process last read or wrote, without asking storage: a guess to hand update() as
	 * `assumed` (a wrong guess costs one failed conditional write, then a read). Undefined when unknown.
	 */
	lastKnown(key: string): Versioned<T> | undefined {
		const cached = documentCache.get(this.cacheId(key));
		return cached ? { doc: cached.doc as T, version: cached.version } : undefined;
	}

	private async updateNow(
		key: string,
		change: (current: Versioned<T>) => T | undefined | Promise<T | undefined>,
		assumed?: Versioned<T>,
	): Promise<UpdateResult<T>> {
		const maxAttempts = this.options.maxAttempts ?? 12;
		const baseMs = this.options.retryBaseMs ?? 5;
		let current = assumed ?? (await this.read(key));
		for (let attempt = 1; ; attempt++) {
			const next = await change(current);
			if (next === undefined) return { written: false, attempts: attempt, current };
			const body = this.codec.encode(next);
			try {
				const { version } = await this.storage.put(key, body, {
					ifVersion: current.version,
					contentType: 'application/json',
				});
				const doc = deepFreeze(next);
				documentCache.set(this.cacheId(key), { version, doc }, { weight: 2 * body.byteLength });
				return { written: true, attempts: attempt, current: { doc, version } };
			} catch (error) {
				if (!(error instanceof ConflictError)) throw error;
				if (attempt >= maxAttempts) throw new FlushConflictError(key, attempt);
			}
			await sleep(Math.random() * Math.min(1000, baseMs * 2 ** (attempt - 1)));
			current = await this.read(key);
		}
	}

	/**
	 * A write-once object under a random name (a sealed segment or block): decoded once per process, then
	 * served from the cache without asking storage. Only for keys that are never reused: a key that can
	 * be deleted and created again with other bytes must be read with readObject. Null when missing.
	 */
	async readWriteOnce<U>(key: string, decode: (bytes: Uint8Array) => U): Promise<U | null> {
		const id = this.writeOnceId(key);
		const cached = documentCache.get(id);
		if (cached) return cached.doc as U;
		const got = await this.storage.get(key);
		if (!got) return null;
		const doc = deepFreeze(decode(got.body));
		documentCache.set(id, { version: WRITE_ONCE, doc }, { weight: 2 * got.body.byteLength });
		return doc;
	}

	/**
	 * Creates a write-once object (fails if the key exists) and caches `doc`, its decoded form: for good
	 * under a random name (`reusableKey` false, the default), else for the version storage gave it. A
	 * create whose response was lost and was retried finds its own bytes there: that counts as created.
	 */
	async create(
		key: string,
		body: Uint8Array,
		doc: unknown,
		options: { reusableKey?: boolean } = {},
	): Promise<void> {
		let version: string;
		try {
			({ version } = await this.storage.put(key, body, {
				ifVersion: null,
				contentType: 'application/json',
			}));
		} catch (error) {
			if (!(error instanceof ConflictError)) throw error;
			const there = await this.storage.get(key);
			if (!there || !Buffer.from(there.body).equals(Buffer.from(body))) throw error;
			version = there.version;
		}
		const entry = { doc: deepFreeze(doc), weight: 2 * body.byteLength };
		if (options.reusableKey)
			documentCache.set(this.cacheId(key), { version, doc: entry.doc }, entry);
		else documentCache.set(this.writeOnceId(key), { version: WRITE_ONCE, doc: entry.doc }, entry);
	}

	/**
	 * Keeps a value derived from the object at `key` as stored at `version` (e.g. the version record a
	 * branch head points to): recall() gives it back only while the object is still at that version.
	 */
	remember<U>(key: string, version: string, value: U): U {
		const doc = deepFreeze(value);
		documentCache.set(this.derivedId(key), { version, doc }, { weight: 1024 });
		return doc;
	}

	recall<U>(key: string, version: string): U | undefined {
		const cached = documentCache.get(this.derivedId(key));
		return cached?.version === version ? (cached.doc as U) : undefined;
	}

	private derivedId(key: string): string {
		return `derived\n${this.cacheId(key)}`;
	}

	private writeOnceId(key: string): string {
		return `write-once\n${this.cacheId(key)}`;
	}

	/** Deletes the document (and forgets its cached copy). */
	async delete(key: string): Promise<void> {
		documentCache.delete(this.cacheId(key));
		await this.storage.delete(key);
	}

	/** Deletes a write-once object (and forgets its cached copy). */
	async deleteWriteOnce(key: string): Promise<void> {
		documentCache.delete(this.writeOnceId(key));
		await this.storage.delete(key);
	}
}

/**
 * Drops this process's cached copies of every object under `prefix` (documents, write-once objects and
 * what was derived from them): what a delete or an overwriting import just made stale. Other processes
 * re-validate on their next read.
 */
export function forgetCachedUnder(storage: MemoryStorage, prefix: string): void {
	const id = `${storageIdentity(storage)}\n${prefix}`;
	for (const form of ['', 'write-once\n', 'derived\n']) documentCache.deletePrefix(form + id);
}
