/**
 * Searches across every conversation on a real n8n (N8N_VERSION): what one user said in their own
 * chat is found, after one Sync Now, by the Memory Base's All Conversations search and by the Memory
 * Base Tool an AI Agent uses in another user's chat; once that user is forgotten (the LLM Memory
 * Manager's Forget User), neither finds it, and no object of the base-wide index holds it. n8n's Chat
 * Trigger, AI Agent, OpenAI Chat Model and Embeddings OpenAI nodes run our Memory Base, Memory Base
 * Tool and LLM Memory Manager, installed from the package's tarball; the one stand-in is the fake
 * OpenAI server (deterministic answers and hashed-word embeddings).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { contentText, startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi } from '../../demo/model-server';
import { LocalDiskStorage, wideLexicalPrefix, wideVectorPrefix } from '../../src/internal';
import { CHAT_TRIGGER_NAME, WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import { storedObjects } from '../support/forget-plant';
import { packPackage } from '../support/n8n-harness';
import type { N8nInstance } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import { postWebhook } from '../support/webhooks';
import { openAiCredential } from '../support/workflows';

type Json = Record<string, any>;

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;

const MB_TYPE = 'n8n-nodes-llm-memory.memoryBase';
const MB_TOOL_TYPE = 'n8n-nodes-llm-memory.memoryBaseTool';
const WF = { id: 'e2eMemoryBaseWide1', webhookId: 'e2e0c0de-0000-4000-8000-0000000wide1' };
/** Where another user asks: an agent with the Memory Base Tool on WF's base, capturing nothing. */
const ASK = { id: 'e2eMemoryBaseWide2', webhookId: 'e2e0c0de-0000-4000-8000-0000000wide2' };
const TOOL = 'Company memory';
const SECRET = 'Zephyr pricing is far too steep for our nine-seat team';

/**
 * Chat Trigger → AI Agent → Capture with the chat's user; webhooks: Sync Now, Search of every
 * conversation, Forget User.
 */
function workflow(): Json {
	const w = new WorkflowBuilder(WF.id, 'memory base: every conversation');
	const agent = w.agent('Agent', 'capturing agent');
	const capture = w.add({
		name: 'Capture',
		type: MB_TYPE,
		typeVersion: 1,
		parameters: {
			operation: 'capture',
			userId: `={{ $('${CHAT_TRIGGER_NAME}').item.json.metadata.userId }}`,
			autoCapture: false,
		},
	});
	w.main(w.chatTrigger(WF.webhookId), agent).main(agent, capture);
	const sync = w.add({
		name: 'Sync',
		type: MB_TYPE,
		typeVersion: 1,
		parameters: { operation: 'syncNow', sessionScope: 'all' },
	});
	w.main(w.webhookAll('Sync Webhook', 'e2e-wide-sync'), sync);
	const search = w.add({
		name: 'Search',
		type: MB_TYPE,
		typeVersion: 1,
		parameters: {
			operation: 'search',
			sessionScope: 'all',
			query: '={{ $json.body.query }}',
			topK: 3,
		},
	});
	w.main(w.webhookAll('Search Webhook', 'e2e-wide-search'), search);
	w.sub(w.embeddings(), 'ai_embedding', capture, sync, search);
	const forget = w.llmMemoryManager('Forget', {
		resource: 'conversationMemory',
		operation: 'forgetUser',
		forgetBy: 'user',
		forgetUserId: '={{ $json.body.userId }}',
	});
	w.main(w.webhook('Forget Webhook', 'e2e-wide-forget'), forget);
	return w.json();
}

/** Chat Trigger → AI Agent with the Memory Base Tool over every conversation of WF's base. */
function askWorkflow(): Json {
	const w = new WorkflowBuilder(ASK.id, 'memory base: asking across conversations');
	const agent = w.agent('Agent', 'wide agent');
	w.main(w.chatTrigger(ASK.webhookId), agent);
	const tool = w.add({
		name: TOOL,
		type: MB_TOOL_TYPE,
		typeVersion: 1,
		parameters: { baseId: WF.id, topK: 3, sessionScope: 'all' },
	});
	w.sub(tool, 'ai_tool', agent);
	w.sub(w.embeddings(), 'ai_embedding', tool);
	return w.json();
}

async function post(name: string, body: Json = {}): Promise<any> {
	const r = await postWebhook(n8n!.baseUrl, name, body);
	assert.equal(r.status, 200, `${name}: ${r.status} ${JSON.stringify(r.json)}`);
	return r.json;
}

const list = (out: any): Json[] =>
	Array.isArray(out) ? out : [out].filter((o) => o && Object.keys(o).length);

async function chat(sessionId: string, userId: string, chatInput: string, wf = WF) {
	const r = await sendChat(n8n!.chatUrl(wf.webhookId), {
		sessionId,
		chatInput,
		metadata: { userId },
	});
	assert.equal(r.status, 200, r.body);
	return r;
}

/** What the Memory Base Tool gave the model on the agent's last call. */
function lastToolResult(): Json[] {
	const call = llm!
		.completions()
		.filter((c) => c.body?.messages?.[0]?.content === 'wide agent')
		.at(-1)!;
	const message = call.body.messages.at(-1);
	assert.equal(message.role, 'tool');
	const parsed = JSON.parse(contentText(message.content));
	return Array.isArray(parsed) ? parsed : [parsed];
}

/** Every object of the base-wide index, as read (gzipped segments unzipped). */
async function wideObjects(): Promise<Buffer[]> {
	const disk = new LocalDiskStorage({ root: n8n!.memoryRoot });
	return [
		...(await storedObjects(disk, wideLexicalPrefix(WF.id))),
		...(await storedObjects(disk, wideVectorPrefix(WF.id))),
	];
}

describe('searches across every conversation on a real n8n', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 });
		n8n = await joinSharedN8n({
			tarball: await packPackage(),
			credentials: [openAiCredential(llm.url)],
			workflows: [workflow(), askWorkflow()],
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
	});

	it('what one user said is found by All Conversations and the tool in another user’s chat after one sync; not once forgotten', async () => {
		await chat('ana-chat', 'ana', SECRET);
		await chat('ana-chat', 'ana', 'We also need invoices in euros');
		await chat('ben-chat', 'ben', 'I asked about opening hours of the harbour office');
		const synced = list(await post('e2e-wide-sync'))[0];
		assert.ok(synced.messages >= 6, JSON.stringify(synced));

		const found = list(
			await post('e2e-wide-search', { query: 'what did people say about the Zephyr pricing' }),
		);
		const ana = found.find((m) => m.text === SECRET);
		assert.ok(ana, JSON.stringify(found));
		assert.equal(ana.userId, 'ana');
		assert.equal(ana.sessionId, 'ana-chat');
		assert.ok(ana.similarity > 0, 'matched by its vector too: it was synced');
		assert.equal(ana.coverage.source, 'base-wide index');
		assert.ok(ana.coverage.vectors >= 6 && ana.coverage.lastSync, JSON.stringify(ana.coverage));

		const asked = await chat(
			'ben-asks',
			'ben',
			`what do customers think of the pricing? [[fake:tool=${TOOL}:{"query":"Zephyr pricing"}]]`,
			ASK,
		);
		assert.match(asked.shown ?? '', /Zephyr pricing is far too steep/);
		const tool = lastToolResult();
		assert.ok(
			tool.some((m) => m.text === SECRET && m.userId === 'ana' && m.coverage),
			JSON.stringify(tool),
		);

		const forgotten = list(await post('e2e-wide-forget', { userId: 'ana' }))[0];
		assert.deepEqual(forgotten.conversationIds, ['ana-chat']);
		const after = list(
			await post('e2e-wide-search', { query: 'what did people say about the Zephyr pricing' }),
		);
		assert.ok(
			!after.some((m) => m.userId === 'ana' || /Zephyr/.test(m.text)),
			JSON.stringify(after),
		);
		await chat(
			'ben-asks',
			'ben',
			`anything on pricing? [[fake:tool=${TOOL}:{"query":"Zephyr pricing"}]]`,
			ASK,
		);
		assert.ok(
			!lastToolResult().some((m) => /Zephyr/.test(String(m.text))),
			'the tool no longer finds it',
		);
		const wide = await wideObjects();
		assert.ok(
			wide.some((b) => b.includes('harbour')),
			'the scan reads what is stored',
		);
		for (const bytes of wide) {
			assert.ok(!bytes.includes('Zephyr'), 'no byte of what she said in the base-wide index');
			assert.ok(!bytes.includes('"ana"'), 'nor her user ID');
		}
	});
});
