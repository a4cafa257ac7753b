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
	function locksOn(parts: string[]): LeaseLocks {
		return {
			storage: new LocalDiskStorage({ root: tempDir('lease-locks') }),
			wholeKey: 'whole.json',
			partKey: (part) => `parts/${part}.json`,
			parts: async () => parts,
			ttlMs: 5000,
			parallel: 2,
			held: (part: string | null, lease: Lease | undefined) =>
				new Error(`held: ${part ?? 'whole'} by ${lease?.operation ?? '?'}`),
		};
	}

	it('a part excludes the whole and itself; the whole takes every part; all released after', async () => {
		const locks = locksOn(['a', 'b', 'c']);
		await locked(locks, 'a', 'sync', async (parts, held) => {
			assert.deepEqual(parts, ['a']);
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
			assert.deepEqual(parts, ['a', 'b', 'c']);
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

	it('the whole renews its own lease only: a part whose lease expired meanwhile still gives way to it', async () => {
		const locks = { ...locksOn(['a', 'b', 'c']), ttlMs: 300 };
		const puts = new Map<string, number>();
		const inner = locks.storage;
		const storage = Object.create(inner) as typeof inner;
		storage.put = (key, body, options) => {
			puts.set(key, (puts.get(key) ?? 0) + 1);
			return inner.put(key, body, options);
		};
		const counted = { ...locks, storage };
		await locked(counted, undefined, 'regenerate', async (_parts, held) => {
			// Six renewal periods: the whole's lease renewed about six times, each part's taken once.
			await new Promise((r) => setTimeout(r, 600));
			assert.ok((puts.get('whole.json') ?? 0) >= 3, `whole: ${puts.get('whole.json')} writes`);
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
});
