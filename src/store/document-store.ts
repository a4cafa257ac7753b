import { KeyedQueue } from '../common/keyed-queue';
import { sleep } from '../common/sleep';
import { ConflictError, FlushConflictError } from '../errors';
import { documentCache } from './document-cache';
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
/** The cache's version tag for write-once objects (never compared with storage). */
const IMMUTABLE = 'immutable';

/**
 * Reads and writes whole JSON documents on a MemoryStorage: a cached conditional read, and a
 * compare-and-swap update that re-reads and re-applies its change on every conflict. Every feature that
 * keeps a document (chat memory, and later snapshots and knowledge bases) goes through here.
 * A stored document that cannot be read is an error, never "empty", and is never overwritten.
 */
export class DocumentStore<T> {
	constructor(
		readonly storage: MemoryStorage,
		private readonly codec: DocumentCodec<T>,
		private readonly options: DocumentStoreOptions = {},
	) {}

	private cacheId(key: string): string {
		return `${this.storage.describe()}\n${key}`;
	}

	/** The current document: decoded once per stored version, then a conditional read that skips the body. */
	async read(key: string): Promise<Versioned<T>> {
		const id = this.cacheId(key);
		const cached = documentCache.get<T>(id);
		const got = await this.storage.get(key, { ifNoneMatch: cached?.version });
		if (!got) return { doc: this.codec.empty(), version: null };
		if ('notModified' in got) return { doc: (cached as { doc: T }).doc, version: got.version };
		const doc = documentCache.set(
			id,
			got.version,
			this.codec.decode(key, got.body),
			2 * got.body.byteLength,
		);
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
				const doc = documentCache.set(this.cacheId(key), version, next, 2 * body.byteLength);
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
	 * An object that is never rewritten once created (a sealed segment or index): decoded once per
	 * process, then served from the cache without asking storage. Null when the key does not exist.
	 */
	async readImmutable<U>(key: string, decode: (bytes: Uint8Array) => U): Promise<U | null> {
		const id = this.immutableId(key);
		const cached = documentCache.get<U>(id);
		if (cached) return cached.doc;
		const got = await this.storage.get(key);
		if (!got) return null;
		return documentCache.set(id, IMMUTABLE, decode(got.body), 2 * got.body.byteLength);
	}

	/**
	 * Creates a write-once object (fails if the key exists) and caches `doc`, its decoded form. A create
	 * whose response was lost and was retried finds its own bytes there: that counts as created.
	 */
	async create(key: string, body: Uint8Array, doc: unknown): Promise<void> {
		try {
			await this.storage.put(key, body, { ifVersion: null, contentType: 'application/json' });
		} catch (error) {
			if (!(error instanceof ConflictError)) throw error;
			const there = await this.storage.get(key);
			if (!there || !Buffer.from(there.body).equals(Buffer.from(body))) throw error;
		}
		documentCache.set(this.immutableId(key), IMMUTABLE, doc, 2 * body.byteLength);
	}

	private immutableId(key: string): string {
		return `immutable\n${this.cacheId(key)}`;
	}

	/** Deletes the document (and forgets its cached copy). */
	async delete(key: string): Promise<void> {
		documentCache.delete(this.cacheId(key));
		await this.storage.delete(key);
	}

	/** Deletes a write-once object (and forgets its cached copy). */
	async deleteImmutable(key: string): Promise<void> {
		documentCache.delete(this.immutableId(key));
		await this.storage.delete(key);
	}
}
