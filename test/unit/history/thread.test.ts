import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	CorruptDocumentError,
	extractThread,
	UnknownParentMessageError,
	UUID_NIL,
} from '../../../src/internal';
import { ids, linearTurns, msg } from '../../support/messages';

const K = 'node_memory/app/conv/node.json';

describe('thread extraction', () => {
	it('seed regeneration example gives [A, A″, C, C′]', () => {
		// A → A′ → B → B′, then A″ regenerated under A, then C → C′ under A″.
		const messages = [
			msg('A', null, 'user'),
			msg("A'", 'A', 'assistant'),
			msg('B', "A'", 'user'),
			msg("B'", 'B', 'assistant'),
			msg("A''", 'A', 'assistant'),
			msg('C', "A''", 'user'),
			msg("C'", 'C', 'assistant'),
		];
		assert.deepEqual(ids(extractThread(K, messages)), ['A', "A''", 'C', "C'"]);
	});

	it('single message', () => {
		assert.deepEqual(ids(extractThread(K, [msg('m1', null)])), ['m1']);
	});

	it('empty list gives an empty thread', () => {
		assert.deepEqual(extractThread(K, []), []);
	});

	it('linear chain of 5', () => {
		const chain = [msg('1', null), msg('2', '1'), msg('3', '2'), msg('4', '3'), msg('5', '4')];
		assert.deepEqual(ids(extractThread(K, chain)), ['1', '2', '3', '4', '5']);
	});

	it('branch: the sibling of the newest message is excluded', () => {
		const messages = [msg('1', null), msg('2', '1'), msg('3a', '2'), msg('3b', '2')];
		assert.deepEqual(ids(extractThread(K, messages)), ['1', '2', '3b']);
	});

	it('partially loaded history: the walk ends where the parent is missing', () => {
		const messages = [msg('3', '2'), msg('4', '3'), msg('5', '4')]; // 1 and 2 were not loaded
		assert.deepEqual(ids(extractThread(K, messages)), ['3', '4', '5']);
	});

	it('all-legacy UUID_NIL chain is taken as linear up to the root', () => {
		const messages = [msg('1', null), msg('2', UUID_NIL), msg('3', UUID_NIL), msg('4', UUID_NIL)];
		assert.deepEqual(ids(extractThread(K, messages)), ['1', '2', '3', '4']);
	});

	it('mix of threaded and legacy messages', () => {
		const messages = [
			msg('1', null),
			msg('2', UUID_NIL),
			msg('3', '2'),
			msg('x', '1'),
			msg('4', '3'),
		];
		assert.deepEqual(ids(extractThread(K, messages)), ['1', '2', '3', '4']);
	});

	it('stops at a null parent even when older messages exist', () => {
		const messages = [
			msg('old1', null),
			msg('old2', 'old1'),
			msg('new1', null),
			msg('new2', 'new1'),
		];
		assert.deepEqual(ids(extractThread(K, messages)), ['new1', 'new2']);
	});

	it('Dify #39031: an unrelated parentless regeneration root neither stops the walk nor joins it', () => {
		// A regenerated first message R (no parent) sits between the newest message and its real ancestors.
		const messages = [msg('1', null), msg('2', '1'), msg('R', null), msg('3', '2')];
		assert.deepEqual(ids(extractThread(K, messages)), ['1', '2', '3']);
	});

	it('Dify #18827: a regeneration naming an older parent gets that parent’s thread', () => {
		const messages = linearTurns(3); // u1 a1 u2 a2 u3 a3
		assert.deepEqual(ids(extractThread(K, messages, 'a1')), ['u1', 'a1']);
		assert.deepEqual(ids(extractThread(K, messages, 'a2')), ['u1', 'a1', 'u2', 'a2']);
		assert.deepEqual(ids(extractThread(K, messages)), ['u1', 'a1', 'u2', 'a2', 'u3', 'a3']);
	});

	it('an explicit parent that is not stored is an error naming it', () => {
		assert.throws(
			() => extractThread(K, linearTurns(2), 'nope'),
			(e: unknown) => {
				assert.ok(e instanceof UnknownParentMessageError);
				assert.match((e as Error).message, /"nope"/);
				return true;
			},
		);
	});

	it('a parent cycle is reported as a corrupt document, not an endless loop', () => {
		const messages = [msg('x', 'y'), msg('y', 'x')];
		assert.throws(() => extractThread(K, messages), CorruptDocumentError);
	});
});
