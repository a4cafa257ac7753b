// Reading local disk's folders for listings: a folder read whole (sorted by name), or as it goes in no
// order where a folder may hold tens of thousands of entries (an index's parts, a base's conversations).
import { promises as fs } from 'node:fs';
import type { Dir, Dirent } from 'node:fs';
import * as path from 'node:path';

import { errnoCode as code } from '../common/errno';
import { FirstOf } from '../common/first-of';
import { StorageError } from '../errors';
import type { FolderPage } from './storage';
import { compareFolders, folderAfter, sortFolders } from './storage';

/** Lock files, temporary copies and their asides: never objects. */
export const RESERVED = /\.(lock|tmp)$|\.lock\.(stale|new)-|\.lock\.break($|\.)/;

/** Entries read at once from a folder a page of folders is picked from (it may hold 100,000). */
const FOLDER_BATCH = 1024;

/** A file a walk found: its key, its path, its name. */
export interface WalkedFile {
	key: string;
	file: string;
	name: string;
}

export class DiskFolders {
	constructor(private readonly describe: () => string) {}

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
	private async *streamed(dir: string, bufferSize = 64): AsyncGenerator<Dirent> {
		let opened: Dir;
		try {
			opened = await fs.opendir(dir, { bufferSize });
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

	/**
	 * The folders directly in `dir` that hold an object, in folder order. A page is read as the folder
	 * goes, keeping only its first names (a base's folder of conversations holds one per conversation);
	 * the whole listing, asked for, is read whole.
	 */
	async page(dir: string, page: FolderPage): Promise<string[]> {
		const { after, limit } = page;
		if (limit === undefined) {
			const names = (await this.entries(dir))
				.filter((e) => e.isDirectory() && (after === undefined || folderAfter(e.name, after)))
				.map((e) => e.name);
			return this.holding(dir, sortFolders(names), Infinity);
		}
		const out: string[] = [];
		// Folders holding no object (a capture that stopped before its first write) are passed over,
		// and the folder read again after the last one looked into.
		for (let from = after; ;) {
			const want = limit - out.length;
			const names = await this.firstFolders(dir, from, want);
			out.push(...(await this.holding(dir, names, want)));
			if (out.length >= limit || names.length < want) return out;
			from = names[names.length - 1];
		}
	}

	/** Of `names` (in order), those holding an object, up to `most`: only as many looked into. */
	private async holding(dir: string, names: readonly string[], most: number): Promise<string[]> {
		const out: string[] = [];
		for (const name of names) {
			if (out.length >= most) break;
			if (await this.holdsObject(path.join(dir, name))) out.push(name);
		}
		return out;
	}

	/** The first `n` folders of `dir` after `after`, in folder order: read as it goes, 2n names held at most. */
	private async firstFolders(dir: string, after: string | undefined, n: number): Promise<string[]> {
		const first = new FirstOf<string>(n, compareFolders);
		for await (const e of this.streamed(dir, FOLDER_BATCH))
			if (e.isDirectory() && (after === undefined || folderAfter(e.name, after))) first.add(e.name);
		return first.sorted();
	}

	/**
	 * Every file under `dir` (whose key is `dirKey`) on the way to or under `prefix` (with `matching`,
	 * only those whose key starts with it), reserved names included, one folder entry at a time.
	 * Sorted, unless any order will do: then the folder the walk starts in (an index's, of tens of
	 * thousands of parts; a base's conversations) is read as it goes. Folders under it are read whole:
	 * reading as it goes costs three round trips a folder, and a tree of many small ones (partitions)
	 * took 2.5 times as long.
	 */
	async *files(
		dir: string,
		dirKey: string,
		prefix: string,
		matching: boolean,
		anyOrder: boolean,
	): AsyncGenerator<WalkedFile> {
		const entries = anyOrder ? this.streamed(dir) : await this.entries(dir);
		for await (const e of entries) {
			const key = dirKey ? `${dirKey}/${e.name}` : e.name;
			if (e.isDirectory()) {
				if (key.startsWith(prefix) || prefix.startsWith(`${key}/`))
					yield* this.files(path.join(dir, e.name), key, prefix, matching, false);
			} else if (e.isFile() && (!matching || key.startsWith(prefix))) {
				yield { key, file: path.join(dir, e.name), name: e.name };
			}
		}
	}
}
