import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { Dir, Dirent } from 'node:fs';
import * as path from 'node:path';

import { errnoCode as code } from '../common/errno';
import { KeyedQueue } from '../common/keyed-queue';
import { ConflictError, StorageError } from '../errors';
import { acquireFileLock } from './file-lock';
import { assertStorageKey } from './key-check';
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
import { folderAfter, sortFolders } from './storage';

export interface LocalDiskStorageOptions {
	/** Folder that holds every key. Created on first write. */
	root: string;
	/** How long a writer waits for another writer's lock before failing (default 10 s). */
	lockTimeoutMs?: number;
	/** Locks left by another host on a shared folder count as abandoned after this (default 60 s). */
	foreignStaleLockMs?: number;
	/** fsync files and folders so a write survives power loss (default true). */
	durable?: boolean;
}

/** Objects per page of a listing (as S3 gives them). */
const LIST_PAGE = 1000;

const RESERVED = /\.(lock|tmp)$|\.lock\.(stale|new)-|\.lock\.break($|\.)/;
/**
 * Leftovers of interrupted writers, with the key they belonged to: `.<name>.<pid>.<hex>.tmp`, lock files
 * being taken or broken, and the turn of a lock's breakers (file-lock.ts) with its own.
 */
const LEFTOVER =
	/^\.(.+)\.\d+\.[0-9a-f]+\.tmp$|^(.+)\.lock\.(?:stale|new)-[0-9a-f-]+$|^(.+)\.lock\.break(?:\.(?:stale|new)-[0-9a-f-]+)?$/;

function versionOf(st: { ino: bigint; mtimeNs: bigint; size: bigint }): string {
	return `${st.ino}-${st.mtimeNs}-${st.size}`;
}

/**
 * Keys as files under a root folder. Writes are atomic (temp file, fsync, rename) and conditional
 * writes are compare-and-swap under a per-key lock file, so processes on one machine never lose
 * each other's writes. Every write moves the file's mtime strictly forward, so a version
 * (inode, mtime, size) is never reused.
 */
export class LocalDiskStorage implements MemoryStorage {
	readonly root: string;
	private readonly lockTimeoutMs: number;
	private readonly foreignStaleLockMs: number;
	private readonly durable: boolean;
	private readonly queue = new KeyedQueue();

	constructor(options: LocalDiskStorageOptions) {
		if (!options.root) throw new StorageError('LocalDiskStorage needs a root folder');
		this.root = path.resolve(options.root);
		this.lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
		this.foreignStaleLockMs = options.foreignStaleLockMs ?? 60_000;
		this.durable = options.durable ?? true;
	}

	describe(): string {
		return `local disk ${this.root}`;
	}

	private pathOf(key: string): string {
		assertStorageKey(key);
		if (RESERVED.test(key))
			throw new StorageError(`Refusing storage key ending in a reserved suffix: "${key}"`);
		const p = path.join(this.root, ...key.split('/'));
		if (!p.startsWith(this.root + path.sep))
			throw new StorageError(`Refusing key outside the storage root: "${key}"`);
		return p;
	}

	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	async get(key: string, options: GetOptions = {}): Promise<StoredObject | NotModified | null> {
		const p = this.pathOf(key);
		let handle: fs.FileHandle | undefined;
		try {
			handle = await fs.open(p, 'r');
			const st = await handle.stat({ bigint: true });
			const version = versionOf(st);
			if (options.ifNoneMatch === version) return { notModified: true, version };
			const body = await handle.readFile();
			return { body, version };
		} catch (error) {
			if (code(error) === 'ENOENT') return null;
			throw new StorageError(
				`Could not read "${key}" from ${this.describe()}: ${code(error) ?? error}`,
				key,
				{ cause: error },
			);
		} finally {
			await handle?.close();
		}
	}

	private async current(p: string): Promise<{ version: string; mtimeNs: bigint } | null> {
		// (mtimeNs: the version's time, for conditional deletes and for moving mtime forward.)
		try {
			const st = await fs.stat(p, { bigint: true });
			return { version: versionOf(st), mtimeNs: st.mtimeNs };
		} catch (error) {
			if (code(error) === 'ENOENT') return null;
			throw error;
		}
	}

	/** Runs fn holding both the in-process queue for p and the cross-process lock file. */
	private locked<T>(key: string, p: string, fn: () => Promise<T>): Promise<T> {
		return this.queue.run(p, async () => {
			await fs.mkdir(path.dirname(p), { recursive: true });
			const release = await acquireFileLock(`${p}.lock`, `"${key}"`, {
				timeoutMs: this.lockTimeoutMs,
				foreignStaleMs: this.foreignStaleLockMs,
			});
			try {
				return await fn();
			} finally {
				await release();
			}
		});
	}

	async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ version: string }> {
		const p = this.pathOf(key);
		try {
			return await this.locked(key, p, async () => {
				const cur = await this.current(p);
				if (options.ifVersion === null && cur)
					throw new ConflictError(`"${key}" already exists`, key);
				if (typeof options.ifVersion === 'string' && cur?.version !== options.ifVersion)
					throw new ConflictError(`"${key}" changed since it was read`, key);
				const tmp = path.join(
					path.dirname(p),
					`.${path.basename(p)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
				);
				const handle = await fs.open(tmp, 'wx');
				let renamed = false;
				try {
					await handle.writeFile(body);
					// Strictly later than the version being replaced, even within one clock tick.
					// (Timestamps pass through a double, good to ~0.3 µs, hence the rounding.)
					const prevUs = cur ? (cur.mtimeNs + 500n) / 1000n : 0n;
					const nowUs = BigInt(Date.now()) * 1000n;
					const seconds = Number(nowUs > prevUs ? nowUs : prevUs + 1n) / 1e6;
					await handle.utimes(seconds, seconds);
					if (this.durable) await handle.sync();
					await handle.close();
					await fs.rename(tmp, p);
					renamed = true;
				} finally {
					// A full disk or any other failure leaves no copy of the document behind.
					if (!renamed) {
						await handle.close().catch(() => {});
						await fs.unlink(tmp).catch(() => {});
					}
				}
				if (this.durable) await this.syncDir(path.dirname(p));
				const now = await this.current(p);
				return { version: (now as { version: string }).version };
			});
		} catch (error) {
			if (error instanceof StorageError) throw error;
			throw new StorageError(
				`Could not write "${key}" to ${this.describe()}: ${code(error) ?? error}`,
				key,
				{ cause: error },
			);
		}
	}

	private async syncDir(dir: string): Promise<void> {
		const handle = await fs.open(dir, 'r');
		try {
			await handle.sync();
		} finally {
			await handle.close();
		}
	}

	async delete(key: string, options: DeleteOptions = {}): Promise<void> {
		const p = this.pathOf(key);
		try {
			await this.locked(key, p, async () => {
				if (options.ifVersion !== undefined || options.ifUnmodifiedSince !== undefined) {
					const cur = await this.current(p);
					if (cur && options.ifVersion !== undefined && cur.version !== options.ifVersion)
						throw new ConflictError(`"${key}" changed since it was read`, key);
					if (
						cur &&
						options.ifUnmodifiedSince &&
						cur.mtimeNs / 1_000_000n > BigInt(options.ifUnmodifiedSince.getTime())
					)
						throw new ConflictError(
							`"${key}" was written again since ${options.ifUnmodifiedSince.toISOString()}`,
							key,
						);
				}
				await fs.unlink(p).catch((error: unknown) => {
					if (code(error) !== 'ENOENT') throw error;
				});
			});
		} catch (error) {
			if (error instanceof StorageError) throw error;
			throw new StorageError(
				`Could not delete "${key}" from ${this.describe()}: ${code(error) ?? error}`,
				key,
				{ cause: error },
			);
		}
	}

	/** A folder's entries, sorted by name; none when it does not exist. */
	private async entries(dir: string): Promise<Dirent[]> {
		try {
			return await fs.readdir(dir, { withFileTypes: true });
		} catch (error) {
			if (code(error) === 'ENOENT') return [];
			throw this.listError(error);
		}
	}

	/**
	 * A folder's entries as they are read, a few dozen at a time and in no order: a folder of an index
	 * at scale holds tens of thousands of files, which a whole (sorted) read would hold at once.
	 */
	private async *streamed(dir: string): AsyncGenerator<Dirent> {
		let opened: Dir;
		try {
			opened = await fs.opendir(dir, { bufferSize: 64 });
		} catch (error) {
			if (code(error) === 'ENOENT') return;
			throw this.listError(error);
		}
		try {
			for await (const e of opened) yield e;
		} catch (error) {
			throw this.listError(error);
		}
	}

	private listError(error: unknown): StorageError {
		return new StorageError(
			`Could not list ${this.describe()}: ${code(error) ?? error}`,
			undefined,
			{
				cause: error,
			},
		);
	}

	/** Whether a folder holds an object, at any depth (stops at the first; lock and temporary files are not objects). */
	private async holdsObject(dir: string): Promise<boolean> {
		const entries = await this.entries(dir);
		if (entries.some((e) => e.isFile() && !RESERVED.test(e.name))) return true;
		for (const e of entries)
			if (e.isDirectory() && (await this.holdsObject(path.join(dir, e.name)))) return true;
		return false;
	}

	/** The folders directly under `prefix` ("…/" or "") that hold an object: one folder read, not a walk. */
	async listFolders(prefix: string, page: FolderPage = {}): Promise<string[]> {
		if (prefix !== '' && !prefix.endsWith('/'))
			throw new StorageError(`Not a folder to list: "${prefix}" does not end in "/"`, prefix);
		const dirKey = prefix.slice(0, -1);
		if (dirKey) assertStorageKey(dirKey);
		const dir = dirKey ? path.join(this.root, ...dirKey.split('/')) : this.root;
		const after = page.after;
		const names = (await this.entries(dir))
			.filter((e) => e.isDirectory() && (after === undefined || folderAfter(e.name, after)))
			.map((e) => e.name);
		// Only the page's folders are looked into (whether each holds an object), in order.
		const out: string[] = [];
		for (const name of sortFolders(names)) {
			if (page.limit !== undefined && out.length >= page.limit) break;
			if (await this.holdsObject(path.join(dir, name))) out.push(name);
		}
		return out;
	}

	/**
	 * Every file under the folder holding `prefix` (with `matching`, only those whose key starts with
	 * it), with its key (reserved names included), one folder entry at a time.
	 */
	private async *files(
		prefix: string,
		matching: boolean,
		anyOrder = false,
	): AsyncGenerator<{ key: string; file: string; name: string }> {
		const slash = prefix.lastIndexOf('/');
		const dirKey = slash >= 0 ? prefix.slice(0, slash) : '';
		if (dirKey) assertStorageKey(dirKey);
		const walkDir = async function* (
			this: LocalDiskStorage,
			dir: string,
			keyBase: string,
			stream: boolean,
		): AsyncGenerator<{ key: string; file: string; name: string }> {
			// One folder read at a time: a folder's keys come together. Sorted, unless any order will do
			// and it is the folder the listing starts in (an index's, of tens of thousands of parts): that
			// one is read as it goes. Folders under it are read whole: reading as it goes costs three
			// round trips a folder, and a tree of many small ones (partitions) took 2.5 times as long.
			const entries = stream ? this.streamed(dir) : await this.entries(dir);
			for await (const e of entries) {
				const key = keyBase ? `${keyBase}/${e.name}` : e.name;
				if (e.isDirectory()) {
					if (key.startsWith(prefix) || prefix.startsWith(`${key}/`))
						yield* walkDir.call(this, path.join(dir, e.name), key, false);
				} else if (e.isFile() && (!matching || key.startsWith(prefix))) {
					yield { key, file: path.join(dir, e.name), name: e.name };
				}
			}
		};
		yield* walkDir.call(
			this,
			dirKey ? path.join(this.root, ...dirKey.split('/')) : this.root,
			dirKey,
			anyOrder,
		);
	}

	/** Visits every file `files` gives. */
	private async walk(
		prefix: string,
		visit: (key: string, file: string, name: string) => Promise<void>,
		matching = false,
	): Promise<void> {
		for await (const f of this.files(prefix, matching)) await visit(f.key, f.file, f.name);
	}

	async list(prefix: string): Promise<ListedObject[]> {
		const out: ListedObject[] = [];
		for await (const page of this.listPages(prefix)) out.push(...page);
		return out;
	}

	/** The listing in pages of at most LIST_PAGE objects, read as the folders are walked. */
	async *listPages(prefix: string, options: ListOptions = {}): AsyncGenerator<ListedObject[]> {
		let page: ListedObject[] = [];
		for await (const { key, file, name } of this.files(prefix, true, options.anyOrder)) {
			if (RESERVED.test(name)) continue;
			const st = await fs.stat(file, { bigint: true }).catch(() => undefined);
			if (!st) continue;
			page.push({
				key,
				version: versionOf(st),
				size: Number(st.size),
				lastModified: new Date(Number(st.mtimeMs)),
			});
			if (page.length >= LIST_PAGE) {
				yield page;
				page = [];
			}
		}
		if (page.length > 0) yield page;
	}

	/** The keys alone, as the folders are read (no file's metadata read): LIST_PAGE at a time. */
	async *listKeys(prefix: string): AsyncGenerator<string[]> {
		let page: string[] = [];
		for await (const { key, name } of this.files(prefix, true, true)) {
			if (RESERVED.test(name)) continue;
			page.push(key);
			if (page.length >= LIST_PAGE) {
				yield page;
				page = [];
			}
		}
		if (page.length > 0) yield page;
	}

	/**
	 * Removes what killed writers left behind: temporary files (full copies of a document) and
	 * broken-lock asides, when older than `olderThanMs`. `prefix` is a folder when it ends in "/" (or is
	 * empty), otherwise exactly one key. Returns the removed files' keys.
	 */
	async sweep(prefix: string, olderThanMs: number): Promise<string[]> {
		const folder = prefix === '' || prefix.endsWith('/');
		const removed: string[] = [];
		const cutoff = Date.now() - olderThanMs;
		await this.walk(prefix, async (key, file, name) => {
			const m = LEFTOVER.exec(name);
			if (!m) return;
			const owner = key.slice(0, key.length - name.length) + (m[1] ?? m[2] ?? m[3]);
			if (folder ? !owner.startsWith(prefix) : owner !== prefix) return;
			const st = await fs.stat(file).catch(() => undefined);
			if (!st || st.mtimeMs > cutoff) return;
			try {
				await fs.unlink(file);
				removed.push(key);
			} catch (error) {
				if (code(error) !== 'ENOENT')
					throw new StorageError(
						`Could not remove leftover "${key}" from ${this.describe()}: ${code(error) ?? error}`,
						key,
						{ cause: error },
					);
			}
		});
		return removed;
	}
}
