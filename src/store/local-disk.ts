import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
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
import { DiskFolders, RESERVED } from './disk-folders';

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
	private readonly folders = new DiskFolders(() => this.describe());

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

	/**
	 * The folders directly under `prefix` ("…/" or "") that hold an object: one folder read, not a walk
	 * (a page of them read as the folder goes: disk-folders.ts).
	 */
	async listFolders(prefix: string, page: FolderPage = {}): Promise<string[]> {
		if (prefix !== '' && !prefix.endsWith('/'))
			throw new StorageError(`Not a folder to list: "${prefix}" does not end in "/"`, prefix);
		const dirKey = prefix.slice(0, -1);
		if (dirKey) assertStorageKey(dirKey);
		return this.folders.page(dirKey ? path.join(this.root, ...dirKey.split('/')) : this.root, page);
	}

	/**
	 * Every file under the folder holding `prefix` (with `matching`, only those whose key starts with
	 * it), with its key (reserved names included), one folder entry at a time.
	 */
	private files(prefix: string, matching: boolean, anyOrder = false) {
		const slash = prefix.lastIndexOf('/');
		const dirKey = slash >= 0 ? prefix.slice(0, slash) : '';
		if (dirKey) assertStorageKey(dirKey);
		const dir = dirKey ? path.join(this.root, ...dirKey.split('/')) : this.root;
		return this.folders.files(dir, dirKey, prefix, matching, anyOrder);
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
