// The one cache helper: limits of its own (entries, weight), least recently used out first, and group
// caps that bound one caller's entries without touching another's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BoundedCache, cacheStats } from '../../../src/internal';

describe('BoundedCache', () => {
	it('drops the least recently used entry past its entry limit; get refreshes an entry', () => {
		const evicted: string[] = [];
		const c = new BoundedCache<number>({
			name: 'test lru',
			maxEntries: 2,
			onEvict: (_v, k) => evicted.push(k),
		});
		c.set('a', 1);
		c.set('b', 2);
		assert.equal(c.get('a'), 1); // a is now the most recent
		c.set('c', 3);
		assert.deepEqual(evicted, ['b']);
		assert.equal(c.get('b'), undefined);
		assert.equal(c.size, 2);
	});

	it('holds at most its weight; a value heavier than the whole cache is not kept', () => {
		const c = new BoundedCache<string>({ name: 'test weight', maxWeight: 10 });
		c.set('a', 'x', { weight: 4 });
		c.set('b', 'y', { weight: 4 });
		c.set('c', 'z', { weight: 4 });
		assert.equal(c.weight, 8);
		assert.equal(c.has('a'), false);
		c.set('huge', 'w', { weight: 11 });
		assert.equal(c.has('huge'), false);
		assert.equal(c.weight, 8);
	});

	it("a group's cap evicts only that group's entries, and never raises the cache's own limit", () => {
		const c = new BoundedCache<string>({ name: 'test groups', maxWeight: 100 });
		c.set('other-1', 'o', { weight: 30, group: 'other' });
		for (let i = 0; i < 5; i++)
			c.set(`small-${i}`, 's', { weight: 10, group: 'small', groupMax: 20 });
		assert.deepEqual(
			['small-0', 'small-1', 'small-2', 'small-3', 'small-4'].filter((k) => c.has(k)),
			['small-3', 'small-4'],
		);
		assert.ok(c.has('other-1'), "another group's entry stays");
		// A group asking for more than the cache holds still gets no more than the cache's limit.
		c.set('big', 'b', { weight: 80, group: 'greedy', groupMax: 1000 });
		assert.ok(c.weight <= 100);
	});

	it('deletePrefix drops what a delete made stale; stats name every cache', () => {
		const c = new BoundedCache<number>({ name: 'test prefix', maxEntries: 10 });
		c.set('s3 a/conv1/x', 1);
		c.set('s3 a/conv1/y', 2);
		c.set('s3 a/conv2/x', 3);
		assert.equal(c.deletePrefix('s3 a/conv1/'), 2);
		assert.deepEqual(
			['s3 a/conv1/x', 's3 a/conv2/x'].map((k) => c.has(k)),
			[false, true],
		);
		const names = cacheStats().map((s) => s.name);
		for (const name of ['documents', 'vector segments', 'test prefix'])
			assert.ok(names.includes(name));
		assert.throws(() => new BoundedCache({ name: 'unbounded' }), RangeError);
	});
});
