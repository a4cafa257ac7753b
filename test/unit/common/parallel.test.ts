// Bounded concurrency: at most a fixed number at once, every item done, results in order.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { deleteParts, mapLimit, MAX_PARALLEL } from '../../../src/common/parallel';
import { sleep } from '../../../src/common/sleep';

/** A task that counts how many run at once. */
function counting() {
	let running = 0;
	let most = 0;
	const task = async (x: number) => {
		running++;
		most = Math.max(most, running);
		await sleep(1 + (x % 3));
		running--;
		return x * 2;
	};
	return { task, most: () => most };
}

describe('bounded concurrency', () => {
	it('mapLimit runs at most `limit` at once, and returns the results in the items’ order', async () => {
		const { task, most } = counting();
		const items = Array.from({ length: 50 }, (_, i) => i);
		assert.deepEqual(
			await mapLimit(items, 4, task),
			items.map((i) => i * 2),
		);
		assert.equal(most(), 4);
		assert.deepEqual(await mapLimit([], 4, task), []);
	});

	it('deleteParts deletes every key, MAX_PARALLEL at once, and a failed delete fails nothing', async () => {
		let running = 0;
		let most = 0;
		const deleted: string[] = [];
		const keys = Array.from({ length: 100 }, (_, i) => `k${i}`);
		await deleteParts(keys, async (key) => {
			running++;
			most = Math.max(most, running);
			await sleep(2);
			running--;
			if (key === 'k7') throw new Error('storage down');
			deleted.push(key);
		});
		assert.equal(most, MAX_PARALLEL);
		assert.deepEqual(deleted.sort(), keys.filter((k) => k !== 'k7').sort());
	});
});
