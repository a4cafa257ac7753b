// Long-Term Memory in-process through n8n-core's WorkflowExecute: LLM with Memory recalls what a user
// said in an earlier conversation (and never another user's), counts the recall against its budget,
// leaves out what the window holds, captures each turn; the Memory Base node captures both sides with
// a user, searches one user's conversations, lists and updates. The model is the scripted stand-in.
import assert from 'node:assert/strict';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';

import type { INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { LlmWithMemory } from '../support/node-under-test';
import { echoModelNode, scriptedModelLog } from '../support/scripted-model';
import { tempDir } from '../support/storages';
import { TRIGGER_NODE } from '../support/test-nodes';
import { runWorkflow } from '../support/workflow-harness';
import type { WorkflowJson } from '../support/workflow-harness';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { MemoryBase } = require(
	path.resolve(__dirname, '../../nodes/MemoryBase/MemoryBase.node.ts'),
) as typeof import('../../nodes/MemoryBase/MemoryBase.node');

const LLM_TYPE = 'n8n-nodes-llm-memory.llmWithMemory';
const MB_TYPE = 'n8n-nodes-llm-memory.memoryBase';
const nodeTypes = { [LLM_TYPE]: new LlmWithMemory(), [MB_TYPE]: new MemoryBase() };

type Json = Record<string, any>;

const trigger = TRIGGER_NODE;

/** Trigger → LLM with Memory (Long-Term Memory on, user from the item's "user") with a scripted model. */
function llmWorkflow(folder: string, extra: INodeParameters = {}, id = 'wf-ltm'): WorkflowJson {
	return {
		id,
		name: 'long-term memory',
		nodes: [
			trigger,
			{
				id: 'llm',
				name: 'LLM',
				type: LLM_TYPE,
				typeVersion: 1,
				position: [200, 0],
				parameters: {
					localFolder: folder,
					systemMessage: 'You are helpful',
					longTermMemory: true,
					longTermUserId: '={{ $json.user }}',
					...extra,
				},
			},
			echoModelNode('LLM Model', 'model'),
		],
		connections: {
			Trigger: { main: [[{ node: 'LLM', type: 'main', index: 0 }]] },
			'LLM Model': { ai_languageModel: [[{ node: 'LLM', type: 'ai_languageModel', index: 0 }]] },
		},
	};
}

const chat = (chatInput: string, sessionId: string, user?: unknown): INodeExecutionData[] => [
	{ json: { chatInput, sessionId, ...(user !== undefined ? { user } : {}) } },
];
const lastCall = () => scriptedModelLog.forNode('LLM Model').at(-1)!;
const systemOf = () => String(lastCall().messages.find((m) => m.role === 'system')?.content ?? '');

async function turn(wf: WorkflowJson, items: INodeExecutionData[]): Promise<Json> {
	const r = await runWorkflow(wf, { nodeTypes, triggerItems: items });
	assert.equal(r.status, 'success', r.error?.message);
	return r.output('LLM')[0].json as Json;
}

afterEach(() => scriptedModelLog.clear());

describe('LLM with Memory: Long-Term Memory', () => {
	it('a fact a user gave in one conversation reaches the model in the next; another user’s never does', async () => {
		const folder = tempDir('ltm');
		const wf = llmWorkflow(folder);
		await turn(wf, chat('My order number is 4471 and it goes to Porto', 'alice-1', 'alice'));
		await turn(wf, chat('My cat is called Miso', 'bob-1', 'bob'));
		const out = await turn(wf, chat('Where does my order 4471 go?', 'alice-2', 'alice'));
		const system = systemOf();
		assert.match(system, /^You are helpful\n\n\[Long-term memory\]/);
		assert.match(system, /\d{4}-\d{2}-\d{2} user: My order number is 4471 and it goes to Porto/);
		assert.equal(
			lastCall().messages.filter((m) => m.role === 'system').length,
			1,
			'one system message, first',
		);
		assert.equal(out.memory.longTermMemory.scope, 'user');
		assert.ok(out.memory.longTermMemory.recalled >= 1);
		assert.ok(out.memory.longTermMemory.recallTokens > 0);
		assert.equal(out.memory.longTermMemory.captured, 2, 'both sides of the turn');
		// No Embedding input: pending says what it means (searchable by words, embedded later).
		assert.match(out.memory.longTermMemory.pendingNote, /searchable by words already/);
		await turn(wf, chat('What is my order number? 4471? Porto?', 'bob-2', 'bob'));
		assert.doesNotMatch(systemOf(), /4471|Porto/, 'bob never sees alice’s memories');
	});

	it('leaves out what the window already holds, and counts the recall against the history budget', async () => {
		const folder = tempDir('ltm');
		const wf = llmWorkflow(folder, { options: { maxHistoryTokens: 120 } });
		await turn(wf, chat('The wifi password is pelican-42', 'c1', 'u'));
		const same = await turn(wf, chat('What was the wifi password?', 'c1', 'u'));
		// The fact is in this conversation's window: not repeated as a recalled entry.
		assert.doesNotMatch(systemOf(), /Long-term memory/);
		assert.equal(same.memory.longTermMemory.recalled, 0);
		for (let i = 0; i < 4; i++)
			await turn(wf, chat(`Filler message number ${i} about nothing`, 'c1', 'u'));
		const late = await turn(wf, chat('Remind me of the wifi password', 'c1', 'u'));
		// The old turn fell out of the window: now it is recalled, and history and recall share 120 tokens.
		assert.match(systemOf(), /pelican-42/);
		assert.ok(
			late.memory.historyTokens + late.memory.longTermMemory.recallTokens <= 120,
			JSON.stringify(late.memory),
		);
	});

	it('a user ID that is an object or an array is refused before the model is called; nothing is captured', async () => {
		const folder = tempDir('ltm');
		const wf = llmWorkflow(folder);
		for (const [user, got] of [
			[{ id: 'alice' }, 'an object'],
			[['a', 'b'], 'an array'],
		] as const) {
			const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat('secret 99', 'c', user) });
			assert.equal(r.status, 'error');
			assert.equal(r.error?.message, `User ID must be a string or a number, got ${got}`);
		}
		assert.equal(scriptedModelLog.forNode('LLM Model').length, 0);
	});

	it('Recall Scope "This Conversation" stays in the conversation even with a user ID', async () => {
		const folder = tempDir('ltm');
		const wf = llmWorkflow(folder, { longTermOptions: { scope: 'conversation' } });
		await turn(wf, chat('I was born in Tromso', 'c1', 'u'));
		const out = await turn(wf, chat('Where was I born? Tromso?', 'c2', 'u'));
		assert.doesNotMatch(systemOf(), /Long-term memory|Tromso/);
		assert.equal(out.memory.longTermMemory.recalled, 0);
		assert.equal(out.memory.longTermMemory.scope, 'conversation');
	});
});

describe('LLM with Memory: recall says why, and a missed capture is made up', () => {
	it('small talk recalls nothing and the output says why; a question recalls with its scores', async () => {
		const folder = tempDir('ltm');
		const wf = llmWorkflow(folder);
		await turn(wf, chat('My order number is 4471 and it goes to Porto', 'a-1', 'alice'));
		const thanks = await turn(wf, chat('thanks!', 'a-2', 'alice'));
		assert.doesNotMatch(systemOf(), /Long-term memory/);
		assert.equal(thanks.memory.longTermMemory.recalled, 0);
		assert.match(thanks.memory.longTermMemory.notRecalled, /small talk/);
		const asked = await turn(wf, chat('Where does order 4471 go?', 'a-3', 'alice'));
		const [entry] = asked.memory.longTermMemory.entries;
		assert.match(entry.text, /4471/);
		assert.ok(entry.score > 0 && entry.lexicalScore > 0, JSON.stringify(entry));
		// No embedding model is connected: the report says the search went by words alone.
		assert.deepEqual(asked.memory.longTermMemory.search, { mode: 'lexical' });
	});

	it('a turn whose capture failed (the Memory Base unreachable) is captured by the next turn, once', async () => {
		const folder = tempDir('ltm');
		const wf = llmWorkflow(folder);
		await turn(wf, chat('I was born in Tromso', 'c1', 'u'));
		// The Memory Base's folder becomes a file: every read and write of it fails, chat memory does not.
		const bases = path.join(folder, 'memory_base');
		renameSync(bases, `${bases}.away`);
		writeFileSync(bases, 'not a folder');
		const down = await turn(wf, chat('My dog is called Biscuit', 'c1', 'u'));
		assert.match(down.memory.longTermMemory.captureError, /ENOTDIR/);
		assert.match(down.memory.longTermMemory.recallError, /./);
		assert.ok(down.output.length > 0 && down.messageId, 'the turn itself was answered and saved');
		rmSync(bases);
		renameSync(`${bases}.away`, bases);
		const next = await turn(wf, chat('And I like sailing', 'c1', 'u'));
		assert.equal(next.memory.longTermMemory.caughtUp, 1);
		assert.equal(next.memory.longTermMemory.captured, 4);
		const again = await turn(wf, chat('ok', 'c1', 'u'));
		assert.equal(again.memory.longTermMemory.caughtUp, undefined, 'made up once');
		const found = await turn(wf, chat('What is my dog called? Biscuit?', 'c2', 'u'));
		assert.ok(
			found.memory.longTermMemory.entries.some((e: Json) => /Biscuit/.test(e.text)),
			'the missed turn is recallable',
		);
	});
});

describe('LLM with Memory: where the user ID comes from, and an empty one', () => {
	it('This User with an empty User ID: the turn runs on this conversation, and the output and pane say so', async () => {
		const folder = tempDir('ltm');
		const wf = llmWorkflow(folder);
		const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat('My cat is Miso', 'c1') });
		assert.equal(r.status, 'success', r.error?.message);
		const out = r.output('LLM')[0].json as Json;
		assert.equal(out.memory.longTermMemory.scope, 'conversation');
		assert.match(out.memory.longTermMemory.warning, /User ID is empty/);
		const hints = r.runData['LLM'][0].hints?.map((h) => h.message) ?? [];
		assert.ok(
			hints.some((h) => /User ID is empty/.test(h)),
			JSON.stringify(hints),
		);
	});

	it('When User ID Is Empty = Fail stops before the model is called', async () => {
		const folder = tempDir('ltm');
		const wf = llmWorkflow(folder, { longTermEmptyUserId: 'fail' });
		const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat('My cat is Miso', 'c1') });
		assert.equal(r.status, 'error');
		assert.equal(r.error?.message, 'The User ID is empty');
		assert.equal(scriptedModelLog.forNode('LLM Model').length, 0);
	});

	it('User ID From: the chat widget’s metadata, or the n8n login of the hosted chat', async () => {
		const folder = tempDir('ltm');
		const widget = llmWorkflow(folder, { longTermUserIdSource: 'metadata' });
		await turn(widget, [
			{ json: { chatInput: 'I was born in Tromso', sessionId: 'w1', metadata: { userId: 'ana' } } },
		]);
		const fromWidget = await turn(widget, [
			{
				json: {
					chatInput: 'Where was I born? Tromso?',
					sessionId: 'w2',
					metadata: { userId: 'ana' },
				},
			},
		]);
		assert.equal(fromWidget.memory.longTermMemory.userId, 'ana');
		assert.ok(fromWidget.memory.longTermMemory.entries.some((e: Json) => /Tromso/.test(e.text)));
		const login = llmWorkflow(folder, { longTermUserIdSource: 'n8nUser' });
		const fromLogin = await turn(login, [
			{
				json: {
					chatInput: 'Where was I born? Tromso?',
					sessionId: 'w3',
					user: { id: 'ana', email: 'a@x' },
				},
			},
		]);
		assert.equal(fromLogin.memory.longTermMemory.userId, 'ana');
		assert.ok(fromLogin.memory.longTermMemory.entries.some((e: Json) => /Tromso/.test(e.text)));
	});
});

describe('Memory Base node: both sides, users, listings', () => {
	function mb(folder: string, parameters: INodeParameters): WorkflowJson {
		return {
			id: 'wf-mb2',
			name: 'memory base',
			nodes: [
				trigger,
				{
					id: 'mb',
					name: 'Memory Base',
					type: MB_TYPE,
					typeVersion: 1,
					position: [200, 0],
					parameters: { localFolder: folder, ...parameters },
				},
			],
			connections: { Trigger: { main: [[{ node: 'Memory Base', type: 'main', index: 0 }]] } },
		};
	}
	const run = async (folder: string, parameters: INodeParameters, items: Json[]) => {
		const r = await runWorkflow(mb(folder, parameters), {
			nodeTypes,
			triggerItems: items.map((json) => ({ json })),
		});
		assert.equal(r.status, 'success', r.error?.message);
		return r.output('Memory Base').map((i) => i.json as Json);
	};

	it('captures the user message and the answer by default, with a user; searches one user’s conversations without an embedding model', async () => {
		const folder = tempDir('mb2');
		const capture = { operation: 'capture', userId: '={{ $json.user }}' };
		const out = await run(folder, capture, [
			{ sessionId: 'a1', user: 'ana', chatInput: 'I am allergic to peanuts', output: 'Noted' },
		]);
		assert.equal(out[0].memoryBase.captured, 2);
		assert.equal(out[0].memoryBase.userId, 'ana');
		await run(folder, capture, [
			{ sessionId: 'a2', user: 'ana', chatInput: 'Book a table', output: 'Booked for Friday' },
			{ sessionId: 'z1', user: 'zoe', chatInput: 'I am allergic to cats', output: 'Noted' },
		]);
		const hits = await run(
			folder,
			{ operation: 'search', sessionScope: 'user', userId: 'ana', topK: 5 },
			[{ chatInput: 'what am I allergic to?' }],
		);
		assert.equal(hits[0].text, 'I am allergic to peanuts');
		assert.equal(hits[0].role, 'user');
		assert.ok(hits.every((h) => h.userId === 'ana'));
		const page = await run(
			folder,
			{ operation: 'listMessages', sessionScope: 'user', userId: 'ana', limit: 3 },
			[{}],
		);
		assert.deepEqual(
			page.map((m) => [m.session_id, m.role, m.text]),
			[
				['a1', 'user', 'I am allergic to peanuts'],
				['a1', 'assistant', 'Noted'],
				['a2', 'user', 'Book a table'],
			],
		);
		assert.deepEqual([page[0].total, page[0].nextOffset], [4, 3]);
		const next = await run(
			folder,
			{
				operation: 'listMessages',
				sessionScope: 'user',
				userId: 'ana',
				limit: 3,
				options: { offset: 3 },
			},
			[{}],
		);
		assert.deepEqual(
			next.map((m) => m.text),
			['Booked for Friday'],
		);
		assert.deepEqual(
			(await run(folder, { operation: 'listBases' }, [{}])).map((b) => b.baseId),
			['wf-mb2'],
		);
		const settings = await run(
			folder,
			{ operation: 'updateSettings', threshold: 3, autoCapture: false },
			[{}],
		);
		assert.deepEqual([settings[0].threshold, settings[0].auto_capture], [3, false]);
	});

	it('a search of one user needs the User ID; an object user ID is refused by name', async () => {
		const folder = tempDir('mb2');
		const r = await runWorkflow(mb(folder, { operation: 'search', sessionScope: 'user' }), {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'x' } }],
		});
		assert.equal(r.status, 'error');
		assert.match(r.error?.message ?? '', /No user ID/);
		const bad = await runWorkflow(
			mb(folder, { operation: 'capture', userId: '={{ $json.user }}' }),
			{ nodeTypes, triggerItems: [{ json: { sessionId: 's', user: { id: 1 }, output: 'x' } }] },
		);
		assert.equal(bad.error?.message, 'User ID must be a string or a number, got an object');
	});
});
