// A turn saved to chat memory whose capture failed (storage down for that one write) is captured by
// the next turn's capture, which hands over the conversation's earlier turns: exactly once, in order,
// never a turn the log holds or one said before its last capture, never into a forgotten
// conversation, and once only when two captures race with the same missed turn.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { LocalDiskStorage, MemoryBase, StorageError } from '../../../src/internal';
import type { EarlierTurn } from '../../../src/internal';
import { InstrumentedStorage, tempDir } from '../../support/storages';

function setup() {
	const storage = new InstrumentedStorage(new LocalDiskStorage({ root: tempDir('catch-up') }));
	const base = new MemoryBase({ storage, baseId: 'kb', threshold: 1_000_000 });
	return { storage, base };
}

/** Turn n of conversation c1, as chat memory holds it: its stable run ID, its messages, its time. */
function turn(n: number, saidAt = new Date()): EarlierTurn {
	return {
		runId: `turn:a${n}`,
		saidAt,
		messages: [
			{ text: `question ${n} about topic${n}`, role: 'user', metadata: { messageId: `u${n}` } },
			{ text: `answer ${n}`, role: 'assistant', metadata: { messageId: `a${n}` } },
		],
	};
}

/** Captures turn n with the turns before it handed over, as the nodes do. */
const capture = (base: MemoryBase, n: number, earlier: EarlierTurn[] = []) =>
	base.capture({ sessionId: 'c1', userId: 'ana', ...turn(n), earlier });

async function texts(base: MemoryBase): Promise<string[]> {
	const page = await base.listMessages({ sessionId: 'c1', limit: 1000 });
	return page.messages.map((m) => m.text);
}

const pause = () => new Promise((r) => setTimeout(r, 5));

describe('capture: a missed turn is made up by the next', () => {
	it('captures the turn whose capture failed, once, before the new one', async () => {
		const { base, storage } = setup();
		const t1 = turn(1);
		await capture(base, 1);
		await pause();
		const t2 = turn(2);
		storage.faults.put.push('outage'); // the log write of turn 2 fails: saved to chat, not captured
		await assert.rejects(capture(base, 2, [t1]), StorageError);
		await pause();
		const result = await capture(base, 3, [t1, t2]);
		assert.equal(result.caughtUp, 1);
		assert.equal(result.captured, 4);
		assert.deepEqual(await texts(base), [
			'question 1 about topic1',
			'answer 1',
			'question 2 about topic2',
			'answer 2',
			'question 3 about topic3',
			'answer 3',
		]);
		// The next turn hands over the same earlier turns again: nothing twice.
		await pause();
		const again = await capture(base, 4, [t1, t2, turn(3)]);
		assert.equal(again.caughtUp, undefined);
		assert.equal((await texts(base)).length, 8);
		// A retried execution of turn 3 is recognised too.
		assert.equal((await capture(base, 3, [t1, t2])).captured, 0);
		const hits = await base.search('topic2', { sessionId: 'c1' });
		assert.equal(hits[0].text, 'question 2 about topic2', 'searchable at once');
	});

	it('leaves alone turns said before the last capture, and a conversation with no log', async () => {
		const { base } = setup();
		const old = turn(0, new Date(Date.now() - 60_000)); // before long-term memory was on
		await capture(base, 5, [old]);
		assert.deepEqual(await texts(base), ['question 5 about topic5', 'answer 5'], 'no log: no fill');
		await pause();
		const r = await capture(base, 6, [old, turn(5)]);
		assert.equal(r.caughtUp, undefined);
		assert.equal((await texts(base)).length, 4);
		await base.forget('c1');
		await capture(base, 7, [turn(5), turn(6)]);
		assert.deepEqual(
			await texts(base),
			['question 7 about topic7', 'answer 7'],
			'forgotten stays forgotten',
		);
	});

	it('two captures racing with the same missed turn capture it once', async () => {
		const { base, storage } = setup();
		await capture(base, 1);
		await pause();
		const t2 = turn(2);
		storage.faults.put.push('outage');
		await assert.rejects(capture(base, 2, [turn(1)]), StorageError);
		await pause();
		// Two executions of the conversation at once (queue mode), both after the failed turn.
		const t3 = turn(3);
		await Promise.all([
			capture(base, 3, [turn(1), t2]),
			base.capture({ sessionId: 'c1', userId: 'ana', ...turn(4), earlier: [turn(1), t2] }),
		]);
		const all = await texts(base);
		assert.equal(all.filter((t) => t === 'question 2 about topic2').length, 1, all.join(' | '));
		assert.equal(all.length, 8);
		assert.ok(t3);
	});

	it('refuses an earlier turn with a bad run ID or time before writing anything', async () => {
		const { base, storage } = setup();
		const before = storage.calls.put;
		await assert.rejects(
			base.capture({
				sessionId: 'c1',
				runId: 'r',
				texts: ['x'],
				earlier: [{ ...turn(1), runId: '../x' }],
			}),
			/earlier\[0\]\.runId/,
		);
		await assert.rejects(
			base.capture({
				sessionId: 'c1',
				runId: 'r',
				texts: ['x'],
				earlier: [{ ...turn(1), saidAt: 'soon' }],
			}),
			/earlier\[0\]\.saidAt/,
		);
		assert.equal(storage.calls.put, before);
	});
});
