/**
 * The LLM Memory Manager on a real n8n (N8N_VERSION: 2.8.4 on Node 20 or 2.40.7 on Node 24; scripts/test.sh
 * runs both), as a new user meets it: LLM with Memory keeps a chat in Node mode, and the Manager (1.1)
 * with its default Memory, All of This Conversation, reads it back naming the node; a conversation that
 * does not exist says so instead of outputting nothing; Node → From List answers through n8n's own
 * dynamic-parameters endpoint, asked the way the editor asks (expressions resolved, a one-node workflow
 * on the server); version 1 keeps its old default. The model is n8n's OpenAI Chat Model sub-node on the
 * local fake OpenAI server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi } from '../../demo/model-server';
import { LLM_MEMORY_MANAGER_TYPE, WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import { packPackage } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import { setUpOwner } from '../support/n8n-owner';
import { openAiCredential } from '../support/workflows';

type Json = Record<string, any>;

const WF = { id: 'e2eManagerFinds1', webhookId: 'e2e0c0de-0000-4000-8000-00000000e001' };
const BOT = { name: 'Support Bot', id: 'e2e-manager-bot' };

/** Chat → Support Bot (Node mode); Webhooks → the Manager 1.1 (grouped) and 1 (one item per message). */
function managerWorkflow(): Json {
	const w = new WorkflowBuilder(WF.id, 'LLM Memory Manager finds Node-mode memory');
	const bot = w.llmWithMemory(BOT.name, BOT.id, {
		systemMessage: 'support bot',
		memoryMode: 'node',
	});
	w.main(w.chatTrigger(WF.webhookId), bot);
	const read = {
		resource: 'conversationMemory',
		operation: 'getMessages',
		returnAll: true,
		conversationIdType: 'customKey',
		conversationId: '={{ $json.body.sessionId }}',
	};
	const grouped = { ...read, options: { groupMessages: true } };
	const latest = w.llmMemoryManager('Read', grouped, { typeVersion: 1.1 });
	w.main(w.webhook('Read Webhook', 'e2e-manager-read'), latest);
	const first = w.llmMemoryManager('Read v1', grouped, { typeVersion: 1 });
	w.main(w.webhook('Read v1 Webhook', 'e2e-manager-read-v1'), first);
	return w.json();
}

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;
let cookie = '';

async function post(path: string, body: Json, headers: Record<string, string> = {}) {
	const res = await fetch(`${n8n!.baseUrl}${path}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', ...headers },
		body: JSON.stringify(body),
	});
	const text = await res.text();
	assert.equal(res.status, 200, `${path}: ${text}`);
	return JSON.parse(text);
}

const read = async (sessionId: string, path = 'e2e-manager-read') =>
	await post(`/webhook/${path}`, { sessionId });

describe('LLM Memory Manager on a real n8n', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 });
		n8n = await joinSharedN8n({
			tarball: await packPackage(),
			credentials: [openAiCredential(llm.url)],
			workflows: [managerWorkflow()],
		});
		// The shared n8n has its owner already.
		cookie = n8n.ownerCookie ?? (await setUpOwner(n8n.baseUrl));
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
	});

	it('reads a Node-mode conversation by default, naming the node; a missing one says so', async () => {
		for (const text of ['one', 'two', 'three']) {
			const r = await sendChat(n8n!.chatUrl(WF.webhookId), { sessionId: 's1', chatInput: text });
			assert.equal(r.status, 200, r.body);
		}
		const found = await read('s1');
		assert.deepEqual(
			[found.memoryMode, found.memory, found.nodeId, found.nodeName, found.total],
			['all', 'node', BOT.id, BOT.name, 6],
		);
		assert.equal(found.messages[0].content, 'one');
		const missing = await read('nobody');
		assert.deepEqual(
			[missing.conversationExists, missing.memories, missing.messages],
			[false, [], 0],
		);
		assert.match(missing.note, /^Nothing is stored for conversation "nobody" of workflow/);
		const v1 = await read('s1', 'e2e-manager-read-v1');
		assert.deepEqual([v1.memoryMode, v1.exists, v1.total], ['conversation', false, 0]);
	});

	it('Node → From List lists the node with memory, through n8n’s dynamic-parameters endpoint', async () => {
		const panel = {
			resource: 'conversationMemory',
			operation: 'getMessages',
			workflowId: WF.id,
			conversationIdType: 'fromInput',
			conversationId: null,
			memoryMode: 'node',
			memoryNode: { __rl: true, mode: 'list', value: '' },
			storage: 'localDisk',
			// The folder this file's nodes keep memory in (on the shared n8n, the file's own).
			localFolder: n8n!.memoryRoot,
		};
		const ask = async (currentNodeParameters: Json) =>
			await post(
				'/rest/dynamic-node-parameters/resource-locator-results',
				{
					nodeTypeAndVersion: { name: LLM_MEMORY_MANAGER_TYPE, version: 1.1 },
					path: 'parameters.memoryNode',
					methodName: 'memoryNodes',
					currentNodeParameters,
				},
				{ cookie },
			);
		const { data } = await ask(panel);
		assert.deepEqual(
			data.results.map((r: Json) => r.value),
			[BOT.id],
		);
		assert.equal(data.results[0].name, `${BOT.id} (1 conversation)`);
		const unsaved = await fetch(
			`${n8n!.baseUrl}/rest/dynamic-node-parameters/resource-locator-results`,
			{
				method: 'POST',
				headers: { 'content-type': 'application/json', cookie },
				body: JSON.stringify({
					nodeTypeAndVersion: { name: LLM_MEMORY_MANAGER_TYPE, version: 1.1 },
					path: 'parameters.memoryNode',
					methodName: 'memoryNodes',
					currentNodeParameters: { ...panel, workflowId: null },
				}),
			},
		);
		assert.notEqual(unsaved.status, 200);
		assert.match(await unsaved.text(), /No workflow ID to list nodes for/);
	});
});
