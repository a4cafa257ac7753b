// Retention through n8n (in-process WorkflowExecute): LLM with Memory and the LLM Memory Store store
// Expire After with what they write; once it has passed (the stored last-write time is set back
// through storage, nothing sleeps) the model gets no history and the expired memory is deleted; the
// LLM Memory Manager's Prune Expired sweeps what nobody reads and reports it; Save Version keeps the
// last N versions and History says where it was cut. The model is the scripted stand-in.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';

import type { INode, INodeParameters } from 'n8n-workflow';

import { DAY_MS, LocalDiskStorage } from '../../src/internal';
import { TEST_IMAGE_AGENT_TYPE, TestImageAgent } from '../support/agent-stand-in';
import { chat, nodeTypes as managerTypes, workflow } from '../support/manager-workflows';
import { LlmMemoryStore } from '../support/node-under-test';
import { echoModelNode, scriptedModelLog } from '../support/scripted-model';
import { tempDir } from '../support/storages';
import { TRIGGER_NODE } from '../support/test-nodes';
import { runWorkflow } from '../support/workflow-harness';
import type { WorkflowJson } from '../support/workflow-harness';
import { expanded } from '../support/stored-segments';

type Json = Record<string, any>;

const STORE_TYPE = 'n8n-nodes-llm-memory.llmMemoryStore';
const nodeTypes = {
	...managerTypes,
	[STORE_TYPE]: new LlmMemoryStore(),
	[TEST_IMAGE_AGENT_TYPE]: new TestImageAgent(),
};
const SECRET = 'Code-Word-6650';

/** Every file under `root` holding `text`, relative. */
const filesHolding = (root: string, text: string) =>
	readdirSync(root, { recursive: true, encoding: 'utf8' })
		.filter((f) => statSync(path.join(root, f)).isFile())
		.filter((f) => expanded(readFileSync(path.join(root, f))).includes(text));

/**
 * Sets a stored memory's last write `days` back, through storage (the passage of time, faked): the
 * field each kind counts from (`updated_at`; a capture log's `captured_at`).
 */
async function age(folder: string, key: string, days: number, field = 'updated_at') {
	const storage = new LocalDiskStorage({ root: folder });
	const got = await storage.get(key);
	assert.ok(got, `${key} is stored`);
	const doc = JSON.parse(Buffer.from(got.body).toString('utf8'));
	assert.ok(doc.expire_after_days > 0, `${key} carries a rule`);
	doc[field] = new Date(Date.now() - days * DAY_MS).toISOString();
	await storage.put(key, Buffer.from(JSON.stringify(doc)));
}

/** Ages everything LLM with Memory keeps for a session of workflow `wf`. */
async function ageSession(folder: string, wf: string, session: string, days = 2) {
	await age(folder, `conversation_memory/${wf}/${session}.json`, days);
	await age(folder, `versioned_data/${wf}/${session}/branches/main.json`, days);
	await age(folder, `memory_base/${wf}/sessions/${session}/log.json`, days, 'captured_at');
}

const stored = (folder: string, key: string): Json =>
	JSON.parse(readFileSync(path.join(folder, key), 'utf8'));

/** LLM with Memory keeping chat, versioned data (Initial Data) and long-term captures, expiring after a day. */
const bot = (options: INodeParameters = { expireAfterDays: 1 }) => ({
	name: 'Bot',
	id: 'bot',
	params: {
		memoryMode: 'conversation',
		longTermMemory: true,
		longTermOptions: { scope: 'conversation' },
		versionedData: true,
		initialData: '{"step": 1}',
		versionedDataOptions: { keepLastVersions: 2 },
		options,
	},
});

async function say(folder: string, wf: string, text: string, session = 's1'): Promise<Json> {
	const r = await runWorkflow(workflow(folder, { id: wf, llms: [bot()] }), {
		nodeTypes,
		triggerItems: chat(text, session),
	});
	assert.equal(r.status, 'success', r.error?.message);
	return r.output('Bot')[0].json as Json;
}

async function manage(folder: string, params: INodeParameters, resource?: string) {
	const wf = workflow(folder, {
		id: 'wf-admin',
		manager: params,
		resource,
		managerOnError: 'continueRegularOutput',
	});
	const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat('manage') });
	assert.equal(r.status, 'success', r.error?.message);
	return r.output('Manager').map((i) => i.json as Json);
}

const lastRequest = (node = 'Bot Model') =>
	scriptedModelLog
		.forNode(node)
		.at(-1)!
		.messages.map((m) => m.content)
		.join('\n');

afterEach(() => scriptedModelLog.clear());

describe('Expire After through n8n', () => {
	it('LLM with Memory: stored with chat, data and captures; once passed, the model gets no history and the memory is gone', async () => {
		const folder = tempDir('retention-wf');
		await say(folder, 'wf-r', `my code is ${SECRET}`);
		await say(folder, 'wf-r', 'what is my code?');
		assert.match(lastRequest(), new RegExp(SECRET), 'within the rule, history reaches the model');
		for (const key of [
			'conversation_memory/wf-r/s1.json',
			'versioned_data/wf-r/s1/branches/main.json',
			'memory_base/wf-r/sessions/s1/log.json',
		])
			assert.equal(stored(folder, key).expire_after_days, 1, key);
		assert.equal(stored(folder, 'versioned_data/wf-r/s1/branches/main.json').keep_last, 2);
		await ageSession(folder, 'wf-r', 's1');
		const out = await say(folder, 'wf-r', 'hello again');
		assert.doesNotMatch(lastRequest(), new RegExp(SECRET), 'no history, no recall, no data of it');
		assert.deepEqual(
			[out.memory.historyMessages, out.version, out.memory.longTermMemory.recalled],
			[0, 1, 0],
		);
		assert.deepEqual(filesHolding(folder, SECRET), [], 'every expired kind was deleted');
		const doc = stored(folder, 'conversation_memory/wf-r/s1.json');
		assert.deepEqual(
			[doc.messages.length, doc.expire_after_days],
			[2, 1],
			'the session starts afresh, with the node’s rule',
		);
	});

	it('LLM Memory Store: an expired session gives the agent no history', async () => {
		const folder = tempDir('retention-store');
		const store: INode = {
			id: 'store',
			name: 'Memory',
			type: STORE_TYPE,
			typeVersion: 1,
			position: [400, 200],
			parameters: { localFolder: folder, options: { expireAfterDays: 1 } },
		};
		const wf: WorkflowJson = {
			id: 'wf-store',
			name: 'agent with an expiring store',
			nodes: [
				TRIGGER_NODE,
				{
					id: 'agent',
					name: 'Agent',
					type: TEST_IMAGE_AGENT_TYPE,
					typeVersion: 1,
					position: [200, 0],
					parameters: { save: 'saveContext' },
				},
				echoModelNode('Agent Model', 'agent-model'),
				store,
			],
			connections: {
				Trigger: { main: [[{ node: 'Agent', type: 'main', index: 0 }]] },
				'Agent Model': {
					ai_languageModel: [[{ node: 'Agent', type: 'ai_languageModel', index: 0 }]],
				},
				Memory: { ai_memory: [[{ node: 'Agent', type: 'ai_memory', index: 0 }]] },
			},
		};
		const run = async (text: string) => {
			const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat(text) });
			assert.equal(r.status, 'success', r.error?.message);
		};
		await run(`remember ${SECRET}`);
		await run('and now?');
		assert.match(lastRequest('Agent Model'), new RegExp(SECRET));
		await age(folder, 'conversation_memory/wf-store/s1.json', 2);
		await run('hello again');
		assert.doesNotMatch(lastRequest('Agent Model'), new RegExp(SECRET));
		assert.deepEqual(filesHolding(folder, SECRET), []);
	});
});

describe('LLM Memory Manager: Prune Expired and Keep Last N Versions', () => {
	it('Prune Expired sweeps chat memory, versioned data and captures of one workflow or all, and reports them', async () => {
		const folder = tempDir('retention-prune');
		await say(folder, 'wf-a', `a secret ${SECRET}`, 'old');
		await say(folder, 'wf-b', `b secret ${SECRET}`, 'old');
		await say(folder, 'wf-a', 'still talking', 'live');
		await ageSession(folder, 'wf-a', 'old');
		await ageSession(folder, 'wf-b', 'old');
		const [dry] = await manage(folder, {
			operation: 'pruneExpired',
			pruneScope: 'all',
			dryRun: true,
		});
		assert.deepEqual(dry.expired.chatMemory, ['wf-a/old', 'wf-b/old']);
		assert.equal(filesHolding(folder, SECRET).length > 0, true, 'a dry run deletes nothing');
		const [one] = await manage(folder, { operation: 'pruneExpired', workflowId: 'wf-a' });
		assert.deepEqual(
			[one.workflowId, one.chatMemory, one.versionedData, one.captures, one.capturedMessages],
			['wf-a', 1, 1, 1, 2],
		);
		assert.deepEqual(one.expired, {
			chatMemory: ['wf-a/old'],
			versionedData: ['wf-a/old'],
			captures: ['wf-a/old'],
		});
		assert.deepEqual(one.skipped, []);
		assert.equal(one.deletedCount, one.deleted.length);
		assert.ok(filesHolding(folder, SECRET).every((f) => f.includes('wf-b')));
		const [all] = await manage(folder, { operation: 'pruneExpired', pruneScope: 'all' });
		assert.deepEqual([all.workflowId, all.expired.chatMemory], [null, ['wf-b/old']]);
		assert.deepEqual(filesHolding(folder, SECRET), []);
		await say(folder, 'wf-a', 'and again', 'live');
		assert.match(lastRequest(), /still talking/, 'live memory is kept');
	});

	it('Save Version keeps the last N versions; History says where it was cut; a cut version is an error saying so', async () => {
		const folder = tempDir('retention-keep');
		for (let i = 1; i <= 4; i++)
			await manage(
				folder,
				{
					operation: 'saveVersion',
					data: JSON.stringify({ i }),
					summary: `save ${i}`,
					options: { keepLastVersions: 2 },
				},
				'versionedData',
			);
		const [page] = await manage(
			folder,
			{ operation: 'history', returnAll: true, options: { groupEntries: true } },
			'versionedData',
		);
		assert.deepEqual(
			[page.entries.map((e: Json) => e.version), page.truncatedBefore, page.nextBefore],
			[[4, 3], 3, null],
		);
		const [gone] = await manage(folder, { operation: 'getVersion', version: 1 }, 'versionedData');
		assert.match(
			String(gone.error),
			/Version 1 does not exist .*Keep Last N Versions deleted the versions before 3/,
		);
	});

	it('Save Version with Expire After: stored on the branch; past it, the data is gone', async () => {
		const folder = tempDir('retention-save');
		const saved = await manage(
			folder,
			{
				operation: 'saveVersion',
				data: JSON.stringify({ secret: SECRET }),
				summary: 'first',
				options: { expireAfterDays: 1 },
			},
			'versionedData',
		);
		assert.equal(saved[0].version, 1, JSON.stringify(saved));
		await age(folder, 'versioned_data/wf-admin/s1/branches/main.json', 2);
		const [current] = await manage(folder, { operation: 'getCurrent' }, 'versionedData');
		assert.deepEqual([current.exists, current.data], [false, null]);
		assert.deepEqual(filesHolding(folder, SECRET), []);
	});
});
