// Bounded concurrency: at most a fixed number at once, every item done, results in order.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { deleteParts, mapLimit, mapOrUndo, MAX_PARALLEL } from '../../../src/common/parallel';
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

	it('mapOrUndo settles every item before undoing those that succeeded, then throws the first error', async () => {
		let running = 0;
		let most = 0;
		const finished: number[] = [];
		const items = Array.from({ length: 40 }, (_, i) => i);
		let undone: number[] | undefined;
		let runningAtUndo = -1;
		await assert.rejects(
			mapOrUndo(
				items,
				async (i) => {
					running++;
					most = Math.max(most, running);
					await sleep(i % 3);
					running--;
					if (i === 5 || i === 30) throw new Error(`failed ${i}`);
					finished.push(i);
					return i * 10;
				},
				async (done) => {
					runningAtUndo = running;
					undone = done;
				},
			),
			/failed 5/,
		);
		assert.equal(runningAtUndo, 0, 'nothing still running when it undoes');
		assert.equal(most, MAX_PARALLEL);
		assert.deepEqual(
			undone,
			items.filter((i) => i !== 5 && i !== 30).map((i) => i * 10),
		);
		assert.deepEqual(
			await mapOrUndo(
				[1, 2],
				async (i) => i + 1,
				async () => assert.fail('no undo'),
			),
			[2, 3],
		);
	});
});
