/**
 * n8n's queue mode, for real (N8N_VERSION; scripts/test.sh runs it for every version of the matrix):
 * PostgreSQL and Redis from Debian, Ceph radosgw, one n8n main and two `n8n worker`s, each with its own
 * user folder and the package installed there from its tarball (test/support/queue-cluster.ts). Chat
 * turns are POSTed to the main's Chat Trigger exactly as the chat widget sends them; Redis (Bull) hands
 * each execution to whichever worker takes it, so consecutive turns of one conversation run on
 * different workers and the store's compare-and-swap is all that keeps them consistent.
 *
 * The Memory Base's PGVector case adds a second PostgreSQL with pgvector (scripts/pgvector.sh), which n8n's
 * Postgres PGVector Store node on every worker writes to and searches.
 *
 * The one stand-in is the model: n8n's OpenAI Chat Model node talks to the local fake OpenAI-compatible
 * server of demo/model-server.ts (deterministic replies; `[[fake:delay=MS]]` holds a call in flight; its
 * /v1/embeddings answers hashed word features, deterministically).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { contentText, startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi, LoggedRequest } from '../../demo/model-server';
import { ConversationMemory, LocalDiskStorage, MemoryBase, NodeMemory } from '../../src/internal';
import type { MemoryStorage, S3Storage } from '../../src/internal';
import { WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import type { ChatReply } from '../support/chat';
import { N8N_VERSION, packPackage } from '../support/n8n-harness';
import { startQueueCluster } from '../support/queue-cluster';
import type { QueueCluster } from '../support/queue-cluster';
import { RGW_CREDENTIALS, rgwStorage } from '../support/rgw';
import { ensurePgvector, pgUp } from '../support/services';
import type { Postgres } from '../support/services';
import { postgresCredential } from '../support/compare-workflows';
import {
	chatWorkflow,
	downstreamParameters,
	OPENAI_CREDENTIAL,
	openAiCredential,
	S3_CREDENTIAL,
	s3Credential,
} from '../support/workflows';

const S3 = { llmMemoryS3Api: S3_CREDENTIAL };
const CONV = {
	id: 'qConversation001',
	webhookId: 'q0c0de00-0000-4000-8000-000000000001',
	node: 'q0000000-0000-4000-8000-000000000001',
};
const NODE = {
	id: 'qNodeMode000001',
	webhookId: 'q0c0de00-0000-4000-8000-000000000002',
	a: 'q0000000-0000-4000-8000-00000000000a',
	b: 'q0000000-0000-4000-8000-00000000000b',
};
const LOCAL = {
	id: 'qLocalDisk00001',
	webhookId: 'q0c0de00-0000-4000-8000-000000000003',
	node: 'q0000000-0000-4000-8000-000000000003',
};
const AGENT = {
	id: 'qAgentStore0001',
	webhookId: 'q0c0de00-0000-4000-8000-000000000004',
	store: 'q-agent-store',
};

const RECALL = { id: 'qRecallBase0001', webhookId: 'q0c0de00-0000-4000-8000-000000000005' };
const PGV = { id: 'qPgvectorBase01', webhookId: 'q0c0de00-0000-4000-8000-000000000006' };
const PGV_TABLE = 'q_mb_vectors';
const PGV_CREDENTIAL = { id: 'qPgvectorCred01', name: 'queue pgvector' };
let vectors: Postgres | undefined;

let cluster: QueueCluster | undefined;
let llm: FakeOpenAi | undefined;
let s3: S3Storage;
const sharedFolder = mkdtempSync(path.join(tmpdir(), 'llm-memory-shared-'));

const chat = (
	wf: { webhookId: string },
	sessionId: string,
	chatInput: string,
	timeoutMs?: number,
) => sendChat(cluster!.main.chatUrl(wf.webhookId), { sessionId, chatInput }, timeoutMs);

/** The user texts a model call was sent (system messages left out), in order. */
const userTexts = (r: LoggedRequest) =>
	(r.body.messages as Array<{ role: string; content: unknown }>)
		.filter((m) => m.role === 'user')
		.map((m) => contentText(m.content));

/** Stored messages of a memory, as "role: text". Reading it also proves the document is readable. */
async function stored(memory: ConversationMemory | NodeMemory): Promise<string[]> {
	return (await memory.messages()).map((m) => `${m.role}: ${m.content}`);
}
const conversation = (storage: MemoryStorage, appId: string, session: string) =>
	new ConversationMemory(appId, session, { storage });

/** Polls until every execution of the workflow is attributed to a worker (event logs are written async). */
async function workersOf(workflowId: string, expected: number): Promise<number[]> {
	for (const end = Date.now() + 20_000; ;) {
		const ids = cluster!.executions(workflowId).map((e) => e.id);
		const byExecution = cluster!.executionWorkers();
		if (ids.length >= expected && ids.every((id) => byExecution.has(id)))
			return ids.map((id) => byExecution.get(id)!);
		if (Date.now() > end)
			throw new Error(
				`executions of ${workflowId}: ${ids.length} of ${expected}, attributed ${ids.filter((id) => byExecution.has(id)).length}`,
			);
		await new Promise((r) => setTimeout(r, 200));
	}
}

/** The latest logged failure of a workflow in any process (error message and node), for a failed request. */
async function workerFailure(workflowId: string): Promise<string> {
	await new Promise((r) => setTimeout(r, 1000)); // event logs are written async
	const failed = [cluster!.main, ...cluster!.workers]
		.flatMap((w) => w.events())
		.filter((e) => e.eventName === 'n8n.workflow.failed' && e.payload?.workflowId === workflowId);
	const last = failed.at(-1)?.payload;
	return last
		? `${last.lastNodeExecuted}: ${last.errorMessage}`
		: `(no failure logged; executions ${JSON.stringify(cluster!.executions(workflowId))})`;
}

/** Sends turns of one session one after another until both workers have run one (at most `max`). */
async function turnsOnBothWorkers(
	wf: { id: string; webhookId: string },
	session: string,
	text: (i: number) => string,
	max = 16,
): Promise<{ replies: ChatReply[]; workers: number[] }> {
	const replies: ChatReply[] = [];
	let workers: number[] = [];
	for (let i = 0; i < max; i++) {
		const reply = await chat(wf, session, text(i));
		assert.equal(reply.status, 200, reply.body);
		replies.push(reply);
		workers = await workersOf(wf.id, replies.length);
		if (replies.length >= 4 && new Set(workers).size === 2) break;
	}
	return { replies, workers };
}

function agentWorkflow() {
	const w = new WorkflowBuilder(AGENT.id, 'queue: agent with the LLM Memory Store on S3');
	const agent = w.agent('Agent', 'agent in queue mode');
	w.main(w.chatTrigger(AGENT.webhookId), agent);
	w.sub(
		w.store('Memory', AGENT.store, { memoryMode: 'conversation', storage: 's3' }, S3),
		'ai_memory',
		agent,
	);
	return w.json();
}

/**
 * LLM with Memory with Long-Term Memory on S3 and an Embeddings OpenAI node (the fake server answers
 * /v1/embeddings deterministically): every turn is captured into the Memory Base; past its threshold a
 * capture syncs (embeds) the conversation; the user comes from the chat's metadata.
 */
function recallWorkflow() {
	const w = new WorkflowBuilder(RECALL.id, 'queue: long-term memory on S3');
	const llmNode = w.llmWithMemory(
		'LLM',
		'q0000000-0000-4000-8000-000000000005',
		{
			memoryMode: 'conversation',
			storage: 's3',
			systemMessage: 'recall in queue mode',
			longTermMemory: true,
			longTermUserId: "={{ ($('When chat message received').item.json.metadata || {}).userId }}",
			longTermOptions: { topK: 20, tokenBudget: 2000 },
		},
		S3,
	);
	w.main(w.chatTrigger(RECALL.webhookId), llmNode);
	const embeddings = w.add({
		name: 'Embeddings',
		type: '@n8n/n8n-nodes-langchain.embeddingsOpenAi',
		typeVersion: 1.2,
		parameters: { model: 'text-embedding-3-small', options: {} },
		credentials: { openAiApi: OPENAI_CREDENTIAL },
	});
	const json = w.json();
	json.connections[embeddings] = {
		ai_embedding: [[{ node: llmNode, type: 'ai_embedding', index: 0 }]],
	};
	return json;
}

/** n8n's Embeddings OpenAI node (the fake server's embeddings). */
function embeddingsNode(w: WorkflowBuilder): string {
	return w.add({
		name: 'Embeddings',
		type: '@n8n/n8n-nodes-langchain.embeddingsOpenAi',
		typeVersion: 1.2,
		parameters: { model: 'text-embedding-3-small', options: {} },
		credentials: { openAiApi: OPENAI_CREDENTIAL },
	});
}

/**
 * Chat Trigger → Memory Base Capture (S3; the user's message; User ID from the chat's metadata;
 * threshold 2) into n8n's Postgres PGVector Store; a webhook searching the same base through it.
 */
function pgvectorWorkflow() {
	const w = new WorkflowBuilder(PGV.id, 'queue: memory base on S3 with a PGVector store');
	const mb = (name: string, parameters: Record<string, unknown>) =>
		w.add({
			name,
			type: 'n8n-nodes-llm-memory.memoryBase',
			typeVersion: 1,
			parameters: { storage: 's3', ...parameters },
			credentials: S3,
		});
	const capture = mb('Capture', {
		operation: 'capture',
		captureMessages: 'output',
		outputField: 'chatInput',
		userId: '={{ ($json.metadata || {}).userId }}',
		threshold: 2,
	});
	w.main(w.chatTrigger(PGV.webhookId), capture);
	const search = mb('Search', {
		operation: 'search',
		query: '={{ $json.body.query }}',
		topK: 3,
		sessionScope: 'session',
		conversationIdType: 'customKey',
		conversationId: '={{ $json.body.sessionId }}',
	});
	w.main(w.webhook('Webhook search', 'q-pgv-search'), search);
	const embeddings = embeddingsNode(w);
	const store = w.add({
		name: 'Postgres PGVector Store',
		type: '@n8n/n8n-nodes-langchain.vectorStorePGVector',
		typeVersion: 1.3,
		parameters: { mode: 'retrieve', tableName: PGV_TABLE, options: {} },
		credentials: { postgres: PGV_CREDENTIAL },
	});
	const json = w.json();
	const to = (type: string, ...nodes: string[]) => nodes.map((node) => ({ node, type, index: 0 }));
	json.connections[embeddings] = { ai_embedding: [to('ai_embedding', capture, search, store)] };
	json.connections[store] = { ai_vectorStore: [to('ai_vectorStore', capture, search)] };
	return json;
}

describe(`queue mode on n8n ${N8N_VERSION}: main + 2 workers, PostgreSQL, Redis, radosgw`, () => {
	before(async () => {
		const [tarball, fake, storage] = await Promise.all([
			packPackage(),
			startFakeOpenAi({ port: 0 }),
			rgwStorage({ prefix: 'n8n' }),
		]);
		llm = fake;
		s3 = storage;
		ensurePgvector();
		vectors = pgUp({ database: 'vectors' });
		cluster = await startQueueCluster({
			tarball,
			credentials: [
				openAiCredential(fake.url),
				s3Credential(s3.endpoint!, s3.bucket, RGW_CREDENTIALS),
				{ ...postgresCredential(vectors), ...PGV_CREDENTIAL },
			],
			workflows: [
				chatWorkflow({
					...CONV,
					name: 'queue: conversation memory on S3',
					llms: [
						{
							name: 'LLM',
							id: CONV.node,
							parameters: { memoryMode: 'conversation', storage: 's3', systemMessage: 'conv' },
							credentials: S3,
						},
					],
				}),
				chatWorkflow({
					...NODE,
					name: 'queue: node memory on S3, two nodes',
					llms: [
						{
							name: 'A',
							id: NODE.a,
							parameters: { memoryMode: 'node', storage: 's3', systemMessage: 'node A' },
							credentials: S3,
						},
						{
							name: 'B',
							id: NODE.b,
							parameters: downstreamParameters({
								memoryMode: 'node',
								storage: 's3',
								systemMessage: 'node B',
							}),
							credentials: S3,
						},
					],
				}),
				chatWorkflow({
					...LOCAL,
					name: 'queue: local disk, one folder shared by all processes',
					llms: [
						{
							name: 'LLM',
							id: LOCAL.node,
							parameters: {
								memoryMode: 'conversation',
								storage: 'localDisk',
								localFolder: sharedFolder,
								systemMessage: 'local',
							},
						},
					],
				}),
				agentWorkflow(),
				recallWorkflow(),
				pgvectorWorkflow(),
			],
		});
	});

	after(async () => {
		await cluster?.stop();
		await llm?.close();
		vectors?.stop();
	});

	it('both workers run turns of one session; each turn sees the whole history (conversation mode)', async (t) => {
		const { replies, workers } = await turnsOnBothWorkers(CONV, 'alt', (i) => `conv turn ${i}`);
		t.diagnostic(`workers per turn: ${workers.join(' ')}`);
		assert.deepEqual(new Set(workers), new Set([0, 1]), 'every turn ran on the same worker');
		const calls = llm!.completions().filter((r) => r.body.messages[0]?.content === 'conv');
		assert.equal(calls.length, replies.length);
		calls.forEach((call, i) =>
			assert.deepEqual(
				userTexts(call),
				Array.from({ length: i + 1 }, (_, k) => `conv turn ${k}`),
				`turn ${i} did not see the turns before it`,
			),
		);
		const messages = await stored(conversation(s3, CONV.id, 'alt'));
		assert.equal(messages.length, 2 * replies.length);
	});

	it('node mode: each node keeps its own history across workers', async (t) => {
		const { replies, workers } = await turnsOnBothWorkers(NODE, 'alt', (i) => `node turn ${i}`);
		t.diagnostic(`workers per turn: ${workers.join(' ')}`);
		assert.deepEqual(new Set(workers), new Set([0, 1]));
		for (const [tag, prefix] of [
			['node A', ''],
			['node B', 'B: '],
		]) {
			const calls = llm!.completions().filter((r) => r.body.messages[0]?.content === tag);
			assert.equal(calls.length, replies.length);
			calls.forEach((call, i) =>
				assert.deepEqual(
					userTexts(call),
					Array.from({ length: i + 1 }, (_, k) => `${prefix}node turn ${k}`),
				),
			);
		}
		const a = new NodeMemory(NODE.id, 'alt', NODE.a, { storage: s3 });
		assert.equal((await stored(a)).length, 2 * replies.length);
	});

	it('8 sessions × 10 turns at concurrency 8 (turns of one session may overlap): exactly 10 turns each, each once', async (t) => {
		const jobs: Array<{ session: string; text: string }> = [];
		for (let turn = 0; turn < 10; turn++)
			for (let s = 0; s < 8; s++) jobs.push({ session: `c8-${s}`, text: `c8-${s} turn ${turn}` });
		// A fixed shuffle: neighbours in the queue are often turns of one session, so they overlap.
		for (let i = jobs.length - 1, seed = 7; i > 0; i--) {
			seed = (seed * 1103515245 + 12345) % 2 ** 31;
			const j = seed % (i + 1);
			[jobs[i], jobs[j]] = [jobs[j], jobs[i]];
		}
		const started = performance.now();
		let next = 0;
		const failures: string[] = [];
		// A request n8n's main did not answer within 2 minutes (seen once, on a heavily loaded machine,
		// before this check existed; cause not established). Tolerated only when n8n recorded every
		// execution as a success; the memory checks below still demand each turn exactly once.
		const unanswered: string[] = [];
		let slowest = 0;
		await Promise.all(
			Array.from({ length: 8 }, async () => {
				while (next < jobs.length) {
					const job = jobs[next++];
					const reply = await chat(CONV, job.session, job.text, 120_000).catch((e: Error) => ({
						status: 0,
						body: `${e.name}: ${e.message}`,
					}));
					if (reply.status === 0) unanswered.push(`${job.text}: ${reply.body}`);
					else if (reply.status !== 200)
						failures.push(`${job.text}: ${reply.status} ${reply.body}`);
					if ('ms' in reply) slowest = Math.max(slowest, reply.ms);
				}
			}),
		);
		const seconds = (performance.now() - started) / 1000;
		t.diagnostic(
			`80 turns in ${seconds.toFixed(1)} s (${(80 / seconds).toFixed(1)} turns/s), slowest ${Math.round(slowest)} ms`,
		);
		const statuses = cluster!.executions(CONV.id).map((e) => e.status);
		t.diagnostic(
			`execution statuses: ${JSON.stringify(statuses.reduce((a: Record<string, number>, s) => ({ ...a, [s]: (a[s] ?? 0) + 1 }), {}))}`,
		);
		assert.deepEqual(failures, []);
		if (unanswered.length) {
			t.diagnostic(`unanswered by n8n's main: ${unanswered.join('; ')}`);
			assert.ok(
				statuses.every((s) => s === 'success'),
				`unanswered turns, and not every execution succeeded: ${unanswered.join('; ')}`,
			);
		}
		for (let s = 0; s < 8; s++) {
			const messages = await stored(conversation(s3, CONV.id, `c8-${s}`));
			const users = messages.filter((m) => m.startsWith('user: ')).sort();
			const expected = Array.from({ length: 10 }, (_, k) => `user: c8-${s} turn ${k}`).sort();
			assert.deepEqual(users, expected, `session c8-${s}`);
			assert.equal(messages.length, 20);
		}
		const workers = await workersOf(CONV.id, cluster!.executions(CONV.id).length);
		t.diagnostic(
			`executions per worker: ${[0, 1].map((w) => workers.filter((x) => x === w).length).join(' / ')}`,
		);
	});

	it('Local Disk: the panel warns in queue mode; one folder shared by every process works (the lock)', async (t) => {
		// What the editor shows comes from the node types n8n's main wrote at boot for its frontend.
		const types = JSON.parse(
			readFileSync(
				path.join(cluster!.main.userFolder, '.cache/n8n/public/types/nodes.json'),
				'utf8',
			),
		) as Array<{
			name: string;
			properties: Array<{ name: string; displayName: string; displayOptions?: any }>;
		}>;
		for (const name of [
			'n8n-nodes-llm-memory.llmWithMemory',
			'n8n-nodes-llm-memory.llmMemoryStore',
		]) {
			const notice = types
				.find((n) => n.name === name)
				?.properties.find((p) => p.name === 'queueModeNotice');
			assert.ok(notice, `${name} has no queue-mode notice`);
			assert.match(notice.displayName, /queue mode/);
			assert.deepEqual(notice.displayOptions?.show?.storage, ['localDisk']);
		}

		const { replies, workers } = await turnsOnBothWorkers(LOCAL, 'disk', (i) => `disk turn ${i}`);
		t.diagnostic(`workers per turn: ${workers.join(' ')}`);
		assert.deepEqual(new Set(workers), new Set([0, 1]));
		const calls = llm!.completions().filter((r) => r.body.messages[0]?.content === 'local');
		calls.forEach((call, i) =>
			assert.deepEqual(
				userTexts(call),
				Array.from({ length: i + 1 }, (_, k) => `disk turn ${k}`),
			),
		);
		const disk = new LocalDiskStorage({ root: sharedFolder });
		assert.equal((await stored(conversation(disk, LOCAL.id, 'disk'))).length, 2 * replies.length);
		// Nothing went to the workers' own default folders.
		for (const w of cluster!.workers)
			assert.throws(() => readdirSync(path.join(w.userFolder, '.n8n/llm-memory')), /ENOENT/);
	});

	it('the AI Agent with the LLM Memory Store: turns on both workers share one history', async (t) => {
		const { replies, workers } = await turnsOnBothWorkers(AGENT, 'agent', (i) => `agent turn ${i}`);
		t.diagnostic(`workers per turn: ${workers.join(' ')}`);
		assert.deepEqual(new Set(workers), new Set([0, 1]));
		const calls = llm!
			.completions()
			.filter((r) => String(r.body.messages[0]?.content).includes('agent in queue mode'));
		calls.forEach((call, i) =>
			assert.deepEqual(
				userTexts(call),
				Array.from({ length: i + 1 }, (_, k) => `agent turn ${k}`),
			),
		);
		assert.equal((await stored(conversation(s3, AGENT.id, 'agent'))).length, 2 * replies.length);
	});

	it('Long-Term Memory: captures from both workers, one sync at a time, and recall on either worker sees both', async (t) => {
		const say = (session: string, text: string) =>
			sendChat(cluster!.main.chatUrl(RECALL.webhookId), {
				sessionId: session,
				chatInput: text,
				metadata: { userId: 'quinn' },
			});
		// Facts in several conversations of one user, until both workers captured some.
		const facts: string[] = [];
		let workers: number[] = [];
		// Two conversations of 5+ turns: 10 captured messages reach the default threshold and sync.
		for (let i = 0; i < 20 && !(facts.length >= 10 && new Set(workers).size === 2); i++) {
			const fact = `Quinn fact ${i}: the parcel code is Q${1000 + i}`;
			assert.equal((await say(`quinn-${i % 2}`, fact)).status, 200);
			facts.push(fact);
			workers = await workersOf(RECALL.id, facts.length);
		}
		t.diagnostic(`capture turns per worker: ${workers.join(' ')}`);
		assert.deepEqual(new Set(workers), new Set([0, 1]), 'both workers captured');
		// Recall from a new conversation, until both workers answered one: each sees every fact.
		const askers = new Set<number>();
		let asked = 0;
		for (let i = 0; i < 12 && askers.size < 2; i++) {
			asked++;
			const question = `Which parcel codes do I have? (ask ${i})`;
			assert.equal((await say(`quinn-new-${i}`, question)).status, 200);
			const all = await workersOf(RECALL.id, facts.length + i + 1);
			askers.add(all[all.length - 1]);
			const call = llm!
				.completions()
				.filter((r) => contentText(r.body.messages.at(-1)?.content) === question)
				.at(-1)!;
			const system = contentText(call.body.messages[0].content);
			for (const f of facts) assert.ok(system.includes(f), `recall on a worker missed "${f}"`);
		}
		assert.equal(askers.size, 2, 'recall ran on both workers');
		// Every turn captured once (both sides), every capture in the lexical index, and the syncs that
		// ran (one at a time per conversation) embedded each processed message once.
		const base = new MemoryBase({ storage: s3, baseId: RECALL.id });
		const status = await base.status();
		assert.equal(status.mismatch, false, status.mismatchReason ?? '');
		const captured = status.sessions.reduce((n, x) => n + x.captured, 0);
		assert.equal(captured, 2 * (facts.length + asked));
		assert.equal(status.lexical?.chunks, captured);
		const processed = status.sessions.reduce((n, x) => n + x.totalProcessed, 0);
		assert.ok(processed > 0, 'a capture reached the threshold and synced');
		assert.equal(status.index?.vectors, processed, 'each processed message embedded once');
	});

	it('Memory Base with n8n’s PGVector store: captures, syncs and searches from both workers through one pgvector; nothing lost or doubled', async (t) => {
		const sessions = ['pgv-0', 'pgv-1', 'pgv-2', 'pgv-3'];
		const fact = (s: string, turn: number) => `Parcel ${s} number ${turn} is code ${s}x${turn}`;
		const say = async (session: string, turn: number) => {
			const reply = await sendChat(cluster!.main.chatUrl(PGV.webhookId), {
				sessionId: session,
				chatInput: fact(session, turn),
				metadata: { userId: `user-${session}` },
			});
			assert.equal(reply.status, 200, `${reply.body} ${await workerFailure(PGV.id)}`);
			assert.equal(reply.json?.memoryBase?.syncError, undefined, reply.body);
		};
		// One turn first: n8n's PGVector node runs CREATE EXTENSION / CREATE TABLE IF NOT EXISTS each
		// time it starts, and PostgreSQL fails all but one of several such creates at the same moment
		// ("duplicate key value violates unique constraint"), so a new table is created by one run.
		await say(sessions[0], 0);
		// Then four conversations side by side, each one turn after another: the second and fourth
		// turn of each sync (threshold 2), on whichever worker runs it.
		await Promise.all(
			sessions.map(async (session) => {
				for (let turn = session === sessions[0] ? 1 : 0; turn < 4; turn++) await say(session, turn);
			}),
		);
		const captures = await workersOf(PGV.id, 16);
		t.diagnostic(
			`capture turns per worker: ${[0, 1].map((w) => captures.filter((x) => x === w).length).join(' / ')}`,
		);
		assert.deepEqual(new Set(captures), new Set([0, 1]), 'both workers captured and synced');
		const rows = vectors!
			.psql(
				`SELECT metadata->>'session_id', text, count(*) FROM ${PGV_TABLE}
				 WHERE metadata->>'memory_base_id' = '${PGV.id}' GROUP BY 1, 2 ORDER BY 1, 2`,
			)
			.split('\n')
			.filter(Boolean);
		const expected = sessions
			.flatMap((s) => [0, 1, 2, 3].map((i) => `${s}|${fact(s, i)}|1`))
			.sort();
		assert.deepEqual(rows, expected, 'every captured message once in pgvector');
		// Searches of every conversation until both workers ran some: each finds its own fact first.
		const searchers = new Set<number>();
		let searched = 0;
		for (let round = 0; round < 6 && (searched < 8 || searchers.size < 2); round++)
			for (const session of sessions) {
				const res = await fetch(`${cluster!.main.baseUrl}/webhook/q-pgv-search`, {
					method: 'POST',
					headers: { 'Content-Type': 'application/json' },
					body: JSON.stringify({ sessionId: session, query: `code ${session}x${round % 4}` }),
					signal: AbortSignal.timeout(60_000),
				});
				const hit = (await res.json()) as {
					text?: string;
					sessionId?: string;
					vectorRank?: number;
				};
				assert.equal(res.status, 200, JSON.stringify(hit));
				assert.equal(hit.text, fact(session, round % 4), JSON.stringify(hit));
				assert.equal(hit.sessionId, session);
				assert.ok(hit.vectorRank, 'ranked by pgvector too');
				searched++;
				const all = await workersOf(PGV.id, 16 + searched);
				searchers.add(all[all.length - 1]);
			}
		t.diagnostic(`searches: ${searched}, on workers ${[...searchers].join(' and ')}`);
		assert.equal(searchers.size, 2, 'searches ran on both workers');
	});

	it('a worker SIGKILLed mid-run loses no acknowledged turn; every document stays readable', async (t) => {
		const sessions = ['k0', 'k1', 'k2', 'k3'];
		const acked = new Map<string, string[]>(sessions.map((s) => [s, []]));
		const unacked: string[] = [];
		let killed = -1;
		const killer = (async () => {
			// Kill a worker while it has a model call in flight (each call is held 1.5 s).
			for (const end = Date.now() + 30_000; killed < 0 && Date.now() < end;) {
				await new Promise((r) => setTimeout(r, 300));
				const running = cluster!.executions(CONV.id).filter((e) => e.status === 'running');
				const byExecution = cluster!.executionWorkers();
				const busy = running.map((e) => byExecution.get(e.id)).find((w) => w !== undefined);
				if (busy !== undefined) {
					killed = busy;
					cluster!.workers[busy].kill();
				}
			}
		})();
		await Promise.all(
			sessions.map(async (session) => {
				for (let turn = 0; turn < 5; turn++) {
					const text = `${session} turn ${turn} [[fake:delay=1500]]`;
					// n8n fails a job whose worker died (Bull maxStalledCount 0) but never answers the
					// waiting chat request: the client gives up, and that turn is not acknowledged.
					const reply = await chat(CONV, session, text, 40_000).catch((e: Error) => ({
						status: 0,
						body: e.message,
					}));
					if (reply.status === 200) acked.get(session)!.push(`user: ${text}`);
					else unacked.push(text);
				}
			}),
		);
		await killer;
		t.diagnostic(`killed worker ${killed}; unacknowledged turns: ${unacked.length}`);
		assert.ok(killed >= 0, 'no worker was seen running a turn');
		assert.ok(unacked.length >= 1, 'the kill hit no turn in flight');
		for (const session of sessions) {
			const messages = await stored(conversation(s3, CONV.id, session)); // readable
			const users = messages.filter((m) => m.startsWith('user: '));
			for (const text of acked.get(session)!) assert.ok(users.includes(text), `lost: ${text}`);
			assert.equal(new Set(users).size, users.length, `a turn stored twice in ${session}`);
			// Turns are whole: every stored user message has its answer.
			assert.equal(messages.length, 2 * users.length);
		}
		// The surviving worker carries on, with the full history.
		for (const session of sessions) {
			const reply = await chat(CONV, session, `${session} after the kill`);
			assert.equal(reply.status, 200, reply.body);
			const users = (await stored(conversation(s3, CONV.id, session))).filter((m) =>
				m.startsWith('user: '),
			);
			const call = llm!
				.completions()
				.filter((r) => r.body.messages[0]?.content === 'conv')
				.filter((r) => userTexts(r).at(-1) === `${session} after the kill`)
				.at(-1)!;
			assert.deepEqual(
				userTexts(call).map((u) => `user: ${u}`),
				users,
			);
		}
	});

	it('the logs show no unknown node type and no leaked secret', () => {
		for (const log of [cluster!.main.log(), ...cluster!.workers.map((w) => w.log())]) {
			assert.doesNotMatch(log, /Unrecognized node type/);
			assert.ok(!log.includes(RGW_CREDENTIALS.secretAccessKey));
		}
	});
});
