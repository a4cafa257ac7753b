// The tool-results policy of a memory (MemoryOptions.toolResults): what is stored of a tool turn, in
// each mode, through BufferMemory and through ChatHistory (the LLM Memory Store's path): the order, the
// tool_call_id pairing, the note's text, windows and budgets that never split a call from its (noted)
// result, turns stored before the setting changed, and bad option values refused before anything is
// stored.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	ChatHistory,
	DEFAULT_MAX_TOOL_OUTPUT_CHARS,
	InvalidOptionError,
	NodeMemory,
	toolResultNote,
	toolResultsPolicy,
} from '../../../src/internal';
import type {
	ChatMessage,
	MemoryOptions,
	MemoryStorage,
	PromptMessage,
	StoredMessage,
	TurnInput,
} from '../../../src/internal';
import { InstrumentedStorage, tempDisk } from '../../support/storages';

const BIG = 51_234;

/** A tool result of `chars` characters: a JSON table dump, as an HTTP or database tool returns. */
function bigResult(chars: number, seed = 0): string {
	let out = '[';
	for (let i = 0; out.length < chars; i++)
		out += `{"id":${seed * 10_000 + i},"name":"row ${i}","price":${(i * 7) % 100}},`;
	return out.slice(0, chars - 1) + ']';
}

/** A tool turn: the user's question, one call of `http_request` (or several in parallel), results, answer. */
function toolTurn(n: number, results: string[] = [bigResult(BIG, n)]): TurnInput {
	const calls = results.map((_, i) => ({
		id: `call_${n}_${i}`,
		name: i === 0 ? 'http_request' : `db_query_${i}`,
		args: { url: `https://example.test/${n}/${i}` },
	}));
	return {
		userContent: `question ${n}`,
		steps: [
			{ role: 'assistant', content: '', toolCalls: calls },
			...results.map((content, i) => ({
				role: 'tool' as const,
				content,
				toolCallId: calls[i].id,
				name: calls[i].name,
			})),
		],
		assistantContent: `answer ${n}`,
	};
}

function memory(extra: Partial<MemoryOptions> = {}, storage: MemoryStorage = tempDisk()) {
	return new NodeMemory('wf', 'c', 'store', { storage, model: 'gpt-4o-mini', ...extra });
}

/** Stored messages, compactly: role, content (a call as "calls NAME#ID"), the result's call ID. */
const shape = (messages: readonly StoredMessage[]) =>
	messages.map((m) => [
		m.role,
		m.tool_calls ? m.tool_calls.map((c) => `calls ${c.name}#${c.id}`).join(' + ') : m.content,
		m.tool_call_id ?? null,
	]);

/** Every call of the history is answered by the results right after it, in order; no result is alone. */
function assertPaired(messages: readonly PromptMessage[], label: string) {
	assert.equal(messages[0]?.role ?? 'user', 'user', `${label}: history starts with a user message`);
	for (let i = 0; i < messages.length; i++) {
		const calls = messages[i].tool_calls ?? [];
		assert.notEqual(messages[i].role, 'tool', `${label}: result ${i} follows its call`);
		const results = messages.slice(i + 1, i + 1 + calls.length);
		assert.deepEqual(
			results.map((r) => [r.role, r.tool_call_id]),
			calls.map((c) => ['tool', c.id]),
			`${label}: call at ${i} is followed by its results`,
		);
		i += calls.length;
	}
}

describe('tool results: Keep (the default)', () => {
	it('stores each result cut at 16,000 characters with a note of the rest, calls and pairing intact', async () => {
		const m = memory();
		await m.addMessages({ ...toolTurn(1), messageId: 't1' });
		await m.flush();
		const stored = await m.messages();
		assert.deepEqual(
			stored.map((s) => s.message_id),
			['t1:user', 't1:step0', 't1:step1', 't1'],
		);
		assert.equal(
			stored[2].content,
			`${bigResult(BIG, 1).slice(0, DEFAULT_MAX_TOOL_OUTPUT_CHARS)}\n[… ${BIG - 16_000} more characters of tool output were not kept in memory]`,
		);
		assert.equal(stored[2].tool_call_id, 'call_1_0');
		assert.equal(stored[2].name, 'http_request');
	});

	it('a cap of its own (Max Characters per Tool Result), and results under it whole', async () => {
		const m = memory({ toolResults: 'keep', maxToolOutputChars: 500 });
		await m.addMessages(toolTurn(1, [bigResult(2000), 'short']));
		await m.flush();
		const [, , first, second] = await m.messages();
		assert.equal(
			first.content,
			`${bigResult(2000).slice(0, 500)}\n[… 1500 more characters of tool output were not kept in memory]`,
		);
		assert.equal(second.content, 'short');
	});
});

describe('tool results: Keep a Short Note', () => {
	it('keeps the user message, the call with its arguments, a one-line note as the result and the answer, in order', async () => {
		const m = memory({ toolResults: 'note' });
		await m.addMessages({ ...toolTurn(1), messageId: 't1' });
		await m.flush();
		const stored = await m.messages();
		assert.deepEqual(shape(stored), [
			['user', 'question 1', null],
			['assistant', 'calls http_request#call_1_0', null],
			['tool', '[tool result of http_request: 51,234 characters, not kept in memory]', 'call_1_0'],
			['assistant', 'answer 1', null],
		]);
		assert.deepEqual(stored[1].tool_calls?.[0].args, { url: 'https://example.test/1/0' });
		assert.equal(stored[2].name, 'http_request');
		// Parents chain the turn as before: user → call → result → answer.
		assert.deepEqual(
			stored.map((s) => s.parent_message_id),
			[null, 't1:user', 't1:step0', 't1:step1'],
		);
		const history = (await m.getHistoryPromptMessages()).messages;
		assert.deepEqual(
			history.map((h) => h.role),
			['user', 'assistant', 'tool', 'assistant'],
		);
		assert.equal(history[2].tool_call_id, history[1].tool_calls?.[0].id);
		assert.ok(stored[2].token_count < 30, `the note costs a few tokens: ${stored[2].token_count}`);
	});

	it('notes parallel results one by one, each paired with its own call; a result without a name takes its call’s', async () => {
		const m = memory({ toolResults: 'note' });
		const turn = toolTurn(2, [bigResult(900), 'x', '']);
		const steps = turn.steps!.map((s) =>
			s.role === 'tool' && s.content === 'x' ? { ...s, name: undefined } : s,
		);
		await m.addMessages({ ...turn, steps });
		await m.flush();
		assert.deepEqual(shape(await m.messages()).slice(1, 5), [
			[
				'assistant',
				'calls http_request#call_2_0 + calls db_query_1#call_2_1 + calls db_query_2#call_2_2',
				null,
			],
			['tool', '[tool result of http_request: 900 characters, not kept in memory]', 'call_2_0'],
			['tool', '[tool result of db_query_1: 1 character, not kept in memory]', 'call_2_1'],
			['tool', '[tool result of db_query_2: 0 characters, not kept in memory]', 'call_2_2'],
		]);
	});

	it('the note’s text: size with thousands separators, the tool’s name when known', () => {
		assert.equal(
			toolResultNote('http_request', 51_234),
			'[tool result of http_request: 51,234 characters, not kept in memory]',
		);
		assert.equal(
			toolResultNote('q', 1_234_567),
			'[tool result of q: 1,234,567 characters, not kept in memory]',
		);
		assert.equal(
			toolResultNote(undefined, 999),
			'[tool result: 999 characters, not kept in memory]',
		);
		assert.equal(toolResultNote('t', 1), '[tool result of t: 1 character, not kept in memory]');
	});
});

describe('tool results: Leave Out Tool Turns', () => {
	it('stores the user message and the final answer only, as a plain turn', async () => {
		const m = memory({ toolResults: 'leaveOut' });
		await m.addMessages({ ...toolTurn(1, [bigResult(BIG), 'second']), messageId: 't1' });
		await m.addMessages({
			userContent: 'plain',
			assistantContent: 'plain answer',
			messageId: 't2',
		});
		await m.flush();
		const stored = await m.messages();
		assert.deepEqual(shape(stored), [
			['user', 'question 1', null],
			['assistant', 'answer 1', null],
			['user', 'plain', null],
			['assistant', 'plain answer', null],
		]);
		assert.deepEqual(
			stored.map((s) => [s.message_id, s.parent_message_id]),
			[
				['t1:user', null],
				['t1', 't1:user'],
				['t2:user', 't1'],
				['t2', 't2:user'],
			],
		);
		const h = await m.getHistoryPromptMessages();
		assert.equal(h.turns, 2);
		assert.ok(h.messages.every((x) => !x.tool_calls && x.role !== 'tool'));
	});
});

describe('tool results through ChatHistory (the LLM Memory Store’s path)', () => {
	/** What n8n's AI Agent hands chatHistory.addMessages after a tool turn. */
	const agentTurn = (n: number): ChatMessage[] => [
		{ role: 'user', content: `question ${n}` },
		{
			role: 'assistant',
			content: `Calling http_request with input: {"url":"/${n}"}`,
			toolCalls: [{ id: `c${n}`, name: 'http_request', args: { url: `/${n}` } }],
		},
		{ role: 'tool', content: bigResult(BIG, n), toolCallId: `c${n}`, name: 'http_request' },
		{ role: 'assistant', content: `answer ${n}` },
	];

	/** A listed message, compactly: a call as "assistant → NAME", a result as "tool (ID): content". */
	const brief = (m: Awaited<ReturnType<ChatHistory['getMessages']>>[number]) =>
		m.role === 'tool'
			? `tool (${m.toolCallId}): ${m.content.length > 100 ? `${m.content.length} characters` : m.content}`
			: m.role === 'assistant' && m.toolCalls
				? `assistant → ${m.toolCalls.map((c) => c.name).join(',')}`
				: `${m.role}: ${m.content}`;
	const CUT = 16_000 + '\n[… 35234 more characters of tool output were not kept in memory]'.length;

	for (const [mode, expected] of [
		[
			'keep',
			[
				'user: question 1',
				'assistant → http_request',
				`tool (c1): ${CUT} characters`,
				'assistant: answer 1',
			],
		],
		[
			'note',
			[
				'user: question 1',
				'assistant → http_request',
				'tool (c1): [tool result of http_request: 51,234 characters, not kept in memory]',
				'assistant: answer 1',
			],
		],
		['leaveOut', ['user: question 1', 'assistant: answer 1']],
	] as const)
		it(`${mode}: what getMessages lists and the next turn replays`, async () => {
			const history = new ChatHistory(memory({ toolResults: mode }));
			await history.addMessages(agentTurn(1));
			assert.deepEqual((await history.getMessages()).map(brief), expected);
			const replay = (await history.memory.getHistoryPromptMessages({ maxTokenLimit: 1e6 }))
				.messages;
			assert.equal(replay.length, expected.length);
			assertPaired(replay, mode);
			assert.equal(replay.at(-1)?.content, 'answer 1');
		});
});

describe('tool results: windows and budgets never split a call from its (noted) result', () => {
	it('note: every window and budget keeps whole turns, and twenty noted turns fit where one kept result does not', async () => {
		const noted = memory({ toolResults: 'note' });
		const kept = memory({ toolResults: 'keep' }, tempDisk());
		for (let n = 1; n <= 20; n++) {
			const turn = n % 3 ? toolTurn(n, [bigResult(BIG, n), bigResult(700, n)]) : toolTurn(n);
			await noted.addMessages(turn);
			await kept.addMessages(turn);
		}
		await noted.flush();
		await kept.flush();
		for (const messageLimit of [1, 2, 5, 10, 20]) {
			const h = await noted.getHistoryPromptMessages({ messageLimit, maxTokenLimit: 1e6 });
			assert.equal(h.turns, messageLimit);
			assertPaired(h.messages, `window ${messageLimit}`);
		}
		let last = -1;
		for (let maxTokenLimit = 0; maxTokenLimit <= 2000; maxTokenLimit += 13) {
			const h = await noted.getHistoryPromptMessages({ maxTokenLimit, messageLimit: 20 });
			assertPaired(h.messages, `budget ${maxTokenLimit}`);
			assert.ok(h.tokens <= maxTokenLimit);
			assert.ok(h.turns >= last, 'a larger budget never holds fewer turns');
			last = h.turns;
		}
		// The store's defaults (10 turns, 2,000 tokens): ten noted turns fit; no kept turn does.
		const defaults = { messageLimit: 10, maxTokenLimit: 2000 };
		assert.equal((await noted.getHistoryPromptMessages(defaults)).turns, 10);
		const keptHistory = await kept.getHistoryPromptMessages(defaults);
		assert.equal(keptHistory.turns, 0, 'one kept 16,000-character result is over the whole budget');
		assert.equal(keptHistory.droppedTurns, 20);
	});

	it('leaveOut: windows count turns as plain turns', async () => {
		const m = memory({ toolResults: 'leaveOut' });
		for (let n = 1; n <= 6; n++) await m.addMessages(toolTurn(n));
		await m.flush();
		const h = await m.getHistoryPromptMessages({ messageLimit: 3 });
		assert.deepEqual(
			h.messages.map((x) => x.content),
			['question 4', 'answer 4', 'question 5', 'answer 5', 'question 6', 'answer 6'],
		);
	});
});

describe('tool results: the setting applies when a turn is stored', () => {
	it('turns stored before a change stay as stored; new turns follow the new setting', async () => {
		const storage = tempDisk();
		const before = memory({ toolResults: 'keep', maxToolOutputChars: 100 }, storage);
		await before.addMessages(toolTurn(1, [bigResult(300)]));
		await before.flush();
		const after = memory({ toolResults: 'note' }, storage);
		await after.addMessages(toolTurn(2, [bigResult(300)]));
		await after.flush();
		const leaving = memory({ toolResults: 'leaveOut' }, storage);
		await leaving.addMessages(toolTurn(3));
		await leaving.flush();
		const h = (await memory({}, storage).getHistoryPromptMessages({ maxTokenLimit: 1e6 })).messages;
		assert.deepEqual(
			h.map((x) => (x.role === 'tool' ? `tool: ${String(x.content).split('\n').at(-1)}` : x.role)),
			[
				'user',
				'assistant',
				'tool: [… 200 more characters of tool output were not kept in memory]',
				'assistant',
				'user',
				'assistant',
				'tool: [tool result of http_request: 300 characters, not kept in memory]',
				'assistant',
				'user',
				'assistant',
			],
		);
		assertPaired(h, 'mixed');
	});
});

describe('tool results handed back (a Chat Memory Manager delete re-adds the turns it keeps)', () => {
	/** What the manager does: list, clear, add the listed messages back. */
	async function readd(history: ChatHistory) {
		const listed = await history.getMessages();
		await history.clear();
		await history.addMessages(listed as ChatMessage[]);
		return await history.memory.messages();
	}

	for (const [mode, extra] of [
		['note', {}],
		['keep', { maxToolOutputChars: 500 }],
	] as const)
		it(`${mode}: a stored result is stored again as it was: never a note of a note, never cut twice`, async () => {
			const history = new ChatHistory(memory({ toolResults: mode, ...extra }));
			const turn = toolTurn(1, [bigResult(BIG), bigResult(900), 'short']);
			await history.saveTurn(turn);
			const before = await history.memory.messages();
			const after = await readd(history);
			assert.deepEqual(shape(after), shape(before));
			assert.match(before[2].content, mode === 'note' ? /51,234 characters/ : /50734 more/);
		});
});

describe('tool results: bad option values are refused before anything is stored', () => {
	it('an unknown mode or a cap that is not a whole number ≥ 0 is an InvalidOptionError naming the option', () => {
		const storage = new InstrumentedStorage(tempDisk());
		for (const toolResults of ['drop', 'Keep', 'leave_out', 1, true, {}] as unknown[])
			assert.throws(
				() => memory({ toolResults: toolResults as never }, storage),
				(e: unknown) =>
					e instanceof InvalidOptionError &&
					e.option === 'toolResults' &&
					/must be one of "keep", "note", "leaveOut", got /.test(e.message),
				JSON.stringify(toolResults),
			);
		for (const maxToolOutputChars of [-1, 1.5, NaN, Infinity, '100', null] as unknown[])
			assert.throws(
				() => memory({ maxToolOutputChars: maxToolOutputChars as never }, storage),
				(e: unknown) =>
					e instanceof InvalidOptionError &&
					e.option === 'maxToolOutputChars' &&
					/whole number of characters ≥ 0/.test(e.message),
				String(maxToolOutputChars),
			);
		assert.deepEqual(storage.calls, { get: 0, put: 0, delete: 0, list: 0 }, 'nothing was touched');
	});

	it('the defaults and every good value are accepted', () => {
		assert.deepEqual(toolResultsPolicy({}), { mode: 'keep', maxChars: 16_000 });
		assert.deepEqual(toolResultsPolicy({ toolResults: 'note', maxToolOutputChars: 0 }), {
			mode: 'note',
			maxChars: 0,
		});
		assert.deepEqual(toolResultsPolicy({ toolResults: 'leaveOut' }).mode, 'leaveOut');
	});
});
