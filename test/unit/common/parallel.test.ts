// Bounded concurrency: at most a fixed number at once, every item done, results in order.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	deleteParts,
	mapLimit,
	mapOrUndo,
	MAX_PARALLEL,
	ReadBudget,
	readInWindow,
} from '../../../src/common/parallel';
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

/**
 * Reads of sized parts that note the bytes held (read, not yet used) and the reads under way, at most,
 * over every reader using the same meter.
 */
function sizedReads() {
	const m = { held: 0, most: 0, running: 0, mostRunning: 0 };
	const read = async <P extends { size: number }>(p: P, delay = 1): Promise<P> => {
		m.held += p.size;
		m.running++;
		m.most = Math.max(m.most, m.held);
		m.mostRunning = Math.max(m.mostRunning, m.running);
		await sleep(delay);
		m.running--;
		return p;
	};
	const use = (p: { size: number }) => {
		m.held -= p.size;
	};
	return { m, read, use };
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

	it('readInWindow uses every part in order, with at most `window` reads under way, the next ones read while one is used', async () => {
		const { task, most } = counting();
		const used: number[] = [];
		let startedBeforeUse = 0;
		let started = 0;
		const items = Array.from({ length: 30 }, (_, i) => i);
		await readInWindow(
			items,
			{ window: 4, bytes: Infinity },
			() => 1,
			(x) => {
				started++;
				return task(x);
			},
			(got, x) => {
				assert.equal(got, x * 2);
				// Reads of later parts were started before this one was used (the window is kept full).
				if (started > used.length + 1) startedBeforeUse++;
				used.push(x);
			},
		);
		assert.deepEqual(used, items);
		assert.equal(most(), 4);
		assert.ok(startedBeforeUse >= 20, `${startedBeforeUse} uses with later reads under way`);
	});

	it('readInWindow keeps the bytes under way within its bound, one part at least however large', async () => {
		const sizes = [3, 3, 3, 9, 1, 1, 1, 1, 1, 5, 5];
		const { m, read, use } = sizedReads();
		await readInWindow(
			sizes.map((size, i) => ({ size, i })),
			{ window: 8, bytes: 6 },
			(p) => p.size,
			(p) => read(p),
			use,
		);
		// The part of 9 alone passes the bound: it is read by itself, never beside another.
		assert.equal(m.most, 9);
		assert.equal(
			m.mostRunning,
			5,
			'five parts of 1 fit in 6 (with a sixth part the bound is passed)',
		);
	});

	it('readInWindow throws a failed read in its turn, after the parts before it were used, and leaves no unhandled rejection', async () => {
		const used: number[] = [];
		const unhandled: unknown[] = [];
		const onUnhandled = (reason: unknown) => unhandled.push(reason);
		process.on('unhandledRejection', onUnhandled);
		try {
			await assert.rejects(
				readInWindow(
					[0, 1, 2, 3, 4, 5],
					{ window: 3, bytes: Infinity },
					() => 1,
					async (x) => {
						// The failing part fails first, before the parts ahead of it are read.
						await sleep(x === 3 ? 0 : 5);
						if (x === 3 || x === 4) throw new Error(`read ${x} failed`);
						return x;
					},
					(x) => used.push(x),
				),
				/read 3 failed/,
			);
			await sleep(30);
			assert.deepEqual(used, [0, 1, 2]);
			assert.deepEqual(unhandled, []);
		} finally {
			process.off('unhandledRejection', onUnhandled);
		}
	});

	it('readers sharing a ReadBudget hold at most its bytes together (one part at least), each in its own order', async () => {
		const budget = new ReadBudget(6);
		const { m, read, use } = sizedReads();
		const reader = (sizes: number[], delay: number) => {
			const used: number[] = [];
			const done = readInWindow(
				sizes.map((size, i) => ({ size, i })),
				{ window: 4, bytes: Infinity, budget },
				(p) => p.size,
				(p) => read(p, delay),
				(p) => {
					use(p);
					used.push(p.i);
				},
			);
			return { used, done };
		};
		const a = reader([2, 2, 2, 2, 2, 2, 9, 1], 2);
		const b = reader([3, 3, 1, 1, 3, 3, 1], 3);
		await Promise.all([a.done, b.done]);
		assert.deepEqual(a.used, [0, 1, 2, 3, 4, 5, 6, 7]);
		assert.deepEqual(b.used, [0, 1, 2, 3, 4, 5, 6]);
		// Each reader alone would hold up to 4 parts (8 and 8 bytes): together, within 6, and the 9 alone.
		assert.equal(m.most, 9);
		assert.ok(m.mostRunning >= 2, 'the readers read side by side');
		assert.ok(budget.tryTake(6), 'every byte was given back');
	});

	it('a reader that fails gives its bytes back: the other reader sharing the budget finishes', async () => {
		const budget = new ReadBudget(4);
		const failing = readInWindow(
			[0, 1, 2, 3],
			{ window: 4, bytes: Infinity, budget },
			() => 2,
			async (x) => {
				await sleep(x === 0 ? 5 : 50);
				if (x === 0) throw new Error('read 0 failed');
				return x;
			},
			() => undefined,
		);
		const used: number[] = [];
		const other = readInWindow(
			[0, 1, 2],
			{ window: 2, bytes: Infinity, budget },
			() => 3,
			async (x) => {
				await sleep(1);
				return x;
			},
			(x) => used.push(x),
		);
		await assert.rejects(failing, /read 0 failed/);
		await other;
		assert.deepEqual(used, [0, 1, 2]);
		assert.ok(budget.tryTake(4), 'the failed reader’s bytes were given back');
	});

	it('ReadBudget.take waits until bytes are given back, and takes at once when nothing is held', async () => {
		const budget = new ReadBudget(10);
		await budget.take(25); // nothing held: a part larger than the limit is taken alone
		let taken = false;
		const waiting = budget.take(1).then(() => (taken = true));
		await sleep(5);
		assert.equal(taken, false, 'taken while 25 bytes were held');
		budget.give(25);
		await waiting;
		assert.equal(taken, true);
		assert.equal(budget.tryTake(9), true);
		assert.equal(budget.tryTake(1), false, '1 + 9 + 1 is past 10');
	});
});
