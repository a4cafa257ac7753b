// importChat: a session of another chat memory copied into ours as whole turns, in order, with roles and
// tool steps; a re-run adds nothing (derived turn IDs are found stored), new source messages are added
// after the ones copied before, and every message read is counted as imported, already there or skipped.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	ChatHistory,
	ConversationMemory,
	IMPORTED_TURN_PREFIX,
	importChat,
	InvalidIdError,
	InvalidImportSourceError,
} from '../../../src/internal';
import type { MemoryStorage, SourceMessage } from '../../../src/internal';
import { InstrumentedStorage, tempDisk } from '../../support/storages';

const U = (content: string): SourceMessage => ({ role: 'user', content });
const A = (content: string): SourceMessage => ({ role: 'assistant', content });
const CALL = (id: string, input: string): SourceMessage => ({
	role: 'assistant',
	content: '',
	toolCalls: [{ id, name: 'Calculator', args: { input } }],
});
const TOOL = (id: string, content: string): SourceMessage => ({
	role: 'tool',
	content,
	toolCallId: id,
	name: 'Calculator',
});

const SOURCE: SourceMessage[] = [
	U('what is 6*7?'),
	CALL('call_1', '6*7'),
	TOOL('call_1', '42'),
	A('It is 42.'),
	U('thanks'),
	A('You are welcome.'),
];

function memory(storage: MemoryStorage = tempDisk(), session = 's1') {
	return new ConversationMemory('wf', session, { storage });
}

/** What memory holds, compactly: role, content or tool calls, tool call IDs. */
async function stored(m: ConversationMemory) {
	return (await m.messages()).map((s) =>
		[
			s.role,
			s.tool_calls ? `calls ${s.tool_calls.map((c) => `${c.id}:${c.name}`).join(',')}` : s.content,
			s.tool_call_id ?? '',
		].join('|'),
	);
}

describe('importChat', () => {
	it('copies the turns in order, with roles, tool calls and tool call IDs; the turns chain as a thread', async () => {
		const m = memory();
		const report = await importChat(m, { sessionId: 's1', messages: SOURCE });
		assert.deepEqual(report, {
			read: 6,
			imported: 6,
			alreadyThere: 0,
			skipped: 0,
			skippedReasons: {},
			turnsImported: 2,
			turnsAlreadyThere: 0,
		});
		assert.deepEqual(await stored(m), [
			'user|what is 6*7?|',
			'assistant|calls call_1:Calculator|',
			'tool|42|call_1',
			'assistant|It is 42.|',
			'user|thanks|',
			'assistant|You are welcome.|',
		]);
		const messages = await m.messages();
		for (let i = 1; i < messages.length; i++)
			assert.equal(messages[i].parent_message_id, messages[i - 1].message_id);
		assert.match(messages[3].message_id, new RegExp(`^${IMPORTED_TURN_PREFIX}[0-9a-f]{32}$`));
		// What an agent gets back: the whole tool turn, then the second turn.
		const history = await new ChatHistory(m).getMessages();
		assert.deepEqual(
			history.map((h) => h.role),
			['user', 'assistant', 'tool', 'assistant', 'user', 'assistant'],
		);
	});

	it('a re-run adds nothing and writes nothing; new source messages are added after the earlier ones', async () => {
		const storage = new InstrumentedStorage(tempDisk());
		await importChat(memory(storage), { sessionId: 's1', messages: SOURCE });
		const puts = storage.calls.put;
		const again = await importChat(memory(storage), { sessionId: 's1', messages: SOURCE });
		assert.deepEqual(
			[again.imported, again.alreadyThere, again.turnsAlreadyThere, again.skipped],
			[0, 6, 2, 0],
		);
		assert.equal(storage.calls.put, puts, 'nothing written');
		const grown = [...SOURCE, U('and 2*2?'), A('4.')];
		const next = await importChat(memory(storage), { sessionId: 's1', messages: grown });
		assert.deepEqual([next.read, next.imported, next.alreadyThere], [8, 2, 6]);
		assert.deepEqual((await stored(memory(storage))).slice(-2), [
			'user|and 2*2?|',
			'assistant|4.|',
		]);
		assert.equal((await memory(storage).messages()).length, 8);
	});

	it('the same words at another position, or in another session, are another turn', async () => {
		const m = memory();
		const twice = [U('hi'), A('hello'), U('hi'), A('hello')];
		assert.equal((await importChat(m, { sessionId: 's1', messages: twice })).turnsImported, 2);
		const other = memory(undefined, 's2');
		await importChat(other, { sessionId: 's2', messages: [U('hi'), A('hello')] });
		const [a, b] = [(await m.messages())[1], (await other.messages())[1]];
		assert.notEqual(a.message_id, b.message_id);
	});

	it('skips what memory cannot hold, saying why, and counts every message read once', async () => {
		const m = memory();
		const source: SourceMessage[] = [
			{ role: 'system', content: 'You are a bot.' },
			U('hi'),
			{ role: 'unknown', type: 'function' },
			TOOL('nobody', 'orphan result'),
			A('hello'),
			U('open question'),
		];
		const r = await importChat(m, { sessionId: 's1', messages: source });
		assert.deepEqual(r.skippedReasons, {
			systemMessage: 1,
			unknownMessage: 1,
			unpairedToolStep: 1,
			waitingForAnswer: 1,
		});
		assert.deepEqual([r.read, r.imported, r.skipped], [6, 2, 4]);
		assert.equal(r.read, r.imported + r.alreadyThere + r.skipped);
		assert.deepEqual(await stored(m), ['user|hi|', 'assistant|hello|']);
		// Once answered, the open turn is copied; the earlier one is there already.
		const answered = await importChat(m, { sessionId: 's1', messages: [...source, A('yes')] });
		assert.deepEqual(
			[answered.imported, answered.alreadyThere, answered.skippedReasons.waitingForAnswer],
			[2, 2, undefined],
		);
	});

	it('a user message followed by another is copied unanswered; a lone answer gets an empty user message', async () => {
		const m = memory();
		const r = await importChat(m, {
			sessionId: 's1',
			messages: [A('Welcome!'), U('first'), U('second'), A('ok')],
		});
		assert.deepEqual([r.imported, r.turnsImported], [4, 3]);
		assert.deepEqual(await stored(m), [
			'user||',
			'assistant|Welcome!|',
			'user|first|',
			'assistant||',
			'user|second|',
			'assistant|ok|',
		]);
	});

	it('a turn that changed in the source before turns already copied is not put after them', async () => {
		const m = memory();
		await importChat(m, { sessionId: 's1', messages: [U('one'), A('1'), U('two'), A('2')] });
		// The source's first answer was edited in place: its turn is new, the later one is stored.
		const r = await importChat(m, {
			sessionId: 's1',
			messages: [U('one'), A('1 (edited)'), U('two'), A('2'), U('three'), A('3')],
		});
		assert.deepEqual(r.skippedReasons, { beforeImported: 2 });
		assert.deepEqual([r.imported, r.alreadyThere], [2, 2]);
		assert.deepEqual((await stored(m)).slice(-2), ['user|three|', 'assistant|3|']);
	});

	it('refuses a bad session ID and a source that is not a list, before reading memory', async () => {
		const m = memory();
		await assert.rejects(importChat(m, { sessionId: 'a/b', messages: [] }), InvalidIdError);
		await assert.rejects(
			importChat(m, { sessionId: 's1', messages: 'nope' as unknown as SourceMessage[] }),
			InvalidImportSourceError,
		);
	});
});
