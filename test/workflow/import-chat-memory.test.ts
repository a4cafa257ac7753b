// The LLM Memory Manager's Import From Chat Memory, run in-process through n8n-core's real
// WorkflowExecute: a chat memory sub-node on the Manager's Chat Memory input (a stand-in built like n8n's
// memory nodes, holding LangChain's own message objects: test/support/chat-memory-stand-in.ts) is asked
// once per input item, with that item's index, and each item's session is copied into our memory: order,
// roles and tool calls kept, counts per session, a re-run adding nothing, bad session IDs refused.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';

import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import type { INode, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ConversationMemory, LocalDiskStorage, NodeMemory } from '../../src/internal';
import {
	CHAT_MEMORY_STAND_IN_TYPE,
	ChatMemoryStandIn,
	chatMemoryStandIn,
} from '../support/chat-memory-stand-in';
import { say } from '../support/manager-runs';
import { MANAGER_TYPE, MANAGER_VERSION, nodeTypes, trigger } from '../support/manager-workflows';
import { scriptedModelLog } from '../support/scripted-model';
import { tempDir } from '../support/storages';
import { runWorkflow } from '../support/workflow-harness';
import type { WorkflowJson, WorkflowRunResult } from '../support/workflow-harness';

type Json = Record<string, any>;

const WF = 'wf-import';

const toolTurn = () => [
	new HumanMessage('what is 6*7?'),
	new AIMessage({
		content: '',
		tool_calls: [{ id: 'call_1', name: 'Calculator', args: { input: '6*7' } }],
	}),
	new ToolMessage({ content: '42', tool_call_id: 'call_1', name: 'Calculator' }),
	new AIMessage('It is 42.'),
];
const S1 = () => [...toolTurn(), new HumanMessage('thanks'), new AIMessage('You are welcome.')];
const S2 = () => [
	new SystemMessage('You are a bot.'),
	new HumanMessage('hi'),
	new AIMessage('hello'),
];

afterEach(() => {
	chatMemoryStandIn.clear();
	scriptedModelLog.clear();
});

/** Trigger → Manager (Import From Chat Memory), the stand-in memory on its Chat Memory input. */
function importWorkflow(
	folder: string,
	opts: {
		manager?: INodeParameters;
		memory?: INodeParameters | null;
		onError?: INode['onError'];
	} = {},
): WorkflowJson {
	const manager: INode = {
		id: 'manager',
		name: 'Manager',
		type: MANAGER_TYPE,
		typeVersion: MANAGER_VERSION,
		position: [400, 0],
		parameters: {
			localFolder: folder,
			resource: 'conversationMemory',
			operation: 'importFromChatMemory',
			...opts.manager,
		},
		...(opts.onError ? { onError: opts.onError } : {}),
	};
	const memory: INode = {
		id: 'chat-memory',
		name: 'Chat Memory',
		type: CHAT_MEMORY_STAND_IN_TYPE,
		typeVersion: 1,
		position: [400, 200],
		parameters: { ...opts.memory },
	};
	const connections: WorkflowJson['connections'] = {
		Trigger: { main: [[{ node: 'Manager', type: 'main', index: 0 }]] },
	};
	if (opts.memory !== null)
		connections['Chat Memory'] = {
			ai_memory: [[{ node: 'Manager', type: 'ai_memory', index: 0 }]],
		};
	const nodes = opts.memory === null ? [trigger, manager] : [trigger, manager, memory];
	return { id: WF, name: 'import test', nodes, connections };
}

async function runImport(
	folder: string,
	items: INodeExecutionData[],
	opts: Parameters<typeof importWorkflow>[1] = {},
): Promise<WorkflowRunResult> {
	return await runWorkflow(importWorkflow(folder, opts), {
		nodeTypes: { ...nodeTypes, [CHAT_MEMORY_STAND_IN_TYPE]: new ChatMemoryStandIn() },
		triggerItems: items,
	});
}

const sessions = (...ids: Array<string | string[]>): INodeExecutionData[] =>
	ids.map((id) => ({ json: { sessionId: id } }));

function ok(r: WorkflowRunResult): Json[] {
	assert.equal(r.status, 'success', `${r.error?.message} ${r.error?.description ?? ''}`);
	return r.output('Manager').map((i) => i.json);
}

const counts = (o: Json) => [o.conversationId, o.read, o.imported, o.alreadyThere, o.skipped];

/** What our memory holds for a session: role, then the content or the tool calls, then the call ID. */
async function stored(folder: string, session: string, nodeId?: string): Promise<string[]> {
	const storage = new LocalDiskStorage({ root: folder });
	const memory = nodeId
		? new NodeMemory(WF, session, nodeId, { storage })
		: new ConversationMemory(WF, session, { storage });
	return (await memory.messages()).map((m) =>
		[
			m.role,
			m.tool_calls
				? m.tool_calls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join()
				: m.content,
			m.tool_call_id ?? '',
		].join(' | '),
	);
}

const S1_STORED = [
	'user | what is 6*7? | ',
	'assistant | Calculator({"input":"6*7"}) | ',
	'tool | 42 | call_1',
	'assistant | It is 42. | ',
	'user | thanks | ',
	'assistant | You are welcome. | ',
];

/** Every file under the folder with its bytes: what a run wrote, or did not. */
function snapshot(folder: string): Record<string, string> {
	const out: Record<string, string> = {};
	const walk = (dir: string) => {
		for (const e of readdirSync(dir, { withFileTypes: true })) {
			const p = path.join(dir, e.name);
			if (e.isDirectory()) walk(p);
			else out[path.relative(folder, p)] = readFileSync(p, 'base64');
		}
	};
	walk(folder);
	return out;
}

describe('LLM Memory Manager: Import From Chat Memory', () => {
	it('imports each item’s session (the memory is asked with each item’s index): order, roles, tool calls; counts per session', async () => {
		const folder = tempDir();
		chatMemoryStandIn.sessions.set('s1', S1());
		chatMemoryStandIn.sessions.set('s2', S2());
		const r = await runImport(folder, sessions('s1', 's2'));
		const out = ok(r);
		assert.deepEqual(chatMemoryStandIn.asked, [
			{ itemIndex: 0, session: 's1' },
			{ itemIndex: 1, session: 's2' },
		]);
		assert.deepEqual(out.map(counts), [
			['s1', 6, 6, 0, 0],
			['s2', 3, 2, 0, 1],
		]);
		assert.deepEqual(out[1].skippedReasons, { systemMessage: 1 });
		assert.deepEqual(
			r.output('Manager').map((i) => i.pairedItem),
			[{ item: 0 }, { item: 1 }],
		);
		assert.deepEqual(
			{ ...out[0], key: undefined },
			{
				workflowId: WF,
				conversationId: 's1',
				memoryMode: 'conversation',
				nodeId: null,
				key: undefined,
				sourceNode: 'Chat Memory',
				sourceSession: 's1',
				read: 6,
				imported: 6,
				alreadyThere: 0,
				skipped: 0,
				skippedReasons: {},
				turnsImported: 2,
				turnsAlreadyThere: 0,
			},
		);
		assert.equal(out[0].key, `conversation_memory/${WF}/s1.json`);
		assert.deepEqual(await stored(folder, 's1'), S1_STORED);
		assert.deepEqual(await stored(folder, 's2'), ['user | hi | ', 'assistant | hello | ']);
	});

	it('a re-run imports nothing and writes nothing; messages added to the source since are imported alone', async () => {
		const folder = tempDir();
		chatMemoryStandIn.sessions.set('s1', S1());
		ok(await runImport(folder, sessions('s1')));
		const before = snapshot(folder);
		const [again] = ok(await runImport(folder, sessions('s1')));
		assert.deepEqual(
			[again.imported, again.alreadyThere, again.turnsAlreadyThere, again.skipped],
			[0, 6, 2, 0],
		);
		assert.deepEqual(snapshot(folder), before, 'storage unchanged');
		chatMemoryStandIn.sessions.get('s1')!.push(new HumanMessage('and 2*2?'), new AIMessage('4'));
		const [grown] = ok(await runImport(folder, sessions('s1')));
		assert.deepEqual(counts(grown), ['s1', 8, 2, 6, 0]);
		assert.deepEqual((await stored(folder, 's1')).slice(6), [
			'user | and 2*2? | ',
			'assistant | 4 | ',
		]);
	});

	it('LLM with Memory on the same session sends the imported history to its model, tool steps included', async () => {
		const folder = tempDir();
		chatMemoryStandIn.sessions.set('s1', S1());
		ok(await runImport(folder, sessions('s1')));
		await say(folder, ['and now?'], { id: WF, session: 's1' });
		const [call] = scriptedModelLog.forNode('A Model');
		assert.deepEqual(
			call.messages.map((m) =>
				[
					m.role,
					m.toolCalls ? m.toolCalls.map((c) => c.name).join() : m.content,
					m.toolCallId ?? '',
				].join(' | '),
			),
			[
				'user | what is 6*7? | ',
				'assistant | Calculator | ',
				'tool | 42 | call_1',
				'assistant | It is 42. | ',
				'user | thanks | ',
				'assistant | You are welcome. | ',
				'user | and now? | ',
			],
		);
	});

	it('bad session IDs are refused naming the field and the item; nothing is read or written for them', async () => {
		const folder = tempDir();
		chatMemoryStandIn.sessions.set('s1', S1());
		const r = await runImport(folder, sessions('a/b', ['s1', 's2'], '', 's1'), {
			onError: 'continueRegularOutput',
		});
		assert.equal(r.status, 'success');
		assert.deepEqual(
			r.output('Manager').map((i) => [i.pairedItem, i.json.error ?? i.json.imported]),
			[
				[{ item: 0 }, 'Invalid conversation_id: "a/b" contains "/"'],
				[{ item: 1 }, 'Session ID must be a string or a number, got an array'],
				[{ item: 2 }, 'No session ID found'],
				[{ item: 3 }, 6],
			],
		);
		assert.deepEqual(chatMemoryStandIn.asked, [{ itemIndex: 3, session: 's1' }]);
		assert.deepEqual(Object.keys(snapshot(folder)), [`conversation_memory/${WF}/s1.json`]);
		const stopped = await runImport(folder, sessions('s1', '../x'));
		assert.equal(stopped.status, 'error');
		assert.match(String(stopped.error?.message), /Invalid conversation_id/);
		assert.equal((stopped.error as any)?.context?.itemIndex, 1);
	});

	it('a memory that reads another session than the item’s is refused; n8n 2.x’s node-scoped key is accepted', async () => {
		const folder = tempDir();
		chatMemoryStandIn.sessions.set('s2', S2());
		const wrong = await runImport(folder, sessions('s1'), { memory: { sessionKey: 's2' } });
		assert.equal(wrong.status, 'error');
		assert.match(
			String(wrong.error?.message),
			/The chat memory "Chat Memory" reads session "s2" for this item, not "s1"/,
		);
		assert.match(
			String(wrong.error?.description),
			/Define Below with Key \{\{ \$json\.sessionId \}\}/,
		);
		assert.deepEqual(snapshot(folder), {});
		// A memory node taking the session from the input stores it as "<session>__<node name>" (n8n 2.x).
		chatMemoryStandIn.sessions.set('s1__Chat_Memory', S1());
		const scoped = await runImport(folder, sessions('s1'), {
			memory: { sessionKey: "={{ $json.sessionId + '__Chat_Memory' }}" },
		});
		const [out] = ok(scoped);
		assert.deepEqual(
			[out.conversationId, out.sourceSession, out.imported],
			['s1', 's1__Chat_Memory', 6],
		);
	});

	it('a memory that does not tell its session (Simple Memory) is read as its Key gives it', async () => {
		const folder = tempDir();
		chatMemoryStandIn.sessions.set('s2', S2());
		const [out] = ok(await runImport(folder, sessions('s2'), { memory: { tellsSession: false } }));
		assert.deepEqual([out.sourceSession, out.imported], [null, 2]);
	});

	it('without a memory on the Chat Memory input: a clear error', async () => {
		const r = await runImport(tempDir(), sessions('s1'), { memory: null });
		assert.equal(r.status, 'error');
		assert.equal(r.error?.message, 'No chat memory is connected');
		assert.match(String(r.error?.description), /Connect the memory that holds the chat/);
		assert.equal((r.error as any)?.context?.itemIndex, 0);
	});

	it('Into Memory: Node imports into one node’s own memory', async () => {
		const folder = tempDir();
		chatMemoryStandIn.sessions.set('s1', S1());
		const [out] = ok(
			await runImport(folder, sessions('s1'), {
				manager: { importInto: 'node', memoryNode: { __rl: true, mode: 'id', value: 'node-x' } },
			}),
		);
		assert.deepEqual(
			[out.memoryMode, out.nodeId, out.key],
			['node', 'node-x', `node_memory/${WF}/s1/node-x.json`],
		);
		assert.deepEqual(await stored(folder, 's1', 'node-x'), S1_STORED);
		assert.deepEqual(await stored(folder, 's1'), []);
	});
});
