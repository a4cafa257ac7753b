/**
 * The Memory Base on a real n8n (N8N_VERSION): n8n's Chat Trigger, AI Agent, OpenAI Chat Model,
 * Embeddings OpenAI and Simple Vector Store nodes with our Memory Base and Memory Base Tool, the package
 * installed from its npm pack tarball. The only stand-in is the fake OpenAI server, which also answers
 * /v1/embeddings deterministically (hashed word features: texts sharing words are similar) and fails
 * or slows embedding requests on demand. Webhooks in the same workflow drive Sync Now, Search, Status,
 * Regenerate and Delete; what is stored is read back from the memory folder (n8n.memoryRoot).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { contentText, startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi } from '../../demo/model-server';
import { LocalDiskStorage, MemoryBase, sessionPart, vectorPartFolder } from '../../src/internal';
import { CHAT_TRIGGER_NAME, WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import { failedSince, failureCount } from '../support/n8n-executions';
import { packPackage } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import { postWebhook } from '../support/webhooks';
import type { WebhookReply } from '../support/webhooks';
import type { N8nInstance } from '../support/n8n-harness';
import { openAiCredential } from '../support/workflows';

type Json = Record<string, any>;

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;

const MB_TYPE = 'n8n-nodes-llm-memory.memoryBase';
const MB_TOOL_TYPE = 'n8n-nodes-llm-memory.memoryBaseTool';
const EXAMPLE_FILE = path.resolve(__dirname, '../../examples/memory-base.json');
const EXAMPLE = JSON.parse(readFileSync(EXAMPLE_FILE, 'utf8'));

const FROM_BODY = {
	sessionScope: '={{ $json.body.scope || "all" }}',
	conversationIdType: 'customKey',
	conversationId: '={{ $json.body.sessionId }}',
};

/** Chat Trigger → AI Agent (tool: Long-term memory) → Capture; webhooks for the other operations. */
const MAIN = { id: 'e2eMemoryBase001', webhookId: 'e2e0c0de-0000-4000-8000-0000000mb001' };
function mainWorkflow(): Json {
	const w = new WorkflowBuilder(MAIN.id, 'memory base: chat, capture, operations');
	const trigger = w.chatTrigger(MAIN.webhookId);
	const agent = w.agent('Agent', 'mb agent');
	const capture = w.add({
		name: 'Capture',
		type: MB_TYPE,
		typeVersion: 1,
		parameters: {
			operation: 'capture',
			// Outputs only, as Langflow's memory base: the counts below are of the agent's answers.
			captureMessages: 'output',
			// The threshold as a chat message's metadata says (4 by default): "editing" it between turns.
			threshold: `={{ ($('${CHAT_TRIGGER_NAME}').item.json.metadata || {}).threshold || 4 }}`,
			autoCapture: `={{ ($('${CHAT_TRIGGER_NAME}').item.json.metadata || {}).autoCapture !== false }}`,
		},
	});
	w.main(trigger, agent).main(agent, capture);
	const tool = w.add({
		name: 'Long-term memory',
		type: MB_TOOL_TYPE,
		typeVersion: 1,
		// This conversation only (the tool's default is every conversation of the base).
		parameters: { topK: 2, sessionScope: 'session' },
	});
	w.sub(tool, 'ai_tool', agent);
	const targets = [capture, tool];
	const ops: Record<string, Json> = {
		search: {
			operation: 'search',
			query: '={{ $json.body.query }}',
			topK: '={{ $json.body.topK || 4 }}',
			...FROM_BODY,
		},
		status: { operation: 'status', ...FROM_BODY },
		sync: {
			operation: 'syncNow',
			...FROM_BODY,
			options: { embeddingBatchSize: '={{ $json.body.batch || 64 }}' },
		},
		regenerate: { operation: 'regenerate' },
		delete: { operation: 'deleteBase' },
	};
	for (const [name, parameters] of Object.entries(ops)) {
		const node = w.add({ name: `MB ${name}`, type: MB_TYPE, typeVersion: 1, parameters });
		w.main(w.webhookAll(`Webhook ${name}`, `e2e-mb-${name}`), node);
		targets.push(node);
	}
	w.sub(w.embeddings(), 'ai_embedding', ...targets);
	return w.json();
}

/** Chat Trigger → Capture (the user's messages) into n8n's own Simple Vector Store; a search webhook. */
const EXTERNAL = { id: 'e2eMemoryBaseVs01', webhookId: 'e2e0c0de-0000-4000-8000-0000000mb002' };
function externalWorkflow(): Json {
	const w = new WorkflowBuilder(EXTERNAL.id, 'memory base: external vector store');
	const capture = w.add({
		name: 'Capture',
		type: MB_TYPE,
		typeVersion: 1,
		parameters: { operation: 'capture', outputField: 'chatInput', threshold: 2 },
	});
	w.main(w.chatTrigger(EXTERNAL.webhookId), capture);
	const targets = [capture];
	for (const [name, parameters] of Object.entries({
		search: { operation: 'search', query: '={{ $json.body.query }}', ...FROM_BODY },
		status: { operation: 'status' },
	})) {
		const node = w.add({ name: `MB ${name}`, type: MB_TYPE, typeVersion: 1, parameters });
		w.main(w.webhookAll(`Webhook ${name}`, `e2e-mbvs-${name}`), node);
		targets.push(node);
	}
	const store = w.add({
		name: 'Simple Vector Store',
		type: '@n8n/n8n-nodes-langchain.vectorStoreInMemory',
		typeVersion: 1.3,
		parameters: { mode: 'retrieve', memoryKey: { __rl: true, mode: 'id', value: 'e2e-mb-store' } },
	});
	w.sub(w.embeddings(), 'ai_embedding', ...targets, store);
	w.sub(store, 'ai_vectorStore', ...targets);
	return w.json();
}

// --- helpers ---------------------------------------------------------------------------------------

const post = (pathName: string, body: Json): Promise<WebhookReply> =>
	postWebhook(n8n!.baseUrl, pathName, body);

async function op(name: string, body: Json = {}): Promise<any> {
	const before = failures(MAIN.id);
	const r = await post(`e2e-mb-${name}`, body);
	if (r.status !== 200) {
		const failed = await lastFailure(MAIN.id, before).catch(() => undefined);
		assert.fail(`${name}: ${r.status} ${JSON.stringify(r.json)} ${failed?.errorMessage ?? ''}`);
	}
	return r.json;
}

const search = async (query: string, sessionId?: string, topK = 4): Promise<Json[]> => {
	const out = await op('search', {
		query,
		topK,
		...(sessionId ? { scope: 'session', sessionId } : {}),
	});
	return Array.isArray(out) ? out : [out].filter((o) => o && Object.keys(o).length);
};

const status = async (sessionId?: string): Promise<Json> =>
	(await op('status', sessionId ? { scope: 'session', sessionId } : {}))[0];

async function turn(
	wf: { webhookId: string },
	sessionId: string,
	chatInput: string,
	metadata?: Json,
) {
	const r = await sendChat(n8n!.chatUrl(wf.webhookId), { sessionId, chatInput, metadata });
	assert.equal(r.status, 200, r.body);
	return r;
}

/** The captured output of a turn, as the fake model answers it. */
const ANSWER = (text: string) =>
	new RegExp(`^FAKE-LLM reply to "${text.replace(/[?()]/g, '\\$&')}"`);

const lastFailure = (workflowId: string, since: number) => failedSince(n8n!, workflowId, since);
const failures = (workflowId: string) => failureCount(n8n!, workflowId);

const disk = () => new LocalDiskStorage({ root: n8n!.memoryRoot });

// --- tests -----------------------------------------------------------------------------------------

describe('Memory Base on a real n8n', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 }); // first, so after() closes it even when packing fails
		const tarball = await packPackage();
		const exampleCredential = {
			...openAiCredential(llm.url),
			id: 'llmMemoryModel01',
			name: 'Chat model endpoint',
		};
		n8n = await joinSharedN8n({
			tarball,
			credentials: [openAiCredential(llm.url), exampleCredential],
			workflows: [mainWorkflow(), externalWorkflow(), EXAMPLE_FILE],
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
	});

	it('through the Chat Trigger with threshold 4: three turns stay pending, the fourth ingests', async () => {
		const facts = [
			'My favourite colour is teal',
			'I live in Lisbon',
			'My cat is called Miso',
			'I play the cello',
		];
		const before = llm!.embeddings().length;
		for (let i = 0; i < 3; i++) {
			const r = await turn(MAIN, 'alice', facts[i]);
			assert.match(r.shown ?? '', ANSWER(facts[i]), 'the chat shows the agent’s answer');
			assert.deepEqual(
				[r.json.memoryBase.pending, r.json.memoryBase.processed, r.json.memoryBase.ingested],
				[i + 1, 0, 0],
			);
		}
		assert.equal(llm!.embeddings().length, before, 'nothing embedded below the threshold');
		const fourth = await turn(MAIN, 'alice', facts[3]);
		assert.deepEqual(
			[
				fourth.json.memoryBase.pending,
				fourth.json.memoryBase.processed,
				fourth.json.memoryBase.ingested,
			],
			[0, 4, 4],
		);
		const requests = llm!.embeddings().slice(before);
		assert.equal(requests.length, 1);
		assert.equal(requests[0].body.input.length, 4);
		assert.match(requests[0].body.input[0], ANSWER(facts[0]));
		const st = await status('alice');
		assert.deepEqual(
			[st.sessions[0].cursor, st.sessions[0].totalProcessed, st.sessions[0].pending, st.mismatch],
			[4, 4, 0, false],
		);
		assert.ok(st.sessions[0].lastSyncAt);
		// Stored on disk in the memory folder, under the workflow's ID.
		const root = n8n!.memoryRoot;
		assert.ok(existsSync(path.join(root, `memory_base/${MAIN.id}/sessions/alice/log.json`)));
		const partition = vectorPartFolder(MAIN.id, { part: sessionPart('alice') }); // no user: its own
		assert.ok(existsSync(path.join(root, partition, 'manifest.json')));
		const meta = JSON.parse(
			readFileSync(path.join(root, `knowledge_base/${MAIN.id}/embedding_metadata.json`), 'utf8'),
		);
		assert.deepEqual([meta.is_memory_base, meta.dimensions], [true, 256]);
	});

	it('Search finds an early fact; another conversation’s facts appear only without the session filter', async () => {
		for (const f of [
			'My favourite colour is orange',
			'I work as a baker',
			'I own a bike',
			'I like jazz',
		])
			await turn(MAIN, 'bob', f);
		const mine = await search('what is my favourite colour?', 'alice', 2);
		assert.match(mine[0].text, /My favourite colour is teal/);
		assert.ok(
			mine.every((m) => m.sessionId === 'alice'),
			JSON.stringify(mine),
		);
		assert.ok(mine[0].score > 0.3);
		assert.match(String(mine[0].runId), /^\d+$/, 'the run is the n8n execution ID');
		assert.ok(!Number.isNaN(Date.parse(mine[0].capturedAt)));
		const all = await search('what is my favourite colour?', undefined, 2);
		assert.deepEqual(all.map((m) => m.sessionId).sort(), ['alice', 'bob']);
		assert.match(all.find((m) => m.sessionId === 'bob')!.text, /orange/);
	});

	it('the agent searches long-term memory with the Memory Base Tool', async () => {
		const r = await turn(
			MAIN,
			'alice',
			'remind me [[fake:tool=Long-term memory:{"query":"favourite colour"}]]',
		);
		assert.match(r.shown ?? '', /with tool results \[/);
		assert.match(r.shown ?? '', /My favourite colour is teal/);
		assert.doesNotMatch(r.shown ?? '', /orange/, 'the tool filters by the chat’s session');
		const call = llm!
			.completions()
			.filter((c) => c.body?.messages?.[0]?.content === 'mb agent')
			.at(-1)!;
		const toolMessage = call.body.messages.at(-1);
		assert.equal(toolMessage.role, 'tool');
		const results = JSON.parse(contentText(toolMessage.content));
		assert.ok(Array.isArray(results) && results.length >= 1, contentText(toolMessage.content));
		assert.equal(results[0].sessionId, 'alice');
		// How the search weighed words and vectors is for people reading the Search output.
		assert.equal(results[0].search, undefined, JSON.stringify(results[0]));
	});

	it('an embeddings failure mid-sync: cursor unchanged, nothing duplicated; the next sync completes', async () => {
		for (const f of ['alpha one', 'beta two', 'gamma three', 'delta four'])
			await turn(MAIN, 'fail', f, { autoCapture: false });
		assert.equal((await status('fail')).sessions[0].pending, 4);
		const failedBefore = failures(MAIN.id);
		llm!.failEmbeddings({ times: 1, after: 1, status: 400 });
		const failed = await post('e2e-mb-sync', { scope: 'session', sessionId: 'fail', batch: 1 });
		assert.equal(failed.status, 500, JSON.stringify(failed.json));
		const error = await lastFailure(MAIN.id, failedBefore);
		assert.equal(error.lastNodeExecuted, 'MB sync');
		let st = await status('fail');
		assert.deepEqual(
			[st.sessions[0].cursor, st.sessions[0].pending, st.sessions[0].totalProcessed],
			[0, 4, 0],
		);
		const synced = await op('sync', { scope: 'session', sessionId: 'fail', batch: 1 });
		assert.equal(synced[0].messages, 4);
		st = await status('fail');
		assert.deepEqual(
			[st.sessions[0].cursor, st.sessions[0].pending, st.sessions[0].totalProcessed],
			[4, 0, 4],
		);
		const hits = await search('alpha beta gamma delta one two three four', 'fail', 10);
		assert.equal(hits.length, 4, JSON.stringify(hits));
		assert.equal(new Set(hits.map((h) => h.messageId)).size, 4, 'each message once');
		const stored = await new MemoryBase({ storage: disk(), baseId: MAIN.id }).status({
			sessionId: 'fail',
		});
		assert.equal(stored.sessions[0].cursor, 4);
	});

	it('two concurrent Sync Now calls: one runs, the other gets "sync already running"', async () => {
		for (const f of ['one', 'two', 'three'])
			await turn(MAIN, 'conc', `concurrent ${f}`, { autoCapture: false });
		const failedBefore = failures(MAIN.id);
		llm!.slowEmbeddings(2500);
		try {
			const first = post('e2e-mb-sync', { scope: 'session', sessionId: 'conc' });
			await new Promise((r) => setTimeout(r, 800));
			const second = await post('e2e-mb-sync', { scope: 'session', sessionId: 'conc' });
			const done = await first;
			assert.equal(done.status, 200, JSON.stringify(done.json));
			assert.equal(done.json[0].messages, 3);
			assert.equal(second.status, 500, JSON.stringify(second.json));
			const error = await lastFailure(MAIN.id, failedBefore);
			assert.match(
				String(error.errorMessage),
				new RegExp(`^Sync already running: sync of memory base "${MAIN.id}" \\(session "conc"\\)`),
				JSON.stringify(error),
			);
		} finally {
			llm!.slowEmbeddings(0);
		}
		assert.equal((await status('conc')).sessions[0].cursor, 3);
	});

	it('a threshold change while outputs are pending applies at the next capture', async () => {
		for (const f of ['first', 'second', 'third']) {
			const r = await turn(MAIN, 'thr', `threshold ${f}`, { threshold: 10 });
			assert.equal(r.json.memoryBase.threshold, 10);
		}
		assert.equal(
			(await status('thr')).sessions[0].pending,
			3,
			'nothing ingested under threshold 10',
		);
		const next = await turn(MAIN, 'thr', 'threshold fourth', { threshold: 2 });
		assert.deepEqual(
			[next.json.memoryBase.threshold, next.json.memoryBase.ingested, next.json.memoryBase.pending],
			[2, 4, 0],
		);
	});

	it('index files deleted behind the base’s back: Status reports the mismatch, Regenerate restores search', async () => {
		// Every vector partition of the base.
		rmSync(path.join(n8n!.memoryRoot, `knowledge_base/${MAIN.id}/parts`), {
			recursive: true,
		});
		const st = await status();
		assert.equal(st.mismatch, true);
		assert.match(st.mismatchReason, /the vector index is missing/);
		assert.equal(st.sessions.find((s: Json) => s.sessionId === 'alice').mismatch, true);
		// A search would answer from part of what was captured: it fails with the mismatch instead.
		const failed = failures(MAIN.id);
		const refused = await post('e2e-mb-search', {
			query: 'favourite colour',
			scope: 'session',
			sessionId: 'alice',
		});
		assert.equal(refused.status, 500);
		assert.match(
			String((await lastFailure(MAIN.id, failed)).errorMessage),
			/vector index is missing.*Run Regenerate/,
		);
		const regenerated = await op('regenerate');
		assert.ok(regenerated[0].messages >= 20, JSON.stringify(regenerated));
		const after = await status();
		assert.equal(after.mismatch, false);
		assert.ok(after.sessions.every((s: Json) => s.pending === 0 && s.cursor === s.captured));
		assert.match((await search('what is my favourite colour?', 'alice', 1))[0].text, /teal/);
	});

	it('with n8n’s Simple Vector Store connected: ingests into it and searches it', async () => {
		await turn(EXTERNAL, 'ext', 'My dog is named Pixel');
		const second = await turn(EXTERNAL, 'ext', 'I grow tomatoes');
		assert.equal(second.json.memoryBase.ingested, 2);
		const hits = await post('e2e-mbvs-search', {
			query: 'what is my dog named?',
			scope: 'session',
			sessionId: 'ext',
		});
		assert.equal(hits.status, 200, JSON.stringify(hits.json));
		assert.equal(hits.json[0].text, 'My dog is named Pixel');
		const st = await post('e2e-mbvs-status', {});
		assert.deepEqual(
			[st.json[0].vectorStore, st.json[0].index, st.json[0].mismatch],
			['external', null, false],
		);
		for (const folder of ['index', 'parts'])
			assert.equal(
				existsSync(path.join(n8n!.memoryRoot, `knowledge_base/${EXTERNAL.id}/${folder}`)),
				false,
				`nothing in the embedded index (${folder})`,
			);
	});

	it('examples/memory-base.json: chat, capture past the threshold, and the agent’s long-term memory tool', async () => {
		const webhookId = EXAMPLE.nodes.find(
			(n: Json) => n.type === '@n8n/n8n-nodes-langchain.chatTrigger',
		).webhookId;
		const wf = { webhookId };
		const facts = [
			'My sister lives in Porto',
			'I am allergic to peanuts',
			'My car is blue',
			'I was born in May',
		];
		let last;
		for (const f of facts) last = await turn(wf, 'ex-1', f);
		assert.deepEqual([last!.json.memoryBase.ingested, last!.json.memoryBase.pending], [4, 0]);
		const r = await turn(
			wf,
			'ex-1',
			'what about food? [[fake:tool=Long-term memory:{"query":"allergic peanuts"}]]',
		);
		assert.match(r.shown ?? '', /with tool results \[/);
		assert.match(r.shown ?? '', /I am allergic to peanuts/);
		assert.ok(
			existsSync(path.join(n8n!.memoryRoot, `memory_base/${EXAMPLE.id}/sessions/ex-1/log.json`)),
		);
	});

	it('Delete Memory Base deletes everything of the base', async () => {
		const deleted = await op('delete');
		assert.ok(deleted[0].deleted > 10, JSON.stringify(deleted));
		// The base is gone: its Status is an error naming the bases left, not an empty base.
		const before = failures(MAIN.id);
		const refused = await post('e2e-mb-status', {});
		assert.equal(refused.status, 500);
		const error = String((await lastFailure(MAIN.id, before)).errorMessage);
		assert.match(
			error,
			new RegExp(`^No Memory Base named "${MAIN.id}" \\(bases in this storage: `),
		);
		assert.doesNotMatch(error.replace(/^No Memory Base named "[^"]+"/, ''), new RegExp(MAIN.id));
		const left = await disk().list(`memory_base/${MAIN.id}/`);
		assert.deepEqual(left, []);
		assert.deepEqual(await disk().list(`knowledge_base/${MAIN.id}/`), []);
	});

	it('the n8n log shows no unknown node types', () => {
		assert.doesNotMatch(n8n!.log(), /Unrecognized node type/);
	});
});
