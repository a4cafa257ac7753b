// "LLM Memory Manager" 1.1 run in-process through n8n-core's real WorkflowExecute: Memory = All of This
// Conversation by default (every memory of the conversation, each item naming its memory and node),
// nodes chosen by name or from a list, and results without messages that say whether the conversation
// exists at all. Version 1 keeps its old default and its Node ID field.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import { Workflow } from 'n8n-workflow';
import type { INode, INodeParameters, IWorkflowExecuteAdditionalData } from 'n8n-workflow';
import { LoadOptionsContext } from 'n8n-core';

import { getMessages, lines, manage, memoryNode, ok, say } from '../support/manager-runs';
import { chat, MANAGER_TYPE, nodeTypes, workflow } from '../support/manager-workflows';
import type { LlmSpec } from '../support/manager-workflows';
import { scriptedModelLog } from '../support/scripted-model';
import { tempDir } from '../support/storages';
import { binaryData, runWorkflow } from '../support/workflow-harness';
import type { WorkflowRunResult } from '../support/workflow-harness';

type Json = Record<string, any>;

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');

/** An LLM with Memory node in Node mode, as the demo stores memory. */
const SUPPORT_BOT: LlmSpec = { name: 'Support Bot', id: 'node-a', params: { memoryMode: 'node' } };
/** The conversation ID LLM with Memory outputs, for a Manager placed after it. */
const AFTER_LLM = {
	conversationIdType: 'customKey',
	conversationId: '={{ $json.conversationId }}',
};

/** A second LLM with Memory node sharing the conversation's memory (Conversation mode). */
const SHARED: LlmSpec = {
	name: 'Shared',
	id: 'node-b',
	params: {
		memoryMode: 'conversation',
		promptType: 'define',
		text: 'shared',
		...AFTER_LLM,
	},
};

const hintsOf = (r: WorkflowRunResult) => r.runData.Manager[0].hints?.map((h) => h.message);

afterEach(() => scriptedModelLog.clear());

describe('LLM Memory Manager 1.1: Memory = All of This Conversation by default', () => {
	it('Get Messages reads a Node-mode conversation LLM with Memory wrote, naming the node', async () => {
		const folder = tempDir();
		const wf = workflow(folder, { llms: [SUPPORT_BOT], manager: getMessages(AFTER_LLM) });
		let r: WorkflowRunResult | undefined;
		for (const text of ['one', 'two', 'three'])
			r = await runWorkflow(wf, { nodeTypes, triggerItems: chat(text) });
		const items = ok(r!);
		assert.equal(items.length, 6, 'the conversation holds 6 messages');
		assert.deepEqual(lines(items).slice(0, 2), ['user: one', 'assistant: [echo] one (1 messages)']);
		for (const item of items)
			assert.deepEqual(
				[item.memory, item.nodeId, item.nodeName],
				['node', 'node-a', 'Support Bot'],
			);
		assert.deepEqual(Object.keys(items[0]).slice(0, 5), [
			'conversationId',
			'memory',
			'nodeId',
			'nodeName',
			'position',
		]);

		// Version 1 keeps Memory = Conversation: nothing comes out, but a hint says what is there.
		const v1 = await manage(folder, getMessages(), undefined, { version: 1 });
		assert.deepEqual(ok(v1), []);
		assert.deepEqual(hintsOf(v1), [
			'The conversation "s1" has no shared memory (Conversation mode). Its memories: node node-a, 6 messages. Set Memory to "All of This Conversation" to read every memory it has.',
		]);
	});

	it('each item names its memory and node; a node no longer in the workflow is named by ID only', async () => {
		const folder = tempDir();
		await say(folder, ['hello'], { llms: [SUPPORT_BOT, SHARED] });
		await say(folder, ['before'], {
			llms: [{ name: 'Old', id: 'node-gone', params: SUPPORT_BOT.params }],
		});
		const r = await manage(folder, getMessages(), undefined, { llms: [SUPPORT_BOT] });
		const items = ok(r);
		assert.deepEqual(
			items.map((m) => [m.memory, m.nodeId, m.nodeName ?? null, m.content]),
			[
				['conversation', null, null, 'shared'],
				['conversation', null, null, '[echo] shared (1 messages)'],
				['node', 'node-a', 'Support Bot', 'hello'],
				['node', 'node-a', 'Support Bot', '[echo] hello (1 messages)'],
				['node', 'node-gone', null, 'before'],
				['node', 'node-gone', null, '[echo] before (1 messages)'],
			],
		);
		const grouped = ok(
			await manage(folder, getMessages({ options: { groupMessages: true } }), undefined, {
				llms: [SUPPORT_BOT],
			}),
		);
		assert.deepEqual(
			grouped.map((g) => [g.memoryMode, g.memory, g.nodeId, g.nodeName ?? null, g.key, g.total]),
			[
				['all', 'conversation', null, null, 'conversation_memory/wf-a/s1.json', 2],
				['all', 'node', 'node-a', 'Support Bot', 'node_memory/wf-a/s1/node-a.json', 2],
				['all', 'node', 'node-gone', null, 'node_memory/wf-a/s1/node-gone.json', 2],
			],
		);
		assert.deepEqual(
			grouped.map((g) => g.messages.length),
			[2, 2, 2],
		);
		const other = ok(await manage(folder, getMessages(), undefined, { id: 'wf-other' }));
		assert.equal(other[0].conversationExists, false, 'memory is kept per workflow');
	});

	it('Clear with the default deletes every memory of the conversation; files and other conversations stay', async () => {
		const folder = tempDir();
		const llms = [SUPPORT_BOT, SHARED];
		await say(folder, ['look'], {
			llms,
			binary: binaryData(PNG, { mimeType: 'image/png', fileName: 'a.png' }),
		});
		await say(folder, ['elsewhere'], { llms, session: 's2' });
		const [cleared] = ok(await manage(folder, { operation: 'clear' }, undefined, { llms }));
		assert.deepEqual(cleared, {
			workflowId: 'wf-a',
			conversationId: 's1',
			memoryMode: 'all',
			conversationExists: true,
			cleared: true,
			memories: [
				{ memory: 'conversation', nodeId: null, key: 'conversation_memory/wf-a/s1.json' },
				{
					memory: 'node',
					nodeId: 'node-a',
					nodeName: 'Support Bot',
					key: 'node_memory/wf-a/s1/node-a.json',
				},
			],
		});
		const [after] = ok(await manage(folder, getMessages()));
		assert.deepEqual(after, {
			workflowId: 'wf-a',
			conversationId: 's1',
			memoryMode: 'all',
			conversationExists: true,
			memories: [],
			note: 'The conversation "s1" has no chat memory stored, only copied files or versioned data.',
			messages: 0,
		});
		const [again] = ok(await manage(folder, { operation: 'clear' }));
		assert.deepEqual([again.cleared, again.memories], [false, []]);
		const s2 = ok(await manage(folder, getMessages(), [{ json: { sessionId: 's2' } }]));
		assert.equal(s2.length, 4, 'the other conversation keeps both memories');
	});

	it('a result without messages says whether the conversation exists, as an item and a hint', async () => {
		const folder = tempDir();
		await say(folder, ['one', 'two', 'three'], { llms: [SUPPORT_BOT] });
		const missing = await manage(folder, getMessages(), [{ json: { sessionId: 'nobody' } }]);
		const note =
			'Nothing is stored for conversation "nobody" of workflow "wf-a". Check the Conversation ID (Session ID) and the Workflow ID.';
		assert.deepEqual(ok(missing), [
			{
				workflowId: 'wf-a',
				conversationId: 'nobody',
				memoryMode: 'all',
				conversationExists: false,
				memories: [],
				note,
				messages: 0,
			},
		]);
		assert.deepEqual(hintsOf(missing), [note]);
		assert.deepEqual(missing.output('Manager')[0].pairedItem, { item: 0 });

		const beyond = ok(await manage(folder, getMessages({ options: { offset: 10 } })));
		assert.deepEqual(beyond, [
			{
				workflowId: 'wf-a',
				conversationId: 's1',
				memoryMode: 'all',
				conversationExists: true,
				memories: [{ memory: 'node', nodeId: 'node-a', messages: 6 }],
				note: 'No messages from Offset 10 on: 6 messages stored. Its memories: node node-a, 6 messages.',
				messages: 0,
			},
		]);
		const [otherNode] = ok(
			await manage(
				folder,
				getMessages({ memoryMode: 'node', memoryNode: memoryNode('Shared', 'name') }),
				undefined,
				{ llms: [SUPPORT_BOT, SHARED] },
			),
		);
		assert.deepEqual(otherNode, {
			workflowId: 'wf-a',
			conversationId: 's1',
			memoryMode: 'node',
			nodeId: 'node-b',
			conversationExists: true,
			memories: [{ memory: 'node', nodeId: 'node-a', nodeName: 'Support Bot', messages: 6 }],
			note: 'The conversation "s1" has no memory of node "Shared" (node-b) (Node mode). Its memories: node "Support Bot" (node-a), 6 messages. Set Memory to "All of This Conversation" to read every memory it has.',
			messages: 0,
		});
	});
});

describe('LLM Memory Manager 1.1: the Node field', () => {
	it('By Name finds an LLM with Memory node of this workflow; other names are refused, naming the choices', async () => {
		const folder = tempDir();
		const llms = [SUPPORT_BOT, SHARED];
		await say(folder, ['hi'], { llms });
		const byName = (name: string, extra: INodeParameters = {}) =>
			getMessages({ memoryMode: 'node', memoryNode: memoryNode(name, 'name'), ...extra });
		const found = ok(await manage(folder, byName('Support Bot'), undefined, { llms }));
		assert.deepEqual(lines(found), ['user: hi', 'assistant: [echo] hi (1 messages)']);
		assert.equal(found[0].nodeId, 'node-a');
		for (const [name, message, help] of [
			[
				'Nope',
				'This workflow has no node named "Nope"',
				/nodes that keep memory: "Support Bot", "Shared"\.$/,
			],
			[
				'Trigger',
				'Node "Trigger" keeps no chat memory',
				/Only LLM with Memory nodes and LLM Memory Stores/,
			],
		] as const) {
			const r = await manage(folder, byName(name), undefined, { llms });
			assert.equal(r.status, 'error');
			assert.equal(r.error?.message, message);
			assert.match(String(r.error?.description), help);
		}
		const elsewhere = await manage(folder, byName('Support Bot', { workflowId: 'wf-b' }));
		assert.equal(
			elsewhere.error?.message,
			'A node is found by name in this workflow only, but Workflow ID names workflow "wf-b"',
		);
		const cleared = ok(
			await manage(folder, {
				operation: 'clear',
				memoryMode: 'node',
				memoryNode: memoryNode('node-a', 'list'),
			}),
		);
		assert.deepEqual(cleared[0].key, 'node_memory/wf-a/s1/node-a.json');
		assert.equal(cleared[0].cleared, true);
	});

	it('From List: the nodes with memory stored for the Workflow ID the editor resolved, and only those', async () => {
		const folder = tempDir();
		await say(folder, ['hi'], { llms: [SUPPORT_BOT, SHARED] });
		await say(folder, ['again'], { llms: [SUPPORT_BOT], session: 's2' });
		await say(folder, ['mine'], { llms: [{ ...SUPPORT_BOT, id: 'node-c' }], id: 'wf-other' });
		const panel = { resource: 'conversationMemory', operation: 'getMessages', memoryMode: 'node' };
		const list = async (params: INodeParameters, filter?: string) =>
			await listSearch({ ...panel, localFolder: folder, ...params }, filter);
		const listed = await list({ workflowId: 'wf-a' });
		assert.deepEqual(
			listed.results.map((r) => r.value),
			['node-a'],
			'Shared keeps Conversation-mode memory; node-c is another workflow’s',
		);
		assert.equal(listed.results[0].name, 'node-a (2 conversations)');
		assert.deepEqual(
			(await list({ workflowId: 'wf-other' })).results.map((r) => r.value),
			['node-c'],
		);
		assert.deepEqual((await list({ workflowId: 'wf-a' }, 'NODE-A')).results.length, 1);
		assert.deepEqual((await list({ workflowId: 'wf-a' }, 'zzz')).results, []);
		// An unsaved workflow: the editor could not resolve {{ $workflow.id }} and sent null.
		await assert.rejects(list({ workflowId: null }), /No workflow ID to list nodes for/);
		await assert.rejects(list({ workflowId: '={{ $workflow.id }}' }), /No workflow ID/);
	});
});

describe('LLM Memory Manager 1: workflows saved with the first version keep working', () => {
	it('Memory defaults to Conversation, Node memory is read and cleared by the Node ID field', async () => {
		const folder = tempDir();
		await say(folder, ['hi'], { llms: [SUPPORT_BOT, SHARED] });
		const v1 = { version: 1 };
		const shared = ok(await manage(folder, getMessages(), undefined, v1));
		assert.deepEqual(lines(shared), ['user: shared', 'assistant: [echo] shared (1 messages)']);
		assert.deepEqual(Object.keys(shared[0]).slice(0, 3), ['conversationId', 'nodeId', 'position']);
		const byId = getMessages({ memoryMode: 'node', nodeId: 'node-a' });
		assert.deepEqual(lines(ok(await manage(folder, byId, undefined, v1))), [
			'user: hi',
			'assistant: [echo] hi (1 messages)',
		]);
		const [cleared] = ok(await manage(folder, { operation: 'clear' }, undefined, v1));
		assert.deepEqual(
			[cleared.memoryMode, cleared.key],
			['conversation', 'conversation_memory/wf-a/s1.json'],
		);
		assert.equal(ok(await manage(folder, byId, undefined, v1)).length, 2, 'node memory stays');
		const all = ok(await manage(folder, getMessages({ memoryMode: 'all' }), undefined, v1));
		assert.deepEqual(
			all.map((m) => [m.memory, m.nodeId]),
			[
				['node', 'node-a'],
				['node', 'node-a'],
			],
			'All of This Conversation can be chosen in version 1 too',
		);
	});
});

/**
 * Calls Node → From List the way n8n's DynamicNodeParametersService does: a one-node workflow
 * holding the panel's parameters as the editor sent them (expressions already resolved), and
 * n8n-core's LoadOptionsContext.
 */
async function listSearch(currentNodeParameters: INodeParameters, filter?: string) {
	const node: INode = {
		parameters: currentNodeParameters,
		id: 'uuid-1234',
		name: 'Temp-Node',
		type: MANAGER_TYPE,
		typeVersion: 1.1,
		position: [0, 0],
	};
	const wf = new Workflow({
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: {
			getByName: () => nodeTypes[MANAGER_TYPE],
			getByNameAndVersion: () => nodeTypes[MANAGER_TYPE],
			getKnownTypes: () => ({}),
		},
	});
	const additionalData = { currentNodeParameters } as unknown as IWorkflowExecuteAdditionalData;
	const ctx = new LoadOptionsContext(wf, wf.nodes['Temp-Node'], additionalData, 'memoryNode');
	const manager = nodeTypes[MANAGER_TYPE] as unknown as {
		methods: { listSearch: { memoryNodes: (this: unknown, f?: string) => Promise<Json> } };
	};
	return (await manager.methods.listSearch.memoryNodes.call(ctx, filter)) as {
		results: Array<{ name: string; value: string }>;
	};
}
