// A storage that runs at most N requests at once: never more in flight, each request answered (or
// failed) as the storage answers it, none lost or stuck when one fails, and the same identity as the
// storage it wraps (the process's caches are shared with it).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	keyPages,
	LimitedStorage,
	LocalDiskStorage,
	StorageError,
	storageIdentity,
} from '../../../src/internal';
import type { MemoryStorage } from '../../../src/internal';
import { tempDir } from '../../support/storages';
import { MeteredStorage } from '../../support/wide-base';

/** A storage whose gets take a few milliseconds, failing for keys that say so. */
function slow(inner: MemoryStorage): MemoryStorage {
	return Object.assign(Object.create(inner) as MemoryStorage, {
		get: async (key: string) => {
			await new Promise((r) => setTimeout(r, 2 + (key.length % 5)));
			if (key.includes('broken')) throw new StorageError(`simulated outage reading "${key}"`, key);
			return inner.get(key);
		},
	});
}

describe('LimitedStorage', () => {
	it('never runs more than its limit at once; every request gets its own answer', async () => {
		const disk = new LocalDiskStorage({ root: tempDir('limited') });
		for (let i = 0; i < 50; i++) await disk.put(`k/${i}`, Buffer.from(String(i)));
		const metered = new MeteredStorage(slow(disk));
		const limited = new LimitedStorage(metered, 4);
		const got = await Promise.all(Array.from({ length: 50 }, (_, i) => limited.get(`k/${i}`)));
		assert.deepEqual(
			got.map((g) => Buffer.from(g!.body).toString()),
			Array.from({ length: 50 }, (_, i) => String(i)),
		);
		assert.equal(metered.peak, 4, 'the limit was reached, never passed');
		assert.equal(limited.peak, 4);
	});

	it('a failing request frees its turn: the others still run, and the failure reaches its caller', async () => {
		const disk = new LocalDiskStorage({ root: tempDir('limited') });
		await disk.put('ok', Buffer.from('fine'));
		const limited = new LimitedStorage(slow(disk), 1);
		const results = await Promise.allSettled([
			limited.get('broken-1'),
			limited.get('ok'),
			limited.get('broken-2'),
			limited.get('ok'),
		]);
		assert.deepEqual(
			results.map((r) => r.status),
			['rejected', 'fulfilled', 'rejected', 'fulfilled'],
		);
		assert.ok((results[0] as PromiseRejectedResult).reason instanceof StorageError);
		assert.equal(Buffer.from((await limited.get('ok'))!.body).toString(), 'fine');
	});

	it('has the identity of the storage it wraps, and its sweep only when that storage has one', () => {
		const disk = new LocalDiskStorage({ root: tempDir('limited') });
		const limited = new LimitedStorage(disk, 2);
		assert.equal(storageIdentity(limited), storageIdentity(disk));
		assert.equal(typeof limited.sweep, 'function');
		const bare = new MeteredStorage(disk);
		assert.equal(new LimitedStorage(bare, 2).sweep, undefined);
	});

	it('lists page by page, each page in a turn of its own: a caller working on a page between turns never blocks the store', async () => {
		const disk = new LocalDiskStorage({ root: tempDir('limited') });
		for (let i = 0; i < 2_500; i += 100)
			await Promise.all(
				Array.from({ length: 100 }, (_, j) => disk.put(`p/${i + j}`, Buffer.from('x'))),
			);
		const metered = new MeteredStorage(disk);
		const limited = new LimitedStorage(metered, 1);
		const seen: string[] = [];
		let pages = 0;
		for await (const page of limited.listPages('p/')) {
			pages++;
			// With a limit of one, these would wait forever if the listing kept its turn between pages.
			for (const o of page.slice(0, 3)) await limited.delete(o.key);
			seen.push(...page.map((o) => o.key));
		}
		assert.equal(pages, 3, 'pages of 1,000');
		assert.equal(new Set(seen).size, 2_500);
		assert.equal(metered.peak, 1);
		assert.equal((await disk.list('p/')).length, 2_500 - 9);
		// Stopped early, the inner listing is let go (no turn is kept).
		for await (const page of limited.listPages('p/')) if (page.length > 0) break;
		assert.ok(await limited.get('p/100'));
		// The keys alone, likewise (straight from the disk under it: no file's metadata read).
		const keys: string[] = [];
		const direct = new LimitedStorage(disk, 1);
		for await (const page of keyPages(direct, 'p/')) {
			for (const key of page.slice(0, 2)) await direct.delete(key);
			keys.push(...page);
		}
		assert.equal(new Set(keys).size, 2_500 - 9);
		assert.equal((await disk.list('p/')).length, 2_500 - 9 - 6);
		for await (const page of keyPages(direct, 'p/')) if (page.length > 0) break;
		assert.ok(await direct.get('p/100'));
	});
});
