// The expiring lock a sync holds (lease.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { acquireLease, LeaseLostError, LocalDiskStorage, readLease } from '../../../src';
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
