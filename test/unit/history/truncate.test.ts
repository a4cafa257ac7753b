import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	effectiveWindow,
	MAX_HISTORY_TURNS,
	MESSAGE_FRAMING_TOKENS,
	selectHistory,
	walkThread,
} from '../../../src/internal';
import type { StoredMessage } from '../../../src/internal';
import { linearTurns, msg } from '../../support/messages';

const K = 'conversation_memory/app/conv.json';
const newestFirst = (m: StoredMessage[]) => walkThread(K, m, m.length - 1);
const turnIds = (s: ReturnType<typeof selectHistory>) => s.turns.map((t) => t.user.message_id);
/** A linearTurns turn as the budget counts it: two messages of 10 tokens, each with its framing. */
const TURN = 20 + 2 * MESSAGE_FRAMING_TOKENS;

describe('selectHistory (truncation by stored counts)', () => {
	it('keeps everything within the limit', () => {
		const s = selectHistory(newestFirst(linearTurns(3)), { maxTokenLimit: 1000 });
		assert.deepEqual(turnIds(s), ['u1', 'u2', 'u3']);
		assert.equal(s.tokens, 3 * TURN);
		assert.equal(s.droppedTurns, 0);
	});

	it('drops whole turns from the oldest end', () => {
		const s = selectHistory(newestFirst(linearTurns(5)), { maxTokenLimit: 2 * TURN + 5 });
		assert.deepEqual(turnIds(s), ['u4', 'u5']);
		assert.equal(s.tokens, 2 * TURN);
		assert.equal(s.droppedTurns, 3);
		// complete pairs only: user, assistant, user, assistant
		assert.deepEqual(
			s.turns.flatMap((t) => [t.user.role, ...t.replies.map((r) => r.role)]),
			['user', 'assistant', 'user', 'assistant'],
		);
	});

	it('an exact fit is kept', () => {
		const limit = 2 * TURN;
		assert.deepEqual(
			turnIds(selectHistory(newestFirst(linearTurns(3)), { maxTokenLimit: limit })),
			['u2', 'u3'],
		);
	});

	it('the newest turn alone over the limit gives no history', () => {
		const m = [
			...linearTurns(2),
			msg('u3', 'a2', 'user', 'q', 10),
			msg('a3', 'u3', 'assistant', 'huge', 5000),
		];
		const s = selectHistory(newestFirst(m), { maxTokenLimit: 2000 });
		assert.deepEqual(s.turns, []);
		assert.equal(s.tokens, 0);
		assert.equal(s.droppedTurns, 3);
	});

	it('an oversized single turn gives no history', () => {
		const m = [msg('u1', null, 'user', 'q', 1500), msg('a1', 'u1', 'assistant', 'a', 1500)];
		assert.deepEqual(selectHistory(newestFirst(m), { maxTokenLimit: 2000 }).turns, []);
	});

	it('a limit of 0 gives no history', () => {
		assert.deepEqual(selectHistory(newestFirst(linearTurns(2)), { maxTokenLimit: 0 }).turns, []);
	});

	it('defaults to 2000 tokens', () => {
		const s = selectHistory(newestFirst(linearTurns(150)));
		assert.equal(s.turns.length, Math.floor(2000 / TURN));
		assert.equal(s.tokens, Math.floor(2000 / TURN) * TURN);
	});

	it('never starts with an assistant message (thread root is an assistant)', () => {
		const m = [
			msg('a0', null, 'assistant', 'greeting'),
			msg('u1', 'a0', 'user'),
			msg('a1', 'u1', 'assistant'),
		];
		const s = selectHistory(newestFirst(m), { maxTokenLimit: 1000 });
		assert.deepEqual(turnIds(s), ['u1']);
		assert.equal(s.turns[0].replies[0].message_id, 'a1');
	});

	it('skips an unanswered turn (empty answer) and a dangling user message', () => {
		const m = [
			...linearTurns(1),
			msg('u2', 'a1', 'user', 'q2'),
			msg('a2', 'u2', 'assistant', '', 0), // model returned nothing
			msg('u3', 'a2', 'user', 'q3'), // no answer at all
		];
		const s = selectHistory(newestFirst(m), { maxTokenLimit: 1000 });
		assert.deepEqual(turnIds(s), ['u1']);
	});

	it('window keeps the newest N turns', () => {
		const s = selectHistory(newestFirst(linearTurns(6)), {
			maxTokenLimit: 10_000,
			messageLimit: 2,
		});
		assert.deepEqual(turnIds(s), ['u5', 'u6']);
		assert.equal(s.droppedTurns, 4);
	});

	it('message_limit None, 0 and 9999 mean the 500-turn cap; 10 means 10 (as Dify)', () => {
		assert.equal(effectiveWindow(undefined), MAX_HISTORY_TURNS);
		assert.equal(effectiveWindow(null), 500);
		assert.equal(effectiveWindow(0), 500);
		assert.equal(effectiveWindow(-3), 500);
		assert.equal(effectiveWindow(9999), 500);
		assert.equal(effectiveWindow(10), 10);
		const many = linearTurns(600, 1);
		assert.equal(selectHistory(newestFirst(many), { maxTokenLimit: 1e9 }).turns.length, 500);
		assert.equal(
			selectHistory(newestFirst(many), { maxTokenLimit: 1e9, messageLimit: 0 }).turns.length,
			500,
		);
		assert.equal(
			selectHistory(newestFirst(many), { maxTokenLimit: 1e9, messageLimit: 9999 }).turns.length,
			500,
		);
		assert.equal(
			selectHistory(newestFirst(many), { maxTokenLimit: 1e9, messageLimit: 10 }).turns.length,
			10,
		);
	});

	it('the budget and the window apply together', () => {
		const s = selectHistory(newestFirst(linearTurns(10)), {
			maxTokenLimit: 3 * TURN,
			messageLimit: 5,
		});
		assert.deepEqual(turnIds(s), ['u8', 'u9', 'u10']);
	});
});
