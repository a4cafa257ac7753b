// The LLM Memory Manager's settings panel: n8n's resource/operation idiom, the other nodes' storage
// settings, every ID a field of its own; two resources: Conversation Memory and Versioned Data.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import codex from '../../../nodes/LlmMemoryManager/LlmMemoryManager.node.json';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const load = (file: string) => require(path.resolve(__dirname, '../../../nodes', file));
const { LlmMemoryManager } = load('LlmMemoryManager/LlmMemoryManager.node.ts');
const { LlmMemoryStore } = load('LlmMemoryStore/LlmMemoryStore.node.ts');

const d = new LlmMemoryManager().description;
const field = (name: string): INodeProperties[] => d.properties.filter((p: any) => p.name === name);
const values = (p: INodeProperties) => (p.options as INodePropertyOptions[]).map((o) => o.value);
/** The inputs n8n computes from the node's parameters (its inputs are an expression). */
const inputsFor = (parameter: object) => {
	const body = String(d.inputs)
		.replace(/^=\{\{/, '')
		.replace(/\}\}$/, '');
	return new Function('$parameter', `return (${body});`)(parameter);
};

describe('LLM Memory Manager settings panel', () => {
	it('is a root node usable as a tool, with icons, codex and the S3 credential on S3 only', () => {
		assert.equal(d.name, 'llmMemoryManager');
		assert.equal(d.displayName, 'LLM Memory Manager');
		assert.equal(d.usableAsTool, true);
		// Main always; the Chat Memory input only with Import From Chat Memory, which reads it.
		const main = { type: 'main', displayName: '' };
		assert.deepEqual(inputsFor({}), [main]);
		assert.deepEqual(inputsFor({ operation: 'getMessages' }), [main]);
		assert.deepEqual(inputsFor({ operation: 'importFromChatMemory' }), [
			main,
			{ type: 'ai_memory', displayName: 'Chat Memory', required: true, maxConnections: 1 },
		]);
		assert.deepEqual(d.outputs, ['main']);
		assert.deepEqual(d.icon, {
			light: 'file:llmMemoryManager.svg',
			dark: 'file:llmMemoryManager.dark.svg',
		});
		assert.equal(codex.node, 'n8n-nodes-llm-memory.llmMemoryManager');
		assert.deepEqual(d.credentials, [
			{
				name: 'llmMemoryS3Api',
				required: true,
				testedBy: 'llmMemoryS3ApiTest',
				displayOptions: { show: { storage: ['s3'] } },
			},
			{
				name: 'llmMemoryEncryptionKeyApi',
				required: true,
				testedBy: 'llmMemoryEncryptionKeyApiTest',
				displayOptions: { show: { encryption: ['key'] } },
			},
		]);
		for (const test of ['llmMemoryS3ApiTest', 'llmMemoryEncryptionKeyApiTest'] as const)
			assert.equal(typeof new LlmMemoryManager().methods.credentialTest[test], 'function');
	});

	it('Resource → Operation, as in n8n’s node starter', () => {
		const [resource] = field('resource');
		assert.equal(resource.noDataExpression, true);
		assert.deepEqual(values(resource), [
			'conversationMemory',
			'versionedData',
			'facts',
			'memoryBase',
		]);
		assert.equal(resource.default, 'conversationMemory');
		const [memory, data, facts, base] = field('operation');
		assert.deepEqual(memory.displayOptions, { show: { resource: ['conversationMemory'] } });
		assert.deepEqual(values(memory), [
			'clear',
			'deleteConversation',
			'export',
			'forgetUser',
			'getMessages',
			'import',
			'importFromChatMemory',
			'listConversations',
			'prune',
			'pruneExpired',
			'reencrypt',
		]);
		assert.equal(memory.default, 'getMessages');
		assert.deepEqual(data.displayOptions, { show: { resource: ['versionedData'] } });
		assert.deepEqual(values(data), [
			'createBranch',
			'diff',
			'export',
			'getCurrent',
			'getVersion',
			'history',
			'import',
			'listBranches',
			'rollback',
			'saveVersion',
		]);
		assert.equal(data.default, 'getCurrent');
		assert.deepEqual(facts.displayOptions, { show: { resource: ['facts'] } });
		assert.deepEqual(values(facts), [
			'addFact',
			'editFact',
			'factsDiff',
			'factsHistory',
			'getFacts',
			'retireFact',
			'rollbackFacts',
		]);
		assert.equal(facts.default, 'getFacts');
		assert.deepEqual(base.displayOptions, { show: { resource: ['memoryBase'] } });
		assert.deepEqual(values(base), ['upgrade']);
		assert.equal(base.default, 'upgrade');
		for (const operation of [memory, data, facts, base]) {
			const names = (operation.options as INodePropertyOptions[]).map((o) => o.name);
			assert.deepEqual(names, [...names].sort(), 'sorted by name');
			for (const o of operation.options as Array<INodePropertyOptions & { action: string }>) {
				assert.ok(String(o.description).length > 20, o.name);
				assert.ok(String(d.subtitle).includes(JSON.stringify(o.action)), o.name);
			}
		}
	});

	it('every operation field is shown for its resource and operations only', () => {
		const general = new Set([
			'resource',
			'storage',
			'localFolder',
			'queueModeNotice',
			'encryption',
		]);
		for (const p of d.properties as INodeProperties[]) {
			if (general.has(p.name)) continue;
			const show = p.displayOptions?.show ?? {};
			assert.equal((show.resource ?? []).length, 1, p.name);
			assert.ok(
				['conversationMemory', 'versionedData', 'facts', 'memoryBase'].includes(
					String(show.resource?.[0]),
				),
				p.name,
			);
			if (p.name !== 'operation') assert.ok((show.operation ?? []).length > 0, p.name);
		}
	});

	it('Versioned Data: a Branch field (default main) for the branch operations, version numbers ≥ 1', () => {
		const [branch] = field('branch');
		assert.equal(branch.default, 'main');
		assert.deepEqual(branch.displayOptions?.show?.operation, [
			'getCurrent',
			'history',
			'rollback',
			'saveVersion',
		]);
		for (const name of ['version', 'fromVersion', 'toVersion'])
			for (const p of field(name)) {
				assert.equal(p.type, 'number', name);
				assert.equal(p.typeOptions?.minValue, 1, name);
			}
		const exportOp = (field('operation')[1].options as INodePropertyOptions[]).find(
			(o) => o.value === 'export',
		);
		assert.match(
			String(exportOp?.description),
			/whole conversation.*every version and branch.*chat memory/,
			'Export says it exports the whole conversation',
		);
	});

	it('Facts: Memory Base ID (this workflow by default), User ID, Session ID; Edited By on every change, Fact ID on edits', () => {
		const show = (p: INodeProperties) => p.displayOptions?.show ?? {};
		const ofFacts = (name: string) => field(name).filter((p) => show(p).resource?.[0] === 'facts');
		const every = [
			'addFact',
			'editFact',
			'factsDiff',
			'factsHistory',
			'getFacts',
			'retireFact',
			'rollbackFacts',
		];
		const [base] = ofFacts('factsBaseId');
		assert.equal(base.default, '={{ $workflow.id }}');
		assert.deepEqual(show(base).operation, every);
		assert.deepEqual(show(ofFacts('factsUserId')[0]).operation, every);
		assert.deepEqual(
			ofFacts('conversationId').map((p) => p.default),
			['={{ $json.sessionId }}', ''],
		);
		const [editedBy] = ofFacts('editedBy');
		assert.equal(editedBy.required, true);
		assert.match(String(editedBy.default), /^=\{\{.*\$workflow\.name.*\}\}$/);
		assert.deepEqual(show(editedBy).operation, [
			'addFact',
			'editFact',
			'retireFact',
			'rollbackFacts',
		]);
		assert.deepEqual(
			ofFacts('factId').map((p) => show(p).operation),
			[['editFact'], ['retireFact']],
		);
		assert.deepEqual(
			ofFacts('factText').map((p) => show(p).operation),
			[['addFact'], ['editFact']],
		);
		assert.equal(ofFacts('includeSuperseded')[0].default, false);
		for (const name of ['fromVersion', 'toVersion', 'factsVersion'])
			for (const p of ofFacts(name)) assert.equal(p.typeOptions?.minValue, 1, name);
	});

	it('storage settings are those of the other nodes: Local Disk by default, or S3', () => {
		const store = new LlmMemoryStore().description.properties as INodeProperties[];
		for (const name of ['storage', 'localFolder'])
			assert.deepEqual(
				field(name),
				store.filter((p) => p.name === name),
				name,
			);
		assert.equal(field('storage')[0].default, 'localDisk');
	});

	it('IDs: Workflow ID defaults to this workflow, Conversation ID follows the Chat Trigger idiom, Node ID for node mode', () => {
		for (const p of field('workflowId')) assert.equal(p.default, '={{ $workflow.id }}');
		assert.deepEqual(
			field('conversationId').map((p) => p.default),
			[
				'={{ $json.sessionId }}',
				'',
				'={{ $json.sessionId }}',
				'',
				'={{ $json.sessionId }}',
				'',
				'={{ $json.sessionId }}',
				'',
			],
		);
		// Re-Encrypt asks for the session only with the scope This Conversation.
		assert.deepEqual(field('conversationId')[2].displayOptions?.show?.reencryptScope, [
			'conversation',
		]);
		assert.deepEqual(field('nodeId')[0].displayOptions?.show?.memoryMode, ['node']);
	});

	it('Memory: All of This Conversation by default from version 1.1 on; version 1 keeps Conversation and Node ID', () => {
		assert.deepEqual(d.version, [1, 1.1]);
		assert.equal(d.defaultVersion, 1.1);
		const [first, later] = field('memoryMode');
		for (const p of [first, later]) {
			assert.deepEqual(values(p), ['all', 'conversation', 'node']);
			assert.deepEqual(p.displayOptions?.show?.operation, ['getMessages', 'clear']);
		}
		assert.deepEqual([first.default, later.default], ['conversation', 'all']);
		assert.deepEqual(first.displayOptions?.show?.['@version'], [1]);
		assert.deepEqual(later.displayOptions?.show?.['@version'], [{ _cnd: { gte: 1.1 } }]);
		const all = (later.options as INodePropertyOptions[])[0];
		assert.equal(all.name, 'All of This Conversation');
		assert.match(String(all.description), /Clear deletes all of them/);
		const clear = (field('operation')[0].options as INodePropertyOptions[]).find(
			(o) => o.value === 'clear',
		);
		assert.match(
			String(clear?.description),
			/all of it \(its shared memory and every node’s memory\)/,
		);
		const [nodeId] = field('nodeId');
		assert.deepEqual(nodeId.displayOptions?.show?.['@version'], [1]);
	});

	it('Import From Chat Memory: one Session ID per item, into the Conversation memory by default or a node’s', () => {
		const show = { resource: ['conversationMemory'], operation: ['importFromChatMemory'] };
		const [session] = field('sourceSessionId');
		assert.equal(session.default, '={{ $json.sessionId }}');
		assert.deepEqual(session.displayOptions?.show, show);
		const [into] = field('importInto');
		assert.deepEqual(values(into), ['conversation', 'node']);
		assert.equal(into.default, 'conversation');
		const node = field('memoryNode').find((p) => p.displayOptions?.show?.importInto !== undefined);
		assert.deepEqual(node?.displayOptions?.show, { ...show, importInto: ['node'] });
		assert.ok(
			field('workflowId').some((p) =>
				p.displayOptions?.show?.operation?.includes('importFromChatMemory'),
			),
		);
		const [notice] = field('importFromChatMemoryNotice');
		assert.match(String(notice.displayName), /one session per input item/);
	});

	it('Node (version 1.1): by name, from a list of the nodes with memory, or by ID', () => {
		const [node] = field('memoryNode');
		assert.equal(node.type, 'resourceLocator');
		assert.equal(node.required, true);
		assert.deepEqual(node.default, { mode: 'name', value: '' });
		assert.deepEqual(node.displayOptions?.show?.memoryMode, ['node']);
		assert.deepEqual(node.displayOptions?.show?.['@version'], [{ _cnd: { gte: 1.1 } }]);
		assert.deepEqual(
			node.modes?.map((m) => [m.name, m.type]),
			[
				['name', 'string'],
				['list', 'list'],
				['id', 'string'],
			],
		);
		assert.equal(node.modes?.[1].typeOptions?.searchListMethod, 'memoryNodes');
		assert.equal(typeof new LlmMemoryManager().methods.listSearch.memoryNodes, 'function');
	});
});
