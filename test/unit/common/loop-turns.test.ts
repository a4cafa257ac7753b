// A long search lets the event loop turn: a timer set before it fires before it ends, whether its parts
// come from shareLoop's callers directly or from reads already answered (readInWindow).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';

import { shareLoop } from '../../../src/common/loop-turns';
import { readInWindow } from '../../../src/common/parallel';

/** Holds the thread for `ms` (work that decodes or scores). */
function busy(ms: number): void {
	const end = performance.now() + ms;
	while (performance.now() < end);
}

/** Whether a timer set before `work` fired before `work` finished. */
async function timerFiredDuring(work: () => Promise<void>): Promise<boolean> {
	let fired = false;
	const timer = setTimeout(() => (fired = true), 0);
	await work();
	const during = fired;
	clearTimeout(timer);
	return during;
}

describe('sharing the event loop', () => {
	it('a timer fires while 40 steps of 3 ms run, each followed by shareLoop()', async () => {
		const fired = await timerFiredDuring(async () => {
			for (let i = 0; i < 40; i++) {
				busy(3);
				await shareLoop(10);
			}
		});
		assert.equal(fired, true);
	});

	it('the same steps awaiting nothing but resolved promises keep the timer waiting (the control)', async () => {
		const fired = await timerFiredDuring(async () => {
			for (let i = 0; i < 40; i++) {
				busy(3);
				await Promise.resolve();
			}
		});
		assert.equal(fired, false);
	});

	it('resolves without a turn of the loop while the loop reached its timers within the slice', async () => {
		await shareLoop(1_000); // arms its watch of the loop's timers
		await new Promise((r) => setTimeout(r, 5));
		let immediate = false;
		setImmediate(() => (immediate = true));
		await shareLoop(1_000);
		assert.equal(immediate, false);
	});

	it('readInWindow lets a timer fire between parts whose reads were already answered', async () => {
		const parts = Array.from({ length: 40 }, (_, i) => i);
		const used: number[] = [];
		const fired = await timerFiredDuring(() =>
			readInWindow(
				parts,
				{ window: 4, bytes: Infinity },
				() => 1,
				(x) => Promise.resolve(x),
				(x) => {
					busy(3);
					used.push(x);
				},
			),
		);
		assert.equal(fired, true);
		assert.deepEqual(used, parts);
	});
});
