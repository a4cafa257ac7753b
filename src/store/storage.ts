import { StorageError } from '../errors';

/** A stored object with the version a conditional write must name to replace it. */
export interface StoredObject {
	body: Uint8Array;
	version: string;
}

/** get() with ifNoneMatch: the stored version is still the one named, so the body was not sent. */
export interface NotModified {
	notModified: true;
	version: string;
}

export interface GetOptions {
	/** Skip the body when the stored version is this one (S3: If-None-Match on GetObject). */
	ifNoneMatch?: string;
}

export interface ListedObject {
	key: string;
	version: string;
	size: number;
	lastModified: Date;
}

export interface DeleteOptions {
	ifVersion?: string;
	ifUnmodifiedSince?: Date;
}

export interface PutOptions {
	/**
	 * Compare-and-swap guard: `null` means "create only; fail if the key exists", a string means
	 * "replace only that version". Omitted means an unconditional write.
	 * A failed guard throws ConflictError.
	 */
	ifVersion?: string | null;
	contentType?: string;
}

/** Object storage for memory documents and files. Keys are validated "/"-separated paths. */
export interface MemoryStorage {
	/** The object, or null when the key does not exist. */
	get(key: string): Promise<StoredObject | null>;
	/** The same, or NotModified when the stored version equals options.ifNoneMatch. */
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	/** Writes the whole object atomically and returns its new version. */
	put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ version: string }>;
	/**
	 * Deletes the key; a missing key is not an error. With ifVersion, a key whose version changed is
	 * kept and ConflictError thrown; with ifUnmodifiedSince, likewise a key written after that time
	 * (S3 ETags of identical bytes are equal, so only the time shows a re-write). Exact on disk; on S3
	 * a HEAD check just before the delete.
	 */
	delete(key: string, options?: DeleteOptions): Promise<void>;
	/** Every key that starts with the prefix, in no particular order. */
	list(prefix: string): Promise<ListedObject[]>;
	/**
	 * The same listing a page at a time (S3: one ListObjectsV2 page each; disk: a bounded batch of a
	 * folder walk), so a caller that keeps only what it derives holds one page, not the whole listing.
	 * The keys of one folder come together (S3 lists in key order; disk walks one folder at a time).
	 * Stores without it are listed whole, as one page (listedPages).
	 */
	listPages?(prefix: string, options?: ListOptions): AsyncIterable<ListedObject[]>;
	/**
	 * Only the keys under `prefix`, a page at a time and in no order (keyPages): for a caller that needs
	 * no version, size or time, which on disk cost a file's metadata read each (tens of thousands in an
	 * index's folder). Stores without it give their listing's keys.
	 */
	listKeys?(prefix: string): AsyncIterable<string[]>;
	/**
	 * The names of the folders directly under `prefix` (a folder: "…/", or "" for the top), each one
	 * holding at least one key, in folder order (sortFolders); without listing the keys inside them (a
	 * base of 100,000 users holds millions). With `page`: only the names after `page.after`, at most
	 * `page.limit` of them. Stores without it are listed whole (folderNames).
	 */
	listFolders?(prefix: string, page?: FolderPage): Promise<string[]>;
	/** A short description without secrets, for messages ("local disk /data", "s3://bucket/prefix"). */
	describe(): string;
	/**
	 * What tells this storage apart from every other in the process, without secrets (S3: endpoint,
	 * bucket and prefix). In-process caches key their entries by it; describe() when absent.
	 */
	identity?(): string;
	/**
	 * Removes what interrupted writers left behind (temporary copies of documents) for one key, or for
	 * every key in a folder when `prefix` ends in "/" or is empty, when older than `olderThanMs`; returns
	 * what it removed. Only stores that can leave such files have it (S3 writes are atomic).
	 */
	sweep?(prefix: string, olderThanMs: number): Promise<string[]>;
}

/** How a listing may come. */
export interface ListOptions {
	/**
	 * The caller needs no order within a folder: a store may then read a large folder as it goes (local
	 * disk) instead of reading it whole to sort it.
	 */
	anyOrder?: boolean;
}

/**
 * Every key under `prefix`, page by page: the store's own pages, or its whole listing as one page.
 * What a base of 100,000 users lists runs to millions of keys; a page is a thousand or so.
 */
export async function* listedPages(
	storage: MemoryStorage,
	prefix: string,
	options?: ListOptions,
): AsyncGenerator<ListedObject[]> {
	if (storage.listPages) yield* storage.listPages(prefix, options);
	else yield await storage.list(prefix);
}

/** The keys under `prefix`, a page at a time, in no order: the store's own, or its listing's. */
export async function* keyPages(storage: MemoryStorage, prefix: string): AsyncGenerator<string[]> {
	if (storage.listKeys) yield* storage.listKeys(prefix);
	else
		for await (const page of listedPages(storage, prefix, { anyOrder: true }))
			yield page.map((o) => o.key);
}

/** Calls `visit` on every key under `prefix`, a page of keys alone at a time, in no order (keyPages). */
export async function forEachKey(
	storage: MemoryStorage,
	prefix: string,
	visit: (key: string) => void | Promise<void>,
): Promise<void> {
	for await (const page of keyPages(storage, prefix)) for (const key of page) await visit(key);
}

/** Calls `visit` on every key under `prefix`, one page at a time (see listedPages). */
export async function forEachListed(
	storage: MemoryStorage,
	prefix: string,
	visit: (o: ListedObject) => void | Promise<void>,
	options?: ListOptions,
): Promise<void> {
	for await (const page of listedPages(storage, prefix, options))
		for (const o of page) await visit(o);
}

/** Whether a memory document is stored: one listing of its key (its body is not read). */
export async function documentStored(storage: MemoryStorage, key: string): Promise<boolean> {
	return (await storage.list(key)).some((o) => o.key === key);
}

/** A page of a folder listing: the folders after `after` in folder order, at most `limit` of them. */
export interface FolderPage {
	after?: string;
	limit?: number;
}

/**
 * Folder order: that of the UTF-8 bytes of "name/", as its keys begin, which is the order of their code
 * points (names hold no "/"). Compared in place: a listing of 100,000 folders makes no copy of each.
 */
export function compareFolders(a: string, b: string): number {
	const n = Math.min(a.length, b.length);
	for (let i = 0; i < n; i++)
		if (a.charCodeAt(i) !== b.charCodeAt(i)) return a.codePointAt(i)! - b.codePointAt(i)!;
	if (a.length === b.length) return 0;
	// One name begins the other: its "/" against the other's next character.
	return a.length < b.length ? SLASH - b.codePointAt(n)! : a.codePointAt(n)! - SLASH;
}

const SLASH = 0x2f;

/**
 * Folder names in folder order: the order S3 lists their keys in (the UTF-8 bytes of "name/"), so a
 * page that starts after a name continues the same way on every store.
 */
export function sortFolders(names: readonly string[]): string[] {
	return [...names].sort(compareFolders);
}

/** Whether folder `name` comes after folder `after` in folder order. */
export function folderAfter(name: string, after: string): boolean {
	return compareFolders(name, after) > 0;
}

/** The names of a page (`page`) of sorted folder names. */
export function pageOfFolders(sorted: readonly string[], page: FolderPage = {}): string[] {
	const after = page.after;
	const from = after === undefined ? 0 : sorted.findIndex((n) => folderAfter(n, after));
	if (from < 0) return [];
	return sorted.slice(from, page.limit === undefined ? undefined : from + page.limit);
}

/**
 * The folders directly under `prefix` ("…/"), in folder order, or a page of them: the store's own
 * listing of folders, or every key's.
 */
export async function folderNames(
	storage: MemoryStorage,
	prefix: string,
	page: FolderPage = {},
): Promise<string[]> {
	if (page.limit !== undefined && (!Number.isSafeInteger(page.limit) || page.limit < 1))
		throw new StorageError(`A page of folders must hold at least one, not ${page.limit}`, prefix);
	if (storage.listFolders) return sortFolders(await storage.listFolders(prefix, page));
	const names = (await storage.list(prefix))
		.map((o) => o.key.slice(prefix.length))
		.filter((rest) => rest.includes('/'))
		.map((rest) => rest.split('/')[0]);
	return pageOfFolders(sortFolders([...new Set(names)].filter(Boolean)), page);
}

/** The key in-process caches use for a storage (see MemoryStorage.identity). */
export function storageIdentity(storage: MemoryStorage): string {
	return storage.identity?.() ?? storage.describe();
}
