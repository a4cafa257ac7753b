/**
 * Long-term recall on a real n8n (N8N_VERSION), the package installed from its tarball: a fact a user
 * gave in one chat session reaches the model in another session of the same user — through LLM with
 * Memory, and through n8n's AI Agent (3.1 and 2.2) with the LLM Memory Store — and another user's never
 * does; all with no embeddings node connected (lexical recall). The user comes from the chat's metadata,
 * as the chat widget sends it. Asserted from what the model was sent: the fake OpenAI server (the only
 * stand-in) logs every request. Also: a Memory Base whose lexical index was deleted makes Search and the
 * Memory Base Tool fail with the mismatch error, not answer with nothing.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { contentText, startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi, LoggedRequest } from '../../demo/model-server';
import { CHAT_TRIGGER_NAME, WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import { failedSince, failureCount } from '../support/n8n-executions';
import { packPackage } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import { openAiCredential } from '../support/workflows';

type Json = Record<string, any>;

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;

const USER = `={{ ($('${CHAT_TRIGGER_NAME}').item.json.metadata || {}).userId }}`;
const LONG_TERM = { longTermMemory: true, longTermUserId: USER };
const MB_TYPE = 'n8n-nodes-llm-memory.memoryBase';
const MB_TOOL_TYPE = 'n8n-nodes-llm-memory.memoryBaseTool';

const LLM = { id: 'e2eRecallLlm0001', webhookId: 'e2e0c0de-0000-4000-8000-0000000rc001' };
function llmWorkflow(): Json {
	const w = new WorkflowBuilder(LLM.id, 'recall: LLM with Memory');
	const node = w.llmWithMemory('LLM', 'recall-llm', {
		systemMessage: 'You are the recall test bot',
		...LONG_TERM,
	});
	w.main(w.chatTrigger(LLM.webhookId), node);
	return w.json();
}

/** Chat Trigger → AI Agent (typeVersion) with an LLM Memory Store with Long-Term Memory. */
function agentWorkflow(id: string, webhookId: string, typeVersion: number): Json {
	const w = new WorkflowBuilder(id, `recall: AI Agent ${typeVersion}`);
	const agent = w.agent('Agent', 'You are the recall agent', {}, typeVersion);
	w.main(w.chatTrigger(webhookId), agent);
	w.sub(w.store('Memory', `${id}-store`, LONG_TERM), 'ai_memory', agent);
	return w.json();
}
const AGENT3 = { id: 'e2eRecallAgent31', webhookId: 'e2e0c0de-0000-4000-8000-0000000rc031' };
const AGENT2 = { id: 'e2eRecallAgent22', webhookId: 'e2e0c0de-0000-4000-8000-0000000rc022' };

/** Chat Trigger → AI Agent (tool: Memory Base Tool) → Capture; a Search webhook. No embeddings node. */
const BASE = { id: 'e2eRecallBase001', webhookId: 'e2e0c0de-0000-4000-8000-0000000rc101' };
function baseWorkflow(): Json {
	const w = new WorkflowBuilder(BASE.id, 'recall: memory base without embeddings');
	const agent = w.agent('Agent', 'base agent');
	const capture = w.add({
		name: 'Capture',
		type: MB_TYPE,
		typeVersion: 1,
		parameters: { operation: 'capture' },
	});
	w.main(w.chatTrigger(BASE.webhookId), agent).main(agent, capture);
	const tool = w.add({
		name: 'Long-term memory',
		type: MB_TOOL_TYPE,
		typeVersion: 1,
		parameters: {},
	});
	w.sub(tool, 'ai_tool', agent);
	const search = w.add({
		name: 'Search',
		type: MB_TYPE,
		typeVersion: 1,
		parameters: { operation: 'search', query: '={{ $json.body.query }}', sessionScope: 'all' },
	});
	w.main(w.webhook('Webhook search', 'e2e-recall-search'), search);
	return w.json();
}

/** Chat Trigger → AI Agent with a Memory Base Tool on a base nothing was ever captured into. */
const EMPTY = { id: 'e2eRecallEmpty01', webhookId: 'e2e0c0de-0000-4000-8000-0000000rc201' };
function emptyBaseWorkflow(): Json {
	const w = new WorkflowBuilder(EMPTY.id, 'recall: a memory base with nothing captured');
	const agent = w.agent('Agent', 'empty base agent');
	w.main(w.chatTrigger(EMPTY.webhookId), agent);
	const tool = w.add({
		name: 'Long-term memory',
		type: MB_TOOL_TYPE,
		typeVersion: 1,
		parameters: { baseId: 'never-captured' },
	});
	w.sub(tool, 'ai_tool', agent);
	return w.json();
}

async function chat(
	wf: { webhookId: string },
	sessionId: string,
	chatInput: string,
	userId?: string,
) {
	const r = await sendChat(n8n!.chatUrl(wf.webhookId), {
		sessionId,
		chatInput,
		...(userId ? { metadata: { userId } } : {}),
	});
	return r;
}

/** The chat-completion request the model got for a user message (the last one carrying it). */
function requestFor(text: string): LoggedRequest {
	const found = llm!
		.requests()
		.filter((r) => r.path === '/v1/chat/completions')
		.filter((r) => (r.body.messages as Json[]).some((m) => contentText(m.content).includes(text)))
		.at(-1);
	assert.ok(found, `no model request carried "${text}"`);
	return found;
}
const texts = (r: LoggedRequest) =>
	(r.body.messages as Json[]).map((m) => `${m.role}: ${contentText(m.content)}`);

describe('Long-term recall across conversations on a real n8n', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 });
		const tarball = await packPackage();
		n8n = await joinSharedN8n({
			tarball,
			credentials: [openAiCredential(llm.url)],
			workflows: [
				llmWorkflow(),
				agentWorkflow(AGENT3.id, AGENT3.webhookId, 3.1),
				agentWorkflow(AGENT2.id, AGENT2.webhookId, 2.2),
				baseWorkflow(),
				emptyBaseWorkflow(),
			],
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
	});

	it('LLM with Memory: the fact from conversation 1 is in conversation 2’s system message; another user’s is not', async () => {
		assert.equal(
			(await chat(LLM, 'alice-1', 'My order number is 4471, shipping to Porto', 'alice')).status,
			200,
		);
		assert.equal(
			(await chat(LLM, 'bob-1', 'My order number is 9999, shipping to Oslo', 'bob')).status,
			200,
		);
		const r = await chat(LLM, 'alice-2', 'Which city does my order ship to?', 'alice');
		assert.equal(r.status, 200, r.body);
		const sent = texts(requestFor('Which city does my order ship to?'));
		assert.equal(sent.filter((t) => t.startsWith('system:')).length, 1);
		assert.match(sent[0], /^system: You are the recall test bot\n\n\[Long-term memory\]/);
		assert.match(sent[0], /user: My order number is 4471, shipping to Porto/);
		assert.doesNotMatch(sent.join('\n'), /9999|Oslo/);
		assert.equal(r.json.memory.longTermMemory.userId, 'alice');
		// No embeddings node: the recall report says the search went by words alone.
		assert.deepEqual(r.json.memory.longTermMemory.search, { mode: 'lexical' });
		await chat(LLM, 'bob-2', 'Which city does my order ship to, again?', 'bob');
		const bob = texts(requestFor('Which city does my order ship to, again?')).join('\n');
		assert.match(bob, /9999/);
		assert.doesNotMatch(bob, /4471|Porto/);
	});

	for (const [name, wf] of [
		['3.1', AGENT3],
		['2.2', AGENT2],
	] as const)
		it(`AI Agent ${name} with the LLM Memory Store: the recall is the first history message, after the only system message`, async () => {
			const tag = `agent${name.replace('.', '')}`;
			assert.equal(
				(await chat(wf, `${tag}-a1`, `My locker code is ${tag}-7788`, 'carol')).status,
				200,
			);
			assert.equal(
				(await chat(wf, `${tag}-d1`, `My locker code is ${tag}-1122`, 'dave')).status,
				200,
			);
			const question = `What is my locker code? (${tag})`;
			const r = await chat(wf, `${tag}-a2`, question, 'carol');
			assert.equal(r.status, 200, r.body);
			const messages = requestFor(question).body.messages as Json[];
			// One system message, first (providers that accept no other place keep working); the
			// recalled section is a user-role message right after it; the question last.
			assert.deepEqual(
				messages.map((m) => m.role),
				['system', 'user', 'user'],
			);
			assert.match(contentText(messages[1].content), /^\[Long-term memory\]/);
			assert.match(contentText(messages[1].content), new RegExp(`${tag}-7788`));
			assert.doesNotMatch(JSON.stringify(messages), new RegExp(`${tag}-1122`));
			assert.equal(contentText(messages[2].content), question);
		});

	it('a Memory Base whose lexical index is gone: Search and the Tool say so (mismatch), not "nothing found"', async () => {
		assert.equal((await chat(BASE, 'erin-1', 'The vault combination is 31-07-22')).status, 200);
		const found = await fetch(`${n8n!.baseUrl}/webhook/e2e-recall-search`, {
			method: 'POST',
			headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify({ query: 'vault combination' }),
		});
		assert.match(
			await found.text(),
			/31-07-22/,
			'found lexically, with no embeddings node connected',
		);
		// Every word index of the base: its partitions (a conversation's search, the Tool) and the
		// base-wide one (All Conversations).
		for (const folder of ['parts', 'wide'])
			rmSync(path.join(n8n!.memoryRoot, 'memory_base', BASE.id, folder), { recursive: true });
		const failed = failureCount(n8n!, BASE.id);
		const refused = await fetch(`${n8n!.baseUrl}/webhook/e2e-recall-search`, {
			method: 'POST',
			headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify({ query: 'vault combination' }),
		});
		assert.equal(refused.status, 500);
		assert.match(
			String((await failedSince(n8n!, BASE.id, failed)).errorMessage),
			/lexical index is missing.*Run Regenerate/,
		);
		// The tool: n8n 2.40 hands a tool's error to the model as its result; 2.8 fails the execution.
		const before = failureCount(n8n!, BASE.id);
		const viaTool = await chat(
			BASE,
			'erin-2',
			'combination? [[fake:tool=Long-term memory:{"query":"vault combination"}]]',
		);
		const told =
			viaTool.status === 200
				? viaTool.body
				: String((await failedSince(n8n!, BASE.id, before)).errorMessage);
		assert.match(told, /lexical index is missing/);
	});

	it('the Tool on a Memory Base that does not exist tells the model so, naming the bases, not an empty list', async () => {
		const reply = await chat(
			EMPTY,
			'empty-1',
			'what did I say? [[fake:tool=Long-term memory:{"query":"anything at all"}]]',
		);
		assert.equal(reply.status, 200, reply.body);
		const after = requestFor('what did I say?');
		const tool = (after.body.messages as Json[]).find((m) => m.role === 'tool');
		assert.ok(tool, texts(after).join('\n'));
		assert.match(
			contentText(tool.content),
			// The agent hands the tool's answer to the model as JSON text: its quotes come escaped.
			/No Memory Base named \\?"never-captured\\?" \(bases in this storage:/,
		);
	});
});
