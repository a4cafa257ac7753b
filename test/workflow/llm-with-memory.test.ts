// "LLM with Memory" run in-process through n8n-core's real WorkflowExecute, with a scripted chat model
// sub-node (the only stand-in: no model can be reached from these machines).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, afterEach, describe, it } from 'node:test';

import type { INode, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { MESSAGE_FRAMING_TOKENS, TiktokenCounter } from '../../src/internal';
import { LlmWithMemory } from '../support/node-under-test';
import { ensureRgw, RGW_CREDENTIALS, rgwCredentials, rgwStorage } from '../support/rgw';
import { tempDir } from '../support/storages';
import { binaryData, runWorkflow } from '../support/workflow-harness';
import type { WorkflowJson } from '../support/workflow-harness';
import { echoModelNode, scriptedModelLog } from '../support/scripted-model';
import { TEST_LOOP_TYPE, TEST_TRIGGER_TYPE } from '../support/test-nodes';

const LLM_TYPE = 'n8n-nodes-llm-memory.llmWithMemory';
const nodeTypes = { [LLM_TYPE]: new LlmWithMemory() };
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');

type Json = Record<string, any>;

function llm(name: string, id: string, parameters: INodeParameters, x = 200): INode {
	return { id, name, type: LLM_TYPE, typeVersion: 1, position: [x, 0], parameters };
}

const model = echoModelNode;

/** Trigger → LLM nodes in a chain, each with its own scripted model. */
function chain(
	folder: string,
	llms: Array<{ name: string; id: string; params?: INodeParameters }>,
	workflowId = 'wf-engine',
): WorkflowJson {
	const nodes: INode[] = [
		{
			id: 'trigger',
			name: 'Trigger',
			type: TEST_TRIGGER_TYPE,
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
	];
	const connections: WorkflowJson['connections'] = {};
	let prev = 'Trigger';
	llms.forEach((l, i) => {
		nodes.push(llm(l.name, l.id, { localFolder: folder, ...l.params }, 200 * (i + 1)));
		nodes.push(model(`${l.name} Model`, `${l.id}-model`, 200 * (i + 1)));
		connections[prev] = { main: [[{ node: l.name, type: 'main', index: 0 }]] };
		connections[`${l.name} Model`] = {
			ai_languageModel: [[{ node: l.name, type: 'ai_languageModel', index: 0 }]],
		};
		prev = l.name;
	});
	return { id: workflowId, name: 'engine test', nodes, connections };
}

const chat = (chatInput: string, sessionId = 's1', extra: Json = {}): INodeExecutionData[] => [
	{ json: { chatInput, sessionId, ...extra } },
];
/** What the model of an LLM node (its sub-node "<name> Model") was sent. */
const calls = (llmName: string) => scriptedModelLog.forNode(`${llmName} Model`);
const contents = (llmName: string, callIndex = -1) => {
	const calls = scriptedModelLog.forNode(`${llmName} Model`);
	return calls.at(callIndex)!.messages.map((m) => `${m.role}: ${m.content}`);
};
/** For a node fed by another LLM node: its conversation comes from the first node's output. */
const downstream = (extra: INodeParameters = {}): INodeParameters => ({
	promptType: 'define',
	text: "={{ 'second node: ' + $('Trigger').item.json.chatInput }}",
	conversationIdType: 'customKey',
	conversationId: '={{ $json.conversationId }}',
	...extra,
});

afterEach(() => scriptedModelLog.clear());

describe('LLM with Memory in n8n-core WorkflowExecute', () => {
	it('node mode: two LLM nodes each see only their own history', async () => {
		const folder = tempDir();
		const wf = chain(folder, [
			{ name: 'A', id: 'node-a', params: { memoryMode: 'node', systemMessage: 'You are A' } },
			{ name: 'B', id: 'node-b', params: { memoryMode: 'node', ...downstream() } },
		]);
		const r1 = await runWorkflow(wf, { nodeTypes, triggerItems: chat('colour?') });
		assert.equal(r1.status, 'success', r1.error?.message);
		await runWorkflow(wf, { nodeTypes, triggerItems: chat('another colour?') });
		assert.deepEqual(contents('A'), [
			'system: You are A',
			'user: colour?',
			'assistant: [echo] colour? (2 messages)',
			'user: another colour?',
		]);
		assert.deepEqual(contents('B'), [
			'user: second node: colour?',
			'assistant: [echo] second node: colour? (1 messages)',
			'user: second node: another colour?',
		]);
		for (const id of ['node-a', 'node-b'])
			assert.ok(existsSync(path.join(folder, 'node_memory/wf-engine/s1', `${id}.json`)));
	});

	it('conversation mode: nodes share one history and each appends its own turn', async () => {
		const folder = tempDir();
		const wf = chain(folder, [
			{ name: 'A', id: 'node-a', params: { memoryMode: 'conversation' } },
			{ name: 'B', id: 'node-b', params: { memoryMode: 'conversation', ...downstream() } },
		]);
		await runWorkflow(wf, { nodeTypes, triggerItems: chat('hello') });
		await runWorkflow(wf, { nodeTypes, triggerItems: chat('again') });
		assert.deepEqual(contents('A'), [
			'user: hello',
			'assistant: [echo] hello (1 messages)',
			'user: second node: hello',
			'assistant: [echo] second node: hello (3 messages)',
			'user: again',
		]);
		assert.equal(contents('B').length, 7, 'B saw both turns of run 1 and A’s turn of run 2');
	});

	it('output item: answer for the chat widget, IDs, memory stats, pairedItem', async () => {
		const folder = tempDir();
		const wf = chain(folder, [{ name: 'A', id: 'node-a', params: { memoryMode: 'node' } }]);
		const first = (await runWorkflow(wf, { nodeTypes, triggerItems: chat('hi') })).output('A')[0];
		const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat('and now?') });
		const item = r.output('A')[0];
		assert.equal(item.json.output, '[echo] and now? (3 messages)');
		assert.equal(item.json.text, item.json.output);
		assert.equal(item.json.conversationId, 's1');
		assert.match(String(item.json.messageId), /^[0-9a-f-]{36}$/);
		assert.equal(item.json.parentMessageId, first.json.messageId);
		// History tokens: the stored counts of what was sent, with each message's framing (4 tokens).
		const sent = stored(folder, 'node_memory/wf-engine/s1/node-a.json').slice(0, 2);
		const memory = item.json.memory as Json;
		assert.deepEqual(
			{ ...memory, requestTokens: undefined },
			{
				mode: 'node',
				key: 'node_memory/wf-engine/s1/node-a.json',
				historyMessages: 2,
				historyTokens:
					(first.json.memory as Json).historyTokens +
					sent.reduce((n: number, m: Json) => n + m.token_count + MESSAGE_FRAMING_TOKENS, 0),
				droppedTurns: 0,
				requestTokens: undefined,
			},
		);
		// The whole request as sent: the history, the user's message, their framing, the reply's priming.
		const counter = new TiktokenCounter('o200k_base');
		const asked = counter.count('and now?') + MESSAGE_FRAMING_TOKENS + 3;
		assert.equal(memory.requestTokens, memory.historyTokens + asked);
		assert.deepEqual(item.pairedItem, { item: 0 });
	});

	it('Max History Tokens holds for what is sent: 72 stored messages and a 1,000-token budget', async () => {
		const folder = tempDir();
		const wf = chain(folder, [
			{
				name: 'A',
				id: 'node-a',
				params: {
					systemMessage: 'You are a careful assistant.',
					options: { maxHistoryTokens: 1000 },
				},
			},
		]);
		for (let t = 0; t < 36; t++)
			await runWorkflow(wf, {
				nodeTypes,
				triggerItems: chat(`Turn ${t}: tell me about topic ${t} please`),
			});
		const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat('and the last one?') });
		const memory = r.output('A')[0].json.memory as Json;
		const counter = new TiktokenCounter('o200k_base');
		const request = calls('A').at(-1)!.messages;
		// What the model received, counted as sent: every message with its framing, and the priming.
		const received =
			3 +
			request.reduce((n, m) => n + counter.count(String(m.content)) + MESSAGE_FRAMING_TOKENS, 0);
		assert.equal(memory.requestTokens, received);
		const around =
			counter.count('You are a careful assistant.') + counter.count('and the last one?') + 3;
		const history = received - around - 2 * MESSAGE_FRAMING_TOKENS;
		assert.ok(memory.historyMessages >= 40 && memory.droppedTurns > 0, JSON.stringify(memory));
		assert.ok(history <= 1000, `${history} history tokens sent for a budget of 1000`);
		assert.equal(history, memory.historyTokens);
	});

	it('regeneration: Parent Message ID reads that turn’s thread, and later turns follow the new branch', async () => {
		const folder = tempDir();
		const wf = chain(folder, [
			{
				name: 'A',
				id: 'node-a',
				params: {
					memoryMode: 'conversation',
					options: { parentMessageId: '={{ $json.parent ?? "" }}' },
				},
			},
		]);
		const t1 = (await runWorkflow(wf, { nodeTypes, triggerItems: chat('q1') })).output('A')[0].json;
		await runWorkflow(wf, { nodeTypes, triggerItems: chat('q2') });
		const regen = (
			await runWorkflow(wf, {
				nodeTypes,
				triggerItems: chat('q2, differently', 's1', { parent: t1.messageId }),
			})
		).output('A')[0].json;
		assert.deepEqual(contents('A'), [
			'user: q1',
			'assistant: [echo] q1 (1 messages)',
			'user: q2, differently',
		]);
		assert.equal(regen.parentMessageId, t1.messageId);
		await runWorkflow(wf, { nodeTypes, triggerItems: chat('q3') });
		assert.deepEqual(contents('A'), [
			'user: q1',
			'assistant: [echo] q1 (1 messages)',
			'user: q2, differently',
			'assistant: [echo] q2, differently (3 messages)',
			'user: q3',
		]);
	});

	it('files: a chat upload reaches the model as an image and stays in memory after the execution', async () => {
		const folder = tempDir();
		const wf = chain(folder, [{ name: 'A', id: 'node-a', params: { memoryMode: 'node' } }]);
		const upload = [
			{
				json: { chatInput: 'what is this?', sessionId: 's1' },
				binary: { data0: binaryData(PNG, { mimeType: 'image/png', fileName: 'shot.png' }) },
			},
		];
		await runWorkflow(wf, { nodeTypes, triggerItems: upload });
		const firstCall = calls('A')[0].rawInput as Json[];
		const dataUrl = `data:image/png;base64,${PNG.toString('base64')}`;
		assert.deepEqual(firstCall.at(-1)!.content, [
			{ type: 'image_url', image_url: { url: dataUrl } },
			{ type: 'text', text: 'what is this?' },
		]);
		await runWorkflow(wf, { nodeTypes, triggerItems: chat('and the colours?') });
		const second = calls('A')[1].rawInput as Json[];
		assert.deepEqual(
			second[0].content[0],
			{ type: 'image_url', image_url: { url: dataUrl } },
			'history rebuilt from our own copy',
		);
		const files = path.join(folder, 'memory_files/wf-engine/s1');
		assert.equal(
			readFileSync(
				path.join(
					files,
					stored(folder, 'node_memory/wf-engine/s1/node-a.json')[0].files[0].key.split('/').pop(),
				),
			).toString('hex'),
			PNG.toString('hex'),
		);
	});

	it('node mode without a session ID fails clearly and never calls the model', async () => {
		const folder = tempDir();
		const wf = chain(folder, [{ name: 'A', id: 'node-a', params: { memoryMode: 'node' } }]);
		const r = await runWorkflow(wf, { nodeTypes, triggerItems: [{ json: { chatInput: 'hi' } }] });
		assert.equal(r.status, 'error');
		assert.equal(r.error?.message, 'Node memory needs a session ID, but none was found');
		assert.match(String(r.error?.description), /from a directly connected Chat Trigger/);
		assert.equal(scriptedModelLog.calls.length, 0);
	});

	it('conversation mode without a session ID runs without memory, says so in the output and in one hint', async () => {
		const folder = tempDir();
		const wf = chain(folder, [{ name: 'A', id: 'node-a', params: { memoryMode: 'conversation' } }]);
		const items = [{ json: { chatInput: 'hi' } }, { json: { chatInput: 'again' } }];
		const r = await runWorkflow(wf, { nodeTypes, triggerItems: items });
		assert.equal(r.status, 'success');
		const out = r.output('A')[0].json;
		assert.equal(out.output, '[echo] hi (1 messages)');
		assert.equal((out.memory as Json).enabled, false);
		assert.match(
			(out.memory as Json).reason,
			/No session ID was found, so this call ran without memory/,
		);
		// The output pane's hint: once for the run, not once per item.
		const hints = r.runData.A[0].hints ?? [];
		assert.equal(hints.length, 1);
		assert.equal(hints[0].location, 'outputPane');
		assert.match(hints[0].message, /ran without memory.*First item without one: 0/s);
		assert.equal(existsSync(path.join(folder, 'conversation_memory')), false);
	});

	it('Require Session ID turns a memoryless call into an error; the help follows the chosen source', async () => {
		const folder = tempDir();
		const required = { memoryMode: 'conversation', options: { requireSessionId: true } };
		const fromTrigger = chain(folder, [{ name: 'A', id: 'node-a', params: required }]);
		const r = await runWorkflow(fromTrigger, { nodeTypes, triggerItems: chat('hi', '') });
		assert.equal(r.status, 'error');
		assert.equal(r.error?.message, 'No session ID found');
		assert.match(
			String(r.error?.description),
			/'sessionId' field from a directly connected Chat Trigger/,
		);
		const defined = {
			...required,
			conversationIdType: 'customKey',
			conversationId: '={{ $json.userId }}',
		};
		const below = chain(folder, [{ name: 'A', id: 'node-a', params: defined }]);
		const r2 = await runWorkflow(below, { nodeTypes, triggerItems: chat('hi', '') });
		assert.equal(r2.error?.message, 'No session ID found');
		assert.match(String(r2.error?.description), /The "Session ID" field is empty for this item/);
		assert.doesNotMatch(String(r2.error?.description), /Define Below/);
		assert.equal(scriptedModelLog.calls.length, 0);
		// With an ID, the option changes nothing.
		const ok = await runWorkflow(fromTrigger, { nodeTypes, triggerItems: chat('hi', 's-1') });
		assert.equal(ok.status, 'success');
		assert.equal((ok.output('A')[0].json.memory as Json).historyMessages, 0);
	});

	it('memory mode None: no history, nothing stored', async () => {
		const folder = tempDir();
		const wf = chain(folder, [{ name: 'A', id: 'node-a', params: { memoryMode: 'none' } }]);
		await runWorkflow(wf, { nodeTypes, triggerItems: chat('one') });
		const out = (await runWorkflow(wf, { nodeTypes, triggerItems: chat('two') })).output('A')[0]
			.json;
		assert.deepEqual(contents('A'), ['user: two']);
		assert.deepEqual(out.memory, { mode: 'none' });
		assert.equal(existsSync(path.join(folder, 'conversation_memory')), false);
	});

	it('a bad conversation ID is refused by name before the model is called', async () => {
		const folder = tempDir();
		const wf = chain(folder, [{ name: 'A', id: 'node-a', params: { memoryMode: 'node' } }]);
		const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat('hi', '../../etc') });
		assert.equal(r.status, 'error');
		assert.match(
			String(r.error?.message),
			/Invalid conversation_id: "\.\.\/\.\.\/etc" contains "\/"/,
		);
		assert.equal(scriptedModelLog.calls.length, 0);
		assert.equal(existsSync(path.join(folder, 'etc')), false);
	});

	// Issue 7 #0: String() turned every object into "[object Object]", so two users' chats merged.
	for (const [what, sessionId] of [
		['an object', { user: 'alice' }],
		['an array', ['x', 'y']],
		['a boolean', true],
	] as const) {
		it(`a session ID that is ${what} is refused by name before the model is called (no shared key)`, async () => {
			const folder = tempDir();
			for (const mode of ['node', 'conversation']) {
				const wf = chain(folder, [{ name: 'A', id: 'node-a', params: { memoryMode: mode } }]);
				const r = await runWorkflow(wf, {
					nodeTypes,
					triggerItems: [{ json: { chatInput: 'my secret is 1234', sessionId } }],
				});
				assert.equal(r.status, 'error');
				assert.equal(
					r.error?.message,
					`Session ID must be a string or a number, got ${what}${what === 'a boolean' ? ' (true)' : ''}`,
				);
			}
			assert.equal(scriptedModelLog.calls.length, 0);
			assert.equal(existsSync(path.join(folder, 'conversation_memory')), false);
			assert.equal(existsSync(path.join(folder, 'node_memory')), false);
		});
	}

	it('a Define Below expression that evaluates to an object is refused too; a number is its decimal string', async () => {
		const folder = tempDir();
		const defined = (expr: string) =>
			chain(folder, [
				{
					name: 'A',
					id: 'node-a',
					params: { memoryMode: 'node', conversationIdType: 'customKey', conversationId: expr },
				},
			]);
		const r = await runWorkflow(defined('={{ $json.user }}'), {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'hi', user: { id: 'bob' } } }],
		});
		assert.equal(r.status, 'error');
		assert.match(
			String(r.error?.message),
			/Session ID must be a string or a number, got an object/,
		);
		const ok = await runWorkflow(defined('={{ $json.user }}'), {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'hi', user: 42 } }],
		});
		assert.equal(ok.output('A')[0].json.conversationId, '42');
		assert.ok(existsSync(path.join(folder, 'node_memory/wf-engine/42/node-a.json')));
		assert.equal(scriptedModelLog.calls.length, 1);
	});

	it('a 196-byte Message ID works; a bad one (or an unknown parent) fails before the model is called', async () => {
		const folder = tempDir();
		const wf = chain(folder, [
			{
				name: 'A',
				id: 'node-a',
				params: {
					memoryMode: 'node',
					options: { messageId: '={{ $json.turn }}', parentMessageId: '={{ $json.parent ?? "" }}' },
				},
			},
		]);
		const long = 'm'.repeat(196);
		assert.equal(
			(
				await runWorkflow(wf, { nodeTypes, triggerItems: chat('one', 's1', { turn: long }) })
			).output('A')[0].json.messageId,
			long,
		);
		for (const extra of [
			{ turn: 'n'.repeat(201) },
			{ turn: 'a/b' },
			{ turn: 't2', parent: 'nope' },
		]) {
			const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat('two', 's1', extra) });
			assert.equal(r.status, 'error', JSON.stringify(extra));
		}
		assert.equal(scriptedModelLog.calls.length, 1, 'the model was called for the first turn only');
	});

	it('Start New Thread regenerates the first answer: no history, and the new turn is a root', async () => {
		const folder = tempDir();
		const wf = chain(folder, [
			{
				name: 'A',
				id: 'node-a',
				params: { memoryMode: 'node', options: { startNewThread: '={{ $json.fresh === true }}' } },
			},
		]);
		await runWorkflow(wf, { nodeTypes, triggerItems: chat('q1') });
		await runWorkflow(wf, { nodeTypes, triggerItems: chat('q2') });
		const regen = (
			await runWorkflow(wf, { nodeTypes, triggerItems: chat('q1 again', 's1', { fresh: true }) })
		).output('A')[0].json;
		assert.deepEqual(contents('A'), ['user: q1 again']);
		assert.equal(regen.parentMessageId, null);
		await runWorkflow(wf, { nodeTypes, triggerItems: chat('q3') });
		assert.deepEqual(contents('A'), [
			'user: q1 again',
			'assistant: [echo] q1 again (1 messages)',
			'user: q3',
		]);
	});

	it('a failed model call appends nothing', async () => {
		const folder = tempDir();
		const wf = chain(folder, [{ name: 'A', id: 'node-a', params: { memoryMode: 'node' } }]);
		await runWorkflow(wf, { nodeTypes, triggerItems: chat('ok') });
		const before = readFileSync(path.join(folder, 'node_memory/wf-engine/s1/node-a.json'));
		scriptedModelLog.setHandler('A Model', () => {
			throw new Error('rate limited');
		});
		const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat('fails') });
		assert.equal(r.status, 'error');
		assert.match(String(r.error?.message), /The model call failed: rate limited/);
		assert.deepEqual(
			readFileSync(path.join(folder, 'node_memory/wf-engine/s1/node-a.json')),
			before,
		);
	});

	it('a memory write that fails: an error, or with continueOnFail the answer plus the error', async () => {
		const folder = tempDir();
		// A folder where the lock file must go: reading works, every write fails.
		mkdirSync(path.join(folder, 'conversation_memory/wf-engine/s1.json.lock'), { recursive: true });
		const wf = chain(folder, [{ name: 'A', id: 'node-a', params: { memoryMode: 'conversation' } }]);
		const failed = await runWorkflow(wf, { nodeTypes, triggerItems: chat('hi') });
		assert.equal(failed.status, 'error');
		assert.match(
			String(failed.error?.message),
			/The answer was generated but could not be saved to memory: Could not write/,
		);

		const lenient = structuredClone(wf);
		lenient.nodes.find((n) => n.name === 'A')!.onError = 'continueRegularOutput';
		lenient.nodes.push({
			id: 'after',
			name: 'After',
			type: TEST_TRIGGER_TYPE,
			typeVersion: 1,
			position: [600, 0],
			parameters: {},
		});
		lenient.connections.A = { main: [[{ node: 'After', type: 'main', index: 0 }]] };
		const r = await runWorkflow(lenient, { nodeTypes, triggerItems: chat('hi') });
		assert.equal(r.status, 'success');
		const out = r.output('A')[0].json;
		assert.equal(out.output, '[echo] hi (1 messages)');
		assert.match(String(out.error), /could not be saved to memory/);
		assert.equal((out.memory as Json).mode, 'conversation');
	});

	it('a loop runs the node several times in one execution; each run sees the earlier ones', async () => {
		const folder = tempDir();
		const wf = chain(folder, [
			{
				name: 'A',
				id: 'node-a',
				params: {
					memoryMode: 'node',
					promptType: 'define',
					text: '={{ "step " + ($json.iteration ?? 0) }}',
					conversationIdType: 'customKey',
					conversationId: 'loop-conv',
				},
			},
		]);
		wf.nodes.push({
			id: 'loop',
			name: 'Loop',
			type: TEST_LOOP_TYPE,
			typeVersion: 1,
			position: [400, 0],
			parameters: { iterations: 3 },
		});
		wf.connections.A = { main: [[{ node: 'Loop', type: 'main', index: 0 }]] };
		wf.connections.Loop = { main: [[], [{ node: 'A', type: 'main', index: 0 }]] };
		const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat('go') });
		assert.equal(r.status, 'success', r.error?.message);
		assert.equal(r.runCount('A'), 3);
		assert.deepEqual(
			calls('A').map((c) => c.messages.length),
			[1, 3, 5],
		);
		assert.equal(stored(folder, 'node_memory/wf-engine/loop-conv/node-a.json').length, 6);
	});

	it('several items in one execution: each item’s turn is history for the next', async () => {
		const folder = tempDir();
		const wf = chain(folder, [{ name: 'A', id: 'node-a', params: { memoryMode: 'node' } }]);
		const r = await runWorkflow(wf, {
			nodeTypes,
			triggerItems: [...chat('first'), ...chat('second'), ...chat('other', 's2')],
		});
		assert.deepEqual(
			r.output('A').map((i) => i.json.output),
			['[echo] first (1 messages)', '[echo] second (3 messages)', '[echo] other (1 messages)'],
		);
		assert.deepEqual(
			r.output('A').map((i) => i.pairedItem),
			[{ item: 0 }, { item: 1 }, { item: 2 }],
		);
	});

	it('renaming the node keeps its memory (keyed by the node’s stable ID)', async () => {
		const folder = tempDir();
		await runWorkflow(
			chain(folder, [{ name: 'Old Name', id: 'node-a', params: { memoryMode: 'node' } }]),
			{ nodeTypes, triggerItems: chat('remember me') },
		);
		await runWorkflow(
			chain(folder, [{ name: 'New Name', id: 'node-a', params: { memoryMode: 'node' } }]),
			{ nodeTypes, triggerItems: chat('who?') },
		);
		assert.deepEqual(contents('New Name'), [
			'user: remember me',
			'assistant: [echo] remember me (1 messages)',
			'user: who?',
		]);
	});

	it('Max History Tokens and Window options bound the history', async () => {
		const folder = tempDir();
		const base = chain(folder, [{ name: 'A', id: 'node-a', params: { memoryMode: 'node' } }]);
		for (const q of ['one', 'two', 'three'])
			await runWorkflow(base, { nodeTypes, triggerItems: chat(q) });
		const windowed = chain(folder, [
			{ name: 'A', id: 'node-a', params: { memoryMode: 'node', options: { window: 1 } } },
		]);
		const w = (await runWorkflow(windowed, { nodeTypes, triggerItems: chat('four') })).output(
			'A',
		)[0].json;
		assert.deepEqual(contents('A'), [
			'user: three',
			'assistant: [echo] three (5 messages)',
			'user: four',
		]);
		assert.equal((w.memory as Json).droppedTurns, 2);
		const none = chain(folder, [
			{ name: 'A', id: 'node-a', params: { memoryMode: 'node', options: { maxHistoryTokens: 3 } } },
		]);
		const t = (await runWorkflow(none, { nodeTypes, triggerItems: chat('five') })).output('A')[0]
			.json;
		assert.deepEqual(contents('A'), ['user: five']);
		assert.equal((t.memory as Json).droppedTurns, 4);
	});

	it('a Message ID that is already stored is refused before the model is called', async () => {
		const folder = tempDir();
		const wf = chain(folder, [
			{
				name: 'A',
				id: 'node-a',
				params: { memoryMode: 'node', options: { messageId: '={{ $json.turn }}' } },
			},
		]);
		assert.equal(
			(
				await runWorkflow(wf, { nodeTypes, triggerItems: chat('one', 's1', { turn: 'turn-1' }) })
			).output('A')[0].json.messageId,
			'turn-1',
		);
		const r = await runWorkflow(wf, {
			nodeTypes,
			triggerItems: chat('again', 's1', { turn: 'turn-1' }),
		});
		assert.equal(r.status, 'error');
		assert.match(String(r.error?.message), /Message ID "turn-1" is already stored/);
		assert.equal(scriptedModelLog.calls.length, 1);
	});

	it('S3 storage through the credential: memory lives on radosgw', async () => {
		const s3 = await rgwStorage();
		const wf = chain('', [
			{ name: 'A', id: 'node-a', params: { memoryMode: 'node', storage: 's3' } },
		]);
		const { credentials, cred } = rgwCredentials(s3);
		wf.nodes[1].credentials = cred;
		await runWorkflow(wf, { nodeTypes, triggerItems: chat('stored remotely'), credentials });
		const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat('still there?'), credentials });
		assert.equal(r.status, 'success', r.error?.message);
		assert.deepEqual(contents('A'), [
			'user: stored remotely',
			'assistant: [echo] stored remotely (1 messages)',
			'user: still there?',
		]);
		assert.deepEqual(
			(await s3.list('')).map((o) => o.key),
			['n8n/node_memory/wf-engine/s1/node-a.json'],
		);
	});
});

describe('S3 credential test (the "Test" button)', () => {
	const credentialTest = new LlmWithMemory().methods.credentialTest.llmMemoryS3ApiTest;
	const run = (data: Json) =>
		credentialTest.call({} as never, { id: 'c', name: 'c', type: 'llmMemoryS3Api', data });

	it('reaches the bucket and reports enforced conditional writes', async () => {
		const s3 = await rgwStorage();
		const base = {
			endpoint: s3.endpoint,
			region: 'us-east-1',
			bucket: s3.bucket,
			...RGW_CREDENTIALS,
			forcePathStyle: true,
			keyPrefix: 'x',
		};
		assert.deepEqual(await run(base), {
			status: 'OK',
			message: `Reached s3://${s3.bucket}/x/; conditional writes are enforced (unquoted ETags)`,
		});
		const wrong = await run({ ...base, secretAccessKey: 'Wrong-Secret-Value-123' });
		assert.equal(wrong.status, 'Error');
		assert.match(wrong.message, /ListObjectsV2 failed .*SignatureDoesNotMatch/);
		assert.ok(!wrong.message.includes('Wrong-Secret-Value-123'));
		const missing = await run({ ...base, bucket: 'no-such-bucket-anywhere' });
		assert.equal(missing.status, 'Error');
		assert.match(missing.message, /NoSuchBucket/);
	});
});

function stored(folder: string, key: string): Json[] {
	return JSON.parse(readFileSync(path.join(folder, key), 'utf8')).messages;
}

after(async () => (await ensureRgw()).stop());
