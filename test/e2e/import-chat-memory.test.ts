/**
 * Import From Chat Memory on a real n8n (N8N_VERSION: 2.8.4 on Node 20 or 2.40.7 on Node 24), from real
 * chat memories filled by n8n's own AI Agent: Postgres Chat Memory on Debian's PostgreSQL and Redis Chat
 * Memory on Debian's redis-server (private instances, scripts/services.sh). The agent chats a few turns,
 * one with a Calculator call; then the LLM Memory Manager, with n8n's own memory node on its Chat Memory
 * input, imports the sessions (one Webhook item per session, through n8n's Split Out); a re-run imports
 * nothing twice and writes nothing; turns the agent adds later are imported alone; and our LLM with
 * Memory (Postgres sessions) and n8n's AI Agent with our LLM Memory Store (Redis sessions) send the
 * imported history, tool call and result included, to the model.
 *
 * The only stand-in is the model: n8n's OpenAI Chat Model nodes talk to the local fake OpenAI server
 * (demo/model-server.ts), which answers deterministically (a tool call for `[[fake:tool=…]]`, else a
 * reply naming what it saw) and logs every request, from which the history sent is asserted.
 * Ports: E2E_N8N_PORT (n8n, broker +1), E2E_FAKE_LLM_PORT (the fake model); PostgreSQL and Redis free ones.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ConversationMemory, LocalDiskStorage } from '../../src/internal';
import { contentText, startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi } from '../../demo/model-server';
import { LLM_MEMORY_MANAGER_TYPE, WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import {
	POSTGRES_CREDENTIAL,
	postgresCredential,
	REDIS_CREDENTIAL,
	redisCredential,
} from '../support/compare-workflows';
import { n8nAtLeast, packPackage } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import { ensureServices, pgUp, redisUp } from '../support/services';
import type { Postgres, Redis } from '../support/services';
import { openAiCredential } from '../support/workflows';

type Json = Record<string, any>;

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;
let pg: Postgres | undefined;
let redis: Redis | undefined;

// --- workflows -------------------------------------------------------------------------------------

const PG_AGENT = { id: 'e2eImportPgAgent', webhookId: 'e2e0c0de-0000-4000-8000-00000000f001' };
const REDIS_AGENT = { id: 'e2eImportRdAgent', webhookId: 'e2e0c0de-0000-4000-8000-00000000f002' };
/** Our side: LLM with Memory, and the imports (into this workflow, and into OUR_AGENT's). */
const OURS = { id: 'e2eImportOurs001', webhookId: 'e2e0c0de-0000-4000-8000-00000000f003' };
const OUR_AGENT = { id: 'e2eImportOurAgnt', webhookId: 'e2e0c0de-0000-4000-8000-00000000f004' };
/**
 * Postgres Chat Memory taking the session from the Chat Trigger on both sides, in the newest version n8n
 * has: 1.4 on n8n 2.40, which stores the session as "<session>__<memory node name>"; 1.3 on 2.8.4.
 */
const SCOPED_AGENT = { id: 'e2eImportScoped1', webhookId: 'e2e0c0de-0000-4000-8000-00000000f005' };
const SCOPED_IMPORT = { id: 'e2eImportScoped2' };
const SCOPED_VERSION = n8nAtLeast('2.40') ? 1.4 : 1.3;

const POSTGRES_MEMORY = '@n8n/n8n-nodes-langchain.memoryPostgresChat';
const REDIS_MEMORY = '@n8n/n8n-nodes-langchain.memoryRedisChat';

type Kind = 'postgres' | 'redis';

/** n8n's Postgres (1.3) or Redis (1.5) Chat Memory (versions both n8n versions have, unless told). */
function memoryNode(w: WorkflowBuilder, kind: Kind, parameters: Json, version?: number): string {
	return kind === 'postgres'
		? w.add({
				name: 'Postgres Chat Memory',
				type: POSTGRES_MEMORY,
				typeVersion: version ?? 1.3,
				parameters: { tableName: 'n8n_chat_histories', contextWindowLength: 5, ...parameters },
				credentials: { postgres: POSTGRES_CREDENTIAL },
			})
		: w.add({
				name: 'Redis Chat Memory',
				type: REDIS_MEMORY,
				typeVersion: 1.5,
				parameters: { sessionTTL: 0, contextWindowLength: 5, ...parameters },
				credentials: { redis: REDIS_CREDENTIAL },
			});
}

/** Chat Trigger → n8n's AI Agent with the Calculator and n8n's own memory (session from the trigger). */
function agentWorkflow(wf: typeof PG_AGENT, kind: Kind, version?: number): Json {
	const w = new WorkflowBuilder(wf.id, `AI Agent with n8n's ${kind} chat memory`);
	const agent = w.agent('Agent', `${kind} agent`);
	w.main(w.chatTrigger(wf.webhookId), agent);
	w.sub(w.calculator(), 'ai_tool', agent);
	w.sub(memoryNode(w, kind, { sessionIdType: 'fromInput' }, version), 'ai_memory', agent);
	return w.json();
}

/**
 * POST /webhook/e2e-import-<path> {sessions: [...]} → Split Out (one item per session) → Manager, with
 * n8n's memory node on its Chat Memory input. A failing item (a bad session ID) becomes an { error }
 * item; the other sessions are imported.
 */
function importBranch(
	w: WorkflowBuilder,
	path: string,
	source: { kind: Kind; memory: Json; version?: number },
	manager: Json = {},
) {
	const { kind } = source;
	const hook = w.add({
		name: `Import ${path}`,
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		webhookId: `${w.id}-import-${path}`,
		parameters: {
			httpMethod: 'POST',
			path: `e2e-import-${path}`,
			responseMode: 'lastNode',
			responseData: 'allEntries',
			options: {},
		},
	});
	const split = w.add({
		name: `Sessions ${path}`,
		type: 'n8n-nodes-base.splitOut',
		typeVersion: 1,
		parameters: {
			fieldToSplitOut: 'body.sessions',
			include: 'noOtherFields',
			options: { destinationFieldName: 'sessionId' },
		},
	});
	const importer = w.add({
		name: `Manager ${path}`,
		type: LLM_MEMORY_MANAGER_TYPE,
		typeVersion: 1.1,
		parameters: {
			resource: 'conversationMemory',
			operation: 'importFromChatMemory',
			sourceSessionId: '={{ $json.sessionId }}',
			...manager,
		},
	});
	w.main(hook, split).main(split, importer);
	w.sub(memoryNode(w, kind, source.memory, source.version), 'ai_memory', importer);
}

/** Sets every Manager of a workflow to On Error → Continue (Regular Output). */
function continuing(json: Json): Json {
	for (const node of json.nodes)
		if (node.type === LLM_MEMORY_MANAGER_TYPE) node.onError = 'continueRegularOutput';
	return json;
}

/** Chat → LLM with Memory (Conversation mode); the Postgres import into this workflow, the Redis one into OUR_AGENT's. */
function oursWorkflow(): Json {
	const w = new WorkflowBuilder(OURS.id, 'ours: LLM with Memory and the imports');
	w.main(
		w.chatTrigger(OURS.webhookId),
		w.llmWithMemory('LLM', 'e2e-import-llm', {
			memoryMode: 'conversation',
			systemMessage: 'our llm',
		}),
	);
	// Postgres: Define Below with the item's session; Redis: the session from the input item.
	const customKey = { sessionIdType: 'customKey', sessionKey: '={{ $json.sessionId }}' };
	importBranch(w, 'postgres', { kind: 'postgres', memory: customKey });
	importBranch(
		w,
		'redis',
		{ kind: 'redis', memory: { sessionIdType: 'fromInput' } },
		{ workflowId: OUR_AGENT.id },
	);
	return continuing(w.json());
}

/** The import from SCOPED_AGENT's memory, into OURS' workflow. */
function scopedImportWorkflow(): Json {
	const w = new WorkflowBuilder(SCOPED_IMPORT.id, 'import with the session from the input');
	const memory = { sessionIdType: 'fromInput' };
	importBranch(
		w,
		'scoped',
		{ kind: 'postgres', memory, version: SCOPED_VERSION },
		{ workflowId: OURS.id },
	);
	return continuing(w.json());
}

/** Chat → n8n's AI Agent with the Calculator and our LLM Memory Store (Conversation mode). */
function ourAgentWorkflow(): Json {
	const w = new WorkflowBuilder(OUR_AGENT.id, 'ours: AI Agent with the LLM Memory Store');
	const agent = w.agent('Agent', 'our agent');
	w.main(w.chatTrigger(OUR_AGENT.webhookId), agent);
	w.sub(w.calculator(), 'ai_tool', agent);
	w.sub(w.store('Memory', 'e2e-import-store', { memoryMode: 'conversation' }), 'ai_memory', agent);
	return w.json();
}

// --- helpers ---------------------------------------------------------------------------------------

const TOOL_Q = 'what is 6 times 7? [[fake:tool=Calculator:6*7]]';

async function turn(wf: { webhookId: string }, sessionId: string, chatInput: string) {
	const r = await sendChat(n8n!.chatUrl(wf.webhookId), { sessionId, chatInput });
	assert.equal(r.status, 200, r.body);
	return r.shown as string;
}

async function importSessions(path: string, sessions: string[]): Promise<Json[]> {
	const res = await fetch(`${n8n!.baseUrl}/webhook/e2e-import-${path}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ sessions }),
	});
	const text = await res.text();
	assert.equal(res.status, 200, text);
	const body = JSON.parse(text);
	return Array.isArray(body) ? body : [body];
}

const counts = (o: Json) => [o.conversationId, o.read, o.imported, o.alreadyThere, o.skipped];

/** Where the nodes keep memory by default: llm-memory in the n8n user folder. */
const folder = () => n8n!.memoryRoot;
const memory = (workflowId: string, session: string) =>
	new ConversationMemory(workflowId, session, {
		storage: new LocalDiskStorage({ root: folder() }),
	});
const documentBytes = (workflowId: string, session: string) =>
	readFileSync(path.join(folder(), 'conversation_memory', workflowId, `${session}.json`), 'utf8');

/** What n8n's chat memory holds for a session, as "role: text" (tool calls by name), oldest first. */
function pgRows(session: string): string[] {
	const out = pg!.psql(
		`SELECT message::text FROM n8n_chat_histories WHERE session_id = '${session}' ORDER BY id`,
	);
	return out
		.split('\n')
		.filter(Boolean)
		.map((row) => describeStored(JSON.parse(row)));
}
function redisRows(session: string): string[] {
	// RedisChatMessageHistory pushes each message at the head of the list: newest first.
	const out = redis!.cli(['--no-raw', 'LRANGE', session, '0', '-1']);
	const rows = out
		.split('\n')
		.filter(Boolean)
		.map((line) => JSON.parse(JSON.parse(line.replace(/^\d+\) /, ''))));
	return rows.reverse().map(describeStored);
}
const ROLES: Record<string, string> = { human: 'user', ai: 'assistant', tool: 'tool' };
/** A stored message: Redis keeps LangChain's `{ type, data }`, Postgres its fields flat beside `type`. */
function describeStored(m: Json): string {
	const data = m.data ?? m;
	const calls = (data.tool_calls ?? []).map((c: Json) => c.name);
	const role = ROLES[m.type] ?? m.type;
	return calls.length ? `${role} → ${calls.join(',')}` : `${role}: ${contentText(data.content)}`;
}

/** Our stored messages, compactly, with each tool result checked against the call before it. */
async function ours(workflowId: string, session: string): Promise<string[]> {
	const messages = await memory(workflowId, session).messages();
	return messages.map((m, i) => {
		if (m.tool_calls?.length) return `assistant → ${m.tool_calls.map((c) => c.name).join(',')}`;
		if (m.role === 'tool') {
			assert.equal(m.tool_call_id, messages[i - 1].tool_calls?.[0].id, 'result follows its call');
			return `tool: ${m.content}`;
		}
		return `${m.role}: ${m.content}`;
	});
}

/** The model calls whose system message is `tag`, each as "role: text" (tool calls by name), system dropped. */
function callsOf(tag: string): string[][] {
	return llm!
		.completions()
		.filter((r) => r.body?.messages?.[0]?.content === tag)
		.map((r) =>
			r.body.messages.slice(1).map((m: Json) => {
				if (m.tool_calls?.length)
					return `assistant → ${m.tool_calls.map((c: Json) => c.function.name).join(',')}`;
				return `${m.role}: ${contentText(m.content)}`;
			}),
		);
}

// --- tests -----------------------------------------------------------------------------------------

describe('Import From Chat Memory from n8n’s Postgres and Redis chat memories on a real n8n', () => {
	before(async () => {
		llm = await startFakeOpenAi(); // first, so after() closes it even when the rest fails
		ensureServices();
		pg = pgUp();
		redis = redisUp();
		n8n = await joinSharedN8n({
			tarball: await packPackage(),
			credentials: [openAiCredential(llm.url), postgresCredential(pg), redisCredential(redis)],
			workflows: [
				agentWorkflow(PG_AGENT, 'postgres'),
				agentWorkflow(REDIS_AGENT, 'redis'),
				oursWorkflow(),
				ourAgentWorkflow(),
				agentWorkflow(SCOPED_AGENT, 'postgres', SCOPED_VERSION),
				scopedImportWorkflow(),
			],
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
		redis?.stop();
		pg?.stop();
	});

	it('n8n’s AI Agent fills its Postgres and Redis chat memories, a Calculator turn included', async () => {
		await turn(PG_AGENT, 'pg-1', TOOL_Q);
		await turn(PG_AGENT, 'pg-1', 'thanks');
		await turn(PG_AGENT, 'pg-2', 'hello there');
		await turn(REDIS_AGENT, 'redis-1', TOOL_Q);
		await turn(REDIS_AGENT, 'redis-1', 'ok');
		for (const rows of [pgRows('pg-1'), redisRows('redis-1')]) {
			assert.equal(rows.length, 6, JSON.stringify(rows));
			assert.deepEqual(rows.slice(0, 2), [`user: ${TOOL_Q}`, 'assistant → Calculator']);
			assert.match(rows[2], /^tool: .*42/);
			assert.match(rows[3], /^assistant: FAKE-LLM reply to .* with tool results/);
			assert.match(rows[4], /^user: (thanks|ok)$/);
		}
		assert.equal(pgRows('pg-2').length, 2);
	});

	it('imports each session from Postgres Chat Memory: order, roles, tool call and result; counts per session', async () => {
		const out = await importSessions('postgres', ['pg-1', 'pg-2']);
		assert.deepEqual(out.map(counts), [
			['pg-1', 6, 6, 0, 0],
			['pg-2', 2, 2, 0, 0],
		]);
		assert.deepEqual(
			[out[0].workflowId, out[0].memoryMode, out[0].sourceNode, out[0].sourceSession],
			[OURS.id, 'conversation', 'Postgres Chat Memory', 'pg-1'],
		);
		assert.deepEqual(await ours(OURS.id, 'pg-1'), pgRows('pg-1'));
		assert.deepEqual(await ours(OURS.id, 'pg-2'), pgRows('pg-2'));
	});

	it('a re-run imports nothing twice and leaves storage as it was', async () => {
		const before = [documentBytes(OURS.id, 'pg-1'), documentBytes(OURS.id, 'pg-2')];
		const again = await importSessions('postgres', ['pg-1', 'pg-2']);
		assert.deepEqual(again.map(counts), [
			['pg-1', 6, 0, 6, 0],
			['pg-2', 2, 0, 2, 0],
		]);
		assert.deepEqual([documentBytes(OURS.id, 'pg-1'), documentBytes(OURS.id, 'pg-2')], before);
	});

	it('turns the agent adds after an import are imported alone by the next one', async () => {
		await turn(PG_AGENT, 'pg-1', 'one more');
		const [grown] = await importSessions('postgres', ['pg-1']);
		assert.deepEqual(counts(grown), ['pg-1', 8, 2, 6, 0]);
		assert.deepEqual(await ours(OURS.id, 'pg-1'), pgRows('pg-1'));
	});

	it('a bad session ID is refused for its item; the other sessions still run', async () => {
		const [bad, good] = await importSessions('postgres', ['bad/id', 'pg-2']);
		assert.match(String(bad.error), /Invalid conversation_id: "bad\/id" contains "\/"/);
		assert.deepEqual(counts(good), ['pg-2', 2, 0, 2, 0]);
	});

	it('LLM with Memory on an imported session sends its history to the model, tool call and result included', async () => {
		await turn(OURS, 'pg-1', 'what did I ask first?');
		assert.deepEqual(callsOf('our llm').at(-1), [...pgRows('pg-1'), 'user: what did I ask first?']);
	});

	it('Redis Chat Memory into another workflow’s memory; n8n’s AI Agent with our LLM Memory Store replays it', async () => {
		const [first] = await importSessions('redis', ['redis-1']);
		assert.deepEqual(counts(first), ['redis-1', 6, 6, 0, 0]);
		assert.deepEqual([first.workflowId, first.sourceSession], [OUR_AGENT.id, 'redis-1']);
		assert.deepEqual(await ours(OUR_AGENT.id, 'redis-1'), redisRows('redis-1'));
		const before = documentBytes(OUR_AGENT.id, 'redis-1');
		const [again] = await importSessions('redis', ['redis-1']);
		assert.deepEqual(counts(again), ['redis-1', 6, 0, 6, 0]);
		assert.equal(documentBytes(OUR_AGENT.id, 'redis-1'), before);
		await turn(OUR_AGENT, 'redis-1', 'and then?');
		assert.deepEqual(callsOf('our agent').at(-1), [...redisRows('redis-1'), 'user: and then?']);
	});

	it('the session from the input on both sides: n8n 2.40’s “<session>__<memory node name>” is imported under the session', async () => {
		await turn(SCOPED_AGENT, 'pg-s', 'hello from the trigger');
		const key = SCOPED_VERSION >= 1.4 ? 'pg-s__Postgres_Chat_Memory' : 'pg-s';
		assert.equal(pgRows(key).length, 2, `n8n stored the session as ${key}`);
		const [out] = await importSessions('scoped', ['pg-s']);
		assert.deepEqual([...counts(out), out.sourceSession], ['pg-s', 2, 2, 0, 0, key]);
		assert.deepEqual(await ours(OURS.id, 'pg-s'), pgRows(key));
	});
});
