// Expiring locks on any storage (store/lease.ts), and locks of a whole and its parts made of them
// (store/lease-locks.ts: a Memory Base and its conversations).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { acquireLease, LeaseLostError, LocalDiskStorage, readLease } from '../../../src/internal';
import type { Lease } from '../../../src/internal';
import { heldLocks, locked } from '../../../src/store/lease-locks';
import type { LeaseLocks } from '../../../src/store/lease-locks';
import { tempDir } from '../../support/storages';

describe('sync lock', () => {
	it('one holder at a time; an expired lock is taken over; release keeps a taken-over lock', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('lease') });
		const busy = () => new Error('busy');
		const a = await acquireLease(storage, 'l.json', { ttlMs: 150, operation: 'sync' }, busy);
		await assert.rejects(
			acquireLease(storage, 'l.json', { ttlMs: 150, operation: 'sync' }, busy),
			/busy/,
		);
		await a.renew(); // renewing keeps it
		await a.release();
		assert.equal(await readLease(storage, 'l.json'), null);
		const b = await acquireLease(storage, 'l.json', { ttlMs: 100, operation: 'sync' }, busy);
		await new Promise((r) => setTimeout(r, 10));
		// b's process "crashes": no more renewals; the lock expires.
		clearInterval((b as unknown as { timer: NodeJS.Timeout }).timer);
		await new Promise((r) => setTimeout(r, 150));
		const c = await acquireLease(storage, 'l.json', { ttlMs: 5000, operation: 'sync' }, busy);
		await assert.rejects(b.confirm(), LeaseLostError);
		await b.release();
		assert.equal((await readLease(storage, 'l.json'))?.lease.holder, c.holder);
		await c.release();
	});
});

describe('locks of a whole and its parts', () => {
	const walk = async (parts: AsyncIterable<string>) => {
		const out: string[] = [];
		for await (const part of parts) out.push(part);
		return out;
	};

	/** Locks of a whole whose parts are listed two to a page (`parts` read at each listing). */
	function locksOn(parts: string[], listings = { count: 0 }): LeaseLocks {
		return {
			storage: new LocalDiskStorage({ root: tempDir('lease-locks') }),
			wholeKey: 'whole.json',
			partKey: (part) => `parts/${part}.json`,
			partPages: async function* () {
				listings.count++;
				for (let i = 0; i < parts.length; i += 2) yield parts.slice(i, i + 2);
			},
			ttlMs: 5000,
			parallel: 2,
			held: (part: string | null, lease: Lease | undefined) =>
				new Error(`held: ${part ?? 'whole'} by ${lease?.operation ?? '?'}`),
		};
	}

	it('a part excludes the whole and itself; the whole takes every part; all released after', async () => {
		const locks = locksOn(['a', 'b', 'c']);
		await locked(locks, 'a', 'sync', async (parts, held) => {
			assert.deepEqual(await walk(parts), ['a']);
			assert.deepEqual([...held.parts.keys()], ['a']);
			await assert.rejects(
				locked(locks, 'a', 'sync', async () => {}),
				/held: a by sync/,
			);
			await assert.rejects(
				locked(locks, undefined, 'regenerate', async () => {}),
				/held: a/,
			);
			await locked(locks, 'b', 'sync', async () => {}); // another part is free
			assert.deepEqual(
				(await heldLocks(locks)).map((f) => [f.part, f.lease.operation]),
				[['a', 'sync']],
			);
		});
		await locked(locks, undefined, 'regenerate', async (parts, held) => {
			assert.deepEqual(await walk(parts), ['a', 'b', 'c']);
			// Every part's lease was taken (none held by another) and given back: the whole guards them.
			assert.deepEqual([...held.parts.keys()], []);
			assert.ok(held.whole);
			await assert.rejects(
				locked(locks, 'c', 'sync', async () => assert.fail('ran beside the whole')),
				/held: whole by regenerate/,
			);
			assert.deepEqual(
				(await heldLocks(locks)).map((f) => f.part),
				[null],
				'no part lease held for the run',
			);
		});
		assert.deepEqual(await heldLocks(locks), []);
	});

	it('held locks of named parts only: no listing, only their leases read', async () => {
		const listings = { count: 0 };
		const locks = locksOn(['a', 'b', 'c', 'd'], listings);
		await locked(locks, 'c', 'sync', async () => {
			assert.deepEqual(
				(await heldLocks(locks)).map((f) => f.part),
				['c'],
			);
			assert.equal(listings.count, 1);
			assert.deepEqual(
				(await heldLocks(locks, ['a', 'c'])).map((f) => f.part),
				['c'],
			);
			assert.deepEqual(await heldLocks(locks, ['a', 'b']), []);
			assert.equal(listings.count, 1, 'named parts are not listed');
		});
		assert.deepEqual(await heldLocks(locks, ['c']), []);
	});

	it('the whole renews its own lease only: a part whose lease expired meanwhile still gives way to it', async () => {
		// Long enough that a loaded machine's late timers do not let the whole's lease lapse.
		const locks = { ...locksOn(['a', 'b', 'c']), ttlMs: 1200 };
		const puts = new Map<string, number>();
		const inner = locks.storage;
		const storage = Object.create(inner) as typeof inner;
		storage.put = (key, body, options) => {
			puts.set(key, (puts.get(key) ?? 0) + 1);
			return inner.put(key, body, options);
		};
		const counted = { ...locks, storage };
		await locked(counted, undefined, 'regenerate', async (_parts, held) => {
			// Three renewal periods: the whole's lease renewed (about three times), each part's taken once.
			await new Promise((r) => setTimeout(r, 1300));
			assert.ok((puts.get('whole.json') ?? 0) >= 2, `whole: ${puts.get('whole.json')} writes`);
			for (const part of ['a', 'b', 'c']) assert.equal(puts.get(`parts/${part}.json`), 1, part);
			// The part's lease is gone: its lock is taken, finds the whole held, and gives way.
			await assert.rejects(
				locked(counted, 'b', 'sync', async () => assert.fail('ran beside the whole')),
				/held: whole by regenerate/,
			);
			await held.whole!.confirm(); // the whole's lease still ours
		});
		assert.deepEqual(await heldLocks(locks), []);
		await locked(locks, 'b', 'sync', async () => {}); // free again after
	});

	it('the whole walks its parts page by page, listed again at each walk: a part added meanwhile is walked', async () => {
		const parts = ['a', 'b', 'c', 'd', 'e'];
		const listings = { count: 0 };
		const locks = locksOn(parts, listings);
		const taken: string[] = [];
		const inner = locks.storage;
		const storage = Object.create(inner) as typeof inner;
		storage.put = (key, body, options) => {
			if (key.startsWith('parts/')) taken.push(key);
			return inner.put(key, body, options);
		};
		await locked({ ...locks, storage }, undefined, 'regenerate', async (every) => {
			assert.deepEqual(
				taken.sort(),
				parts.map((p) => `parts/${p}.json`),
			);
			assert.equal(listings.count, 1, 'the lock listed the parts once');
			parts.push('f'); // captured after the lock was taken: its own lock gives way to the whole
			assert.deepEqual(await walk(every), ['a', 'b', 'c', 'd', 'e', 'f']);
			assert.deepEqual(await walk(every), ['a', 'b', 'c', 'd', 'e', 'f'], 'walked again');
			assert.equal(listings.count, 3);
			await assert.rejects(
				locked({ ...locks, storage }, 'f', 'sync', async () => assert.fail('ran beside the whole')),
				/held: whole by regenerate/,
			);
		});
	});
});
