// ChatHistory (issue 9): messages handed over one by one or in batches (n8n's AI Agent, Respond to Chat,
// Chat Memory Manager) are grouped into whole turns, tool steps are paired, lone messages are stored as
// turns of their own, and a "delete the last N" done as clear-and-re-add keeps the turns and their IDs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	ChatHistory,
	groupTurns,
	NodeTokenBufferMemory,
	pairSteps,
	TokenBufferMemory,
	UnsupportedMessageError,
} from '../../../src/internal';
import type { ChatMessage, MemoryOptions } from '../../../src/internal';
import { InstrumentedStorage, tempDisk } from '../../support/storages';

const call = (
	id: string,
	name = 'calculator',
	args: Record<string, unknown> = { input: '6*7' },
) => ({ id, name, args });
const H = (content: string, id?: string): ChatMessage => ({
	role: 'user',
	content,
	...(id ? { id } : {}),
});
const A = (content: string, id?: string): ChatMessage => ({
	role: 'assistant',
	content,
	...(id ? { id } : {}),
});
const CALL = (...calls: ReturnType<typeof call>[]): ChatMessage => ({
	role: 'assistant',
	content: '',
	toolCalls: calls,
});
const TOOL = (toolCallId: string, content: string, name = 'calculator'): ChatMessage => ({
	role: 'tool',
	content,
	toolCallId,
	name,
});

const toolTurn = (n: number) => [
	H(`what is ${n}*${n}?`),
	CALL(call(`c${n}`, 'calculator', { input: `${n}*${n}` })),
	TOOL(`c${n}`, String(n * n)),
	A(`It is ${n * n}.`),
];

function setup(extra: Partial<MemoryOptions> = {}) {
	const storage = new InstrumentedStorage(tempDisk());
	const options: MemoryOptions = { storage, model: 'gpt-4o-mini', ...extra };
	return {
		storage,
		options,
		history: new ChatHistory(new NodeTokenBufferMemory('wf', 's1', 'store', options)),
	};
}

/** A listed message as "role: content" (tool calls as "assistant → name"). */
const show = (m: { role: string; content: string; toolCalls?: readonly { name: string }[] }) =>
	m.toolCalls?.length
		? `${m.role} → ${m.toolCalls.map((c) => c.name).join(',')}`
		: `${m.role}: ${m.content}`;

describe('groupTurns', () => {
	it('makes turns of user, tool steps and answer; keeps a trailing user message open', () => {
		const { turns, open } = groupTurns([...toolTurn(2), H('plain'), A('answer'), H('waiting')]);
		assert.deepEqual(
			turns.map((t) => [t.userContent, t.steps.map((s) => s.role), t.assistantContent]),
			[
				['what is 2*2?', ['assistant', 'tool'], 'It is 4.'],
				['plain', [], 'answer'],
			],
		);
		assert.deepEqual(open, { user: H('waiting'), steps: [] });
	});

	it('closes an unanswered turn when the next user message comes; a lone answer is a turn with an empty user message', () => {
		const { turns, open } = groupTurns([H('first'), H('second'), A('to second'), A('greeting')]);
		assert.deepEqual(
			turns.map((t) => [t.userContent, t.assistantContent]),
			[
				['first', ''],
				['second', 'to second'],
				['', 'greeting'],
			],
		);
		assert.equal(open, undefined);
	});

	it('continues a turn left open by an earlier call', () => {
		const first = groupTurns([H('q'), CALL(call('c1'))]);
		assert.equal(first.turns.length, 0);
		const second = groupTurns([TOOL('c1', '42'), A('42.')], first.open);
		assert.deepEqual(
			second.turns.map((t) => [t.userContent, t.steps.length, t.assistantContent]),
			[['q', 2, '42.']],
		);
	});

	it('prefers the IDs messages came with: the answer’s ID, else the user message’s without ":user"', () => {
		const { turns } = groupTurns([H('q', 't1:user'), A('a', 't1'), H('q2', 't2:user'), H('q3')]);
		assert.deepEqual(
			turns.map((t) => t.preferredId),
			['t1', 't2'],
		);
	});

	it('refuses system messages with an error that says what to do instead', () => {
		assert.throws(
			() => groupTurns([{ role: 'system', content: 'be brief' }]),
			(e: unknown) =>
				e instanceof UnsupportedMessageError &&
				/system message of the node/.test((e as Error).message),
		);
	});
});

describe('pairSteps', () => {
	it('drops a result without a call and a call without a result', () => {
		const steps = pairSteps([
			TOOL('x', 'orphan') as never,
			CALL(call('c1'), call('c2', 'search')) as never,
			TOOL('c1', '42') as never,
		]);
		assert.deepEqual(steps, [
			{ role: 'assistant', content: '', toolCalls: [call('c1')] },
			{ role: 'tool', content: '42', toolCallId: 'c1', name: 'calculator' },
		]);
	});

	it('repairs parallel calls as n8n 2.8.4’s agent writes them: the AI message once, each result on its own call', () => {
		// n8n pushes the same AI message once per call, and gives every result the first call's ID.
		const ai = CALL(call('c1', 'calculator'), call('c2', 'search', { q: 'x' }));
		const steps = pairSteps([
			ai,
			TOOL('c1', '42', 'calculator'),
			ai,
			TOOL('c1', 'found', 'search'),
		] as never);
		assert.deepEqual(steps, [
			{
				role: 'assistant',
				content: '',
				toolCalls: [call('c1', 'calculator'), call('c2', 'search', { q: 'x' })],
			},
			{ role: 'tool', content: '42', toolCallId: 'c1', name: 'calculator' },
			{ role: 'tool', content: 'found', toolCallId: 'c2', name: 'search' },
		]);
	});

	it('an assistant message whose calls all lost their results is dropped', () => {
		assert.deepEqual(pairSteps([CALL(call('c1')) as never]), []);
	});
});

describe('ChatHistory', () => {
	it('stores an agent’s tool turn whole (one write) and replays it in order', async () => {
		const { history, storage } = setup();
		const added = await history.addMessages(toolTurn(3));
		assert.equal(added.length, 1);
		assert.equal(storage.calls.put, 1);
		const h = await history.memory.getHistoryPromptMessages();
		assert.deepEqual(
			h.messages.map((m) => m.role),
			['user', 'assistant', 'tool', 'assistant'],
		);
		assert.equal(h.messages[2].tool_call_id, h.messages[1].tool_calls![0].id);
		assert.deepEqual((await history.getMessages()).map(show), [
			'user: what is 3*3?',
			'assistant → calculator',
			'tool: 9',
			'assistant: It is 9.',
		]);
	});

	it('a lone user message waits for its answer, is listed meanwhile, and is stored unanswered by flushOpen()', async () => {
		const { history, storage } = setup();
		await history.addMessages([H('hello?')]);
		assert.equal(storage.calls.put, 0, 'nothing written yet');
		assert.deepEqual((await history.getMessages()).map(show), ['user: hello?']);
		await history.flushOpen();
		assert.equal(history.hasOpenTurn, false);
		// Listed from storage by a fresh object; never replayed to a model (an unanswered turn).
		const fresh = new ChatHistory(history.memory);
		assert.deepEqual((await fresh.getMessages()).map(show), ['user: hello?']);
		assert.deepEqual((await fresh.memory.getHistoryPromptMessages()).messages, []);
		assert.equal(await history.flushOpen(), undefined, 'nothing left to store');
	});

	it('a lone AI message is a turn of its own: listed without an empty user message', async () => {
		const { history } = setup();
		await history.addMessages([A('Welcome! What is your name?')]);
		await history.addMessages([H('Bob')]);
		await history.addMessages([A('Hi Bob')]);
		assert.deepEqual((await history.getMessages()).map(show), [
			'assistant: Welcome! What is your name?',
			'user: Bob',
			'assistant: Hi Bob',
		]);
		const h = await history.memory.getHistoryPromptMessages();
		assert.deepEqual(
			h.messages.map((m) => `${m.role}: ${m.content}`),
			['user: ', 'assistant: Welcome! What is your name?', 'user: Bob', 'assistant: Hi Bob'],
		);
	});

	it('saveTurn stores a whole turn, closing an open one first', async () => {
		const { history } = setup();
		await history.addMessages([H('left open')]);
		await history.saveTurn({ userContent: 'q', assistantContent: 'a' });
		assert.deepEqual((await history.getMessages()).map(show), [
			'user: left open',
			'user: q',
			'assistant: a',
		]);
	});

	it('"delete the last N" as the Chat Memory Manager does it keeps the remaining turns and their IDs', async () => {
		const { history } = setup();
		await history.addMessages([...toolTurn(2), H('plain'), A('answer')]);
		const before = await history.getMessages();
		const kept = before.slice(0, -2);
		await history.clear();
		for (const m of kept) await history.addMessages([m]); // one message per call, as n8n re-adds them
		const after = await history.getMessages();
		assert.deepEqual(after.map(show), kept.map(show));
		assert.deepEqual(
			after.map((m) => m.id),
			kept.map((m) => m.id),
			'message IDs survive',
		);
		assert.deepEqual(
			(await history.memory.getHistoryPromptMessages()).messages.map((m) => m.role),
			['user', 'assistant', 'tool', 'assistant'],
		);
	});

	it('re-adding listed messages without clearing gets fresh IDs instead of failing on duplicates', async () => {
		const { history } = setup();
		await history.addMessages([H('q'), A('a')]);
		const listed = await history.getMessages();
		await history.addMessages(listed);
		const all = await history.getMessages();
		assert.deepEqual(all.map(show), ['user: q', 'assistant: a', 'user: q', 'assistant: a']);
		assert.equal(new Set(all.map((m) => m.id)).size, 4);
	});

	it('lists the newest thread only, so a regenerated answer replaces its sibling', async () => {
		const { options } = setup();
		const memory = new TokenBufferMemory('wf', 's1', options);
		await memory.addMessages({ messageId: 't1', userContent: 'q1', assistantContent: 'a1' });
		await memory.addMessages({ messageId: 't2', userContent: 'q2', assistantContent: 'first try' });
		await memory.addMessages({
			messageId: 't2b',
			parentMessageId: 't1',
			userContent: 'q2',
			assistantContent: 'second try',
		});
		await memory.flush();
		const listed = await new ChatHistory(memory).getMessages();
		assert.deepEqual(listed.map(show), [
			'user: q1',
			'assistant: a1',
			'user: q2',
			'assistant: second try',
		]);
	});

	it('in conversation scope it shares turns with any other writer of the conversation', async () => {
		const { options } = setup();
		const llmNode = new TokenBufferMemory('wf', 'conv', options);
		await llmNode.addMessages({ userContent: 'from the LLM node', assistantContent: 'its answer' });
		await llmNode.flush();
		const agent = new ChatHistory(new TokenBufferMemory('wf', 'conv', options));
		await agent.addMessages(toolTurn(4));
		const again = await new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages();
		assert.deepEqual(
			again.messages.map((m) => m.role),
			['user', 'assistant', 'user', 'assistant', 'tool', 'assistant'],
		);
	});

	it('a window counts whole turns, tool turns included, and never starts inside one', async () => {
		const { history } = setup();
		await history.addMessages([...toolTurn(1), H('plain'), A('ok'), ...toolTurn(2)]);
		const h = await history.memory.getHistoryPromptMessages({ messageLimit: 1 });
		assert.deepEqual(
			h.messages.map((m) => m.role),
			['user', 'assistant', 'tool', 'assistant'],
		);
		assert.equal(h.messages[0].content, 'what is 2*2?');
	});

	it('clear() deletes the document and forgets an open turn', async () => {
		const { history } = setup();
		await history.addMessages([H('q'), A('a'), H('open')]);
		await history.clear();
		assert.deepEqual(await history.getMessages(), []);
		assert.equal(history.hasOpenTurn, false);
	});
});
