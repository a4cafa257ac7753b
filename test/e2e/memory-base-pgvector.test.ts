/**
 * The Memory Base with a real vector database on a real n8n (N8N_VERSION): n8n's own Postgres PGVector
 * Store node, connected to the Memory Base's Vector Store input and to the LLM Memory Manager's Forget
 * User, against Debian's PostgreSQL with pgvector built from Debian's source package
 * (scripts/pgvector.sh), a private cluster on a free loopback port (scripts/services.sh). n8n's Chat
 * Trigger, Embeddings OpenAI, OpenAI Chat Model and Webhook nodes drive it; what lands in the table is
 * read back in SQL. The only stand-in is the fake OpenAI server (demo/model-server.ts), which answers
 * /v1/embeddings deterministically (hashed word features, 256 dimensions: texts sharing words are
 * similar), so the cosines pgvector computes can be checked against the ones the Memory Base reports.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { fakeEmbedding, startFakeOpenAi, contentText } from '../../demo/model-server';
import type { FakeOpenAi } from '../../demo/model-server';
import {
	CHAT_TRIGGER_NAME,
	LLM_MEMORY_MANAGER_TYPE,
	WorkflowBuilder,
} from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import { failedSince, failureCount } from '../support/n8n-executions';
import { packPackage } from '../support/n8n-harness';
import type { N8nInstance } from '../support/n8n-harness';
import { ensurePgvector, ensureServices, pgUp } from '../support/services';
import type { Postgres } from '../support/services';
import { joinSharedN8n } from '../support/shared-n8n';
import { postWebhook } from '../support/webhooks';
import type { WebhookReply } from '../support/webhooks';
import { openAiCredential } from '../support/workflows';

type Json = Record<string, any>;

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;
let pg: Postgres | undefined;

const MB_TYPE = 'n8n-nodes-llm-memory.memoryBase';
const TABLE = 'mb_vectors';
const PG_CREDENTIAL = { id: 'e2ePgvector00001', name: 'e2e pgvector' };
const PG_NO_DELETE_CREDENTIAL = { id: 'e2ePgvectorNoDel', name: 'e2e pgvector without DELETE' };
const NO_DELETE_ROLE = 'mb_no_delete';

function pgCredential(ref: { id: string; name: string }, user: string): Json {
	return {
		...ref,
		type: 'postgres',
		data: {
			host: pg!.host,
			port: pg!.port,
			database: pg!.database,
			user,
			password: '',
			ssl: 'disable',
			maxConnections: 20,
			allowUnauthorizedCerts: false,
		},
	};
}

function pgvectorStore(w: WorkflowBuilder, name: string, credential: { id: string; name: string }) {
	return w.add({
		name,
		type: '@n8n/n8n-nodes-langchain.vectorStorePGVector',
		typeVersion: 1.3,
		parameters: { mode: 'retrieve', tableName: TABLE, options: {} },
		credentials: { postgres: credential },
	});
}

const FROM_BODY = {
	sessionScope: '={{ $json.body.scope || "all" }}',
	conversationIdType: 'customKey',
	conversationId: '={{ $json.body.sessionId }}',
	userId: '={{ $json.body.userId }}',
};

/**
 * Chat Trigger → Capture (the user's message, User ID from the chat's metadata, threshold 2) into the
 * PGVector store; webhooks for Search, Status, Sync Now, Regenerate, Forget Conversation (also through
 * a second PGVector node whose database role may not DELETE) and the Manager's Forget User.
 */
const BASE = { id: 'e2eMbPgvector001', webhookId: 'e2e0c0de-0000-4000-8000-0000000pgv01' };
function baseWorkflow(): Json {
	const w = new WorkflowBuilder(BASE.id, 'memory base: Postgres PGVector Store');
	const capture = w.add({
		name: 'Capture',
		type: MB_TYPE,
		typeVersion: 1,
		parameters: {
			operation: 'capture',
			captureMessages: 'output',
			outputField: 'chatInput',
			userId: '={{ ($json.metadata || {}).userId }}',
			threshold: 2,
		},
	});
	w.main(w.chatTrigger(BASE.webhookId), capture);
	const viaStore = [capture];
	const ops: Record<string, Json> = {
		search: {
			operation: 'search',
			query: '={{ $json.body.query }}',
			topK: '={{ $json.body.topK || 4 }}',
			searchMode: '={{ $json.body.mode || "hybrid" }}',
			...FROM_BODY,
		},
		status: { operation: 'status', ...FROM_BODY },
		sync: { operation: 'syncNow', ...FROM_BODY },
		regenerate: { operation: 'regenerate' },
		forget: { operation: 'forgetConversation', ...FROM_BODY },
	};
	for (const [name, parameters] of Object.entries(ops)) {
		const node = w.add({ name: `MB ${name}`, type: MB_TYPE, typeVersion: 1, parameters });
		w.main(w.webhookAll(`Webhook ${name}`, `e2e-mbpg-${name}`), node);
		viaStore.push(node);
	}
	const forgetUser = w.add({
		name: 'Forget User',
		type: LLM_MEMORY_MANAGER_TYPE,
		typeVersion: 1.1,
		parameters: {
			resource: 'conversationMemory',
			operation: 'forgetUser',
			forgetBy: 'user',
			forgetUserId: '={{ $json.body.userId }}',
		},
	});
	w.main(w.webhookAll('Webhook forget user', 'e2e-mbpg-forget-user'), forgetUser);
	const noDelete = w.add({
		name: 'MB forget (no DELETE)',
		type: MB_TYPE,
		typeVersion: 1,
		parameters: ops.forget,
	});
	w.main(w.webhookAll('Webhook forget no delete', 'e2e-mbpg-forget-nodelete'), noDelete);
	const embed = w.embeddings();
	const store = pgvectorStore(w, 'Postgres PGVector Store', PG_CREDENTIAL);
	const restricted = pgvectorStore(w, 'PGVector (no DELETE)', PG_NO_DELETE_CREDENTIAL);
	w.sub(embed, 'ai_embedding', ...viaStore, noDelete, store, restricted);
	w.sub(store, 'ai_vectorStore', ...viaStore, forgetUser);
	w.sub(restricted, 'ai_vectorStore', noDelete);
	return w.json();
}

/**
 * LLM with Memory with Long-Term Memory on the same base (its Memory Base ID), no Embedding input: it
 * has no Vector Store input either, so it recalls by words and captures; the Memory Base embeds.
 */
const LLM = { id: 'e2eMbPgvectorLlm', webhookId: 'e2e0c0de-0000-4000-8000-0000000pgv02' };
function llmWorkflow(): Json {
	const w = new WorkflowBuilder(LLM.id, 'memory base: LLM with Memory on the PGVector base');
	const node = w.llmWithMemory('LLM', 'pgvector-llm', {
		systemMessage: 'pgvector recall bot',
		longTermMemory: true,
		longTermUserId: `={{ ($('${CHAT_TRIGGER_NAME}').item.json.metadata || {}).userId }}`,
		longTermOptions: { baseId: BASE.id },
	});
	w.main(w.chatTrigger(LLM.webhookId), node);
	return w.json();
}

// --- helpers ---------------------------------------------------------------------------------------

const post = (pathName: string, body: Json): Promise<WebhookReply> =>
	postWebhook(n8n!.baseUrl, pathName, body);

async function op(name: string, body: Json = {}): Promise<any> {
	const r = await post(`e2e-mbpg-${name}`, body);
	assert.equal(r.status, 200, JSON.stringify(r.json));
	return r.json;
}

/** A request that must fail: its execution's error message. */
async function refused(name: string, body: Json): Promise<string> {
	const before = failureCount(n8n!, BASE.id);
	const r = await post(`e2e-mbpg-${name}`, body);
	assert.equal(r.status, 500, JSON.stringify(r.json));
	return String((await failedSince(n8n!, BASE.id, before)).errorMessage);
}

const search = async (body: Json): Promise<Json[]> => {
	const out = await op('search', body);
	return Array.isArray(out) ? out : [out].filter((o) => o && Object.keys(o).length);
};

const status = async (sessionId?: string): Promise<Json> =>
	(await op('status', sessionId ? { scope: 'session', sessionId } : {}))[0];

async function say(wf: { webhookId: string }, sessionId: string, userId: string, text: string) {
	const r = await sendChat(n8n!.chatUrl(wf.webhookId), {
		sessionId,
		chatInput: text,
		metadata: { userId },
	});
	assert.equal(r.status, 200, r.body);
	return r;
}

const sql = (query: string) => pg!.psql(query);
/** The base's rows: "session|user|text" per row, sorted. */
const rows = (where = 'TRUE') =>
	sql(
		`SELECT metadata->>'session_id', metadata->>'user_id', text FROM ${TABLE}
		 WHERE metadata->>'memory_base_id' = '${BASE.id}' AND (${where}) ORDER BY 1, 3`,
	)
		.split('\n')
		.filter(Boolean);
const rowCount = (where = 'TRUE') => rows(where).length;
const logFile = (sessionId: string) =>
	path.join(n8n!.memoryRoot, `memory_base/${BASE.id}/sessions/${sessionId}/log.json`);

const ALICE = ['My favourite colour is teal', 'I live in Lisbon near the river'];
const BOB = ['My favourite colour is orange', 'I work as a baker in Porto'];

// --- tests -----------------------------------------------------------------------------------------

describe('Memory Base with n8n’s Postgres PGVector Store on a real PostgreSQL with pgvector', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 }); // first, so after() closes it even when packing fails
		ensureServices();
		const pgvector = ensurePgvector();
		pg = pgUp({ database: 'vectors' });
		const tarball = await packPackage();
		n8n = await joinSharedN8n({
			tarball,
			credentials: [
				openAiCredential(llm.url),
				pgCredential(PG_CREDENTIAL, pg.user),
				pgCredential(PG_NO_DELETE_CREDENTIAL, NO_DELETE_ROLE),
			],
			workflows: [baseWorkflow(), llmWorkflow()],
		});
		process.stderr.write(`# ${pg.version()}, pgvector ${pgvector}\n`);
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
		pg?.stop();
	});

	it('capture and sync through the Chat Trigger: the rows land in the pgvector table, unit vectors of 256 dimensions', async () => {
		for (const [i, f] of ALICE.entries()) {
			const r = await say(BASE, 'alice', 'u-alice', f);
			assert.equal(r.json.memoryBase.ingested, i === 1 ? 2 : 0, JSON.stringify(r.json));
		}
		for (const f of BOB) await say(BASE, 'bob', 'u-bob', f);
		assert.equal(sql(`SELECT extversion FROM pg_extension WHERE extname = 'vector'`), '0.8.0');
		assert.deepEqual(rows(), [
			`alice|u-alice|${ALICE[1]}`,
			`alice|u-alice|${ALICE[0]}`,
			`bob|u-bob|${BOB[1]}`,
			`bob|u-bob|${BOB[0]}`,
		]);
		// The chunk ID is the row's primary key; every vector has 256 dimensions and unit length.
		assert.equal(
			sql(
				`SELECT count(*) FROM ${TABLE} WHERE id::text = metadata->>'chunk_id'
				 AND vector_dims(embedding) = 256 AND abs(vector_norm(embedding) - 1) < 1e-6`,
			),
			'4',
		);
		const st = await status();
		assert.deepEqual(
			[st.vectorStore, st.index, st.mismatch, st.dimensions],
			['external', null, false, 256],
		);
		assert.ok(st.sessions.every((s: Json) => s.cursor === 2 && s.pending === 0));
	});

	it('search per user and per conversation, hybrid with the word index; similarities are pgvector’s cosines', async () => {
		const query = 'what is my favourite colour?';
		const bobs = await search({ query, scope: 'user', userId: 'u-bob', mode: 'vector' });
		assert.equal(bobs.length, 2);
		assert.ok(bobs.every((m) => m.userId === 'u-bob' && m.sessionId === 'bob'));
		assert.equal(bobs[0].text, BOB[0]);
		// Nearest first, and each similarity is 1 − pgvector's cosine distance to the query.
		const q = `[${fakeEmbedding(query).join(',')}]`;
		for (const m of bobs) {
			const cosine = Number(
				sql(
					`SELECT 1 - (embedding <=> '${q}') FROM ${TABLE} WHERE text = '${m.text.replace(/'/g, "''")}'`,
				),
			);
			assert.ok(Math.abs(cosine - m.similarity) < 1e-5, `${m.text}: ${m.similarity} vs ${cosine}`);
		}
		assert.ok(bobs[0].similarity > bobs[1].similarity);
		const hybrid = await search({ query, scope: 'user', userId: 'u-alice' });
		assert.equal(hybrid[0].text, ALICE[0]);
		assert.ok(hybrid.every((m) => m.userId === 'u-alice'));
		assert.ok(hybrid[0].lexicalRank && hybrid[0].vectorRank, JSON.stringify(hybrid[0]));
		// Each match says how this search weighed the words and the store's vectors.
		assert.equal(hybrid[0].search.mode, 'hybrid');
		const { words, vectors } = hybrid[0].search.weights;
		assert.ok(Math.abs(words + vectors - 1) < 1e-9, JSON.stringify(hybrid[0].search));
		const mine = await search({ query: 'where do I live?', scope: 'session', sessionId: 'alice' });
		assert.equal(mine[0].text, ALICE[1]);
		const all = await search({ query, scope: 'all', topK: 2 });
		assert.deepEqual(all.map((m) => m.sessionId).sort(), ['alice', 'bob']);
	});

	it('rows deleted in SQL behind the base’s back: Status reports the mismatch, the search refuses, Regenerate restores the same rows', async () => {
		const before = sql(`SELECT id FROM ${TABLE} ORDER BY id`);
		sql(`DELETE FROM ${TABLE} WHERE metadata->>'session_id' = 'alice'`);
		const st = await status();
		assert.equal(st.mismatch, true);
		assert.match(st.mismatchReason, /"alice"/);
		assert.deepEqual(st.sessions.map((s: Json) => [s.sessionId, s.mismatch]).sort(), [
			['alice', true],
			['bob', false],
		]);
		assert.match(
			await refused('search', { query: 'colour', scope: 'session', sessionId: 'alice' }),
			/connected vector store holds none of them.*Run Regenerate/,
		);
		// The whole base gone from the table: the base-wide probe says so.
		sql(`DELETE FROM ${TABLE}`);
		assert.match((await status()).mismatchReason, /the vector store holds none of this base/);
		const regenerated = await op('regenerate');
		assert.equal(regenerated[0].messages, 4, JSON.stringify(regenerated));
		assert.equal(sql(`SELECT id FROM ${TABLE} ORDER BY id`), before, 'the same chunk IDs');
		assert.equal((await status()).mismatch, false);
		assert.equal(
			(await search({ query: 'colour', scope: 'session', sessionId: 'alice' }))[0].text,
			ALICE[0],
		);
	});

	it('Forget Conversation: a role that may not DELETE is refused with the database’s reason and nothing goes; then the rows and the log go', async () => {
		sql(
			`CREATE ROLE ${NO_DELETE_ROLE} LOGIN;
			 GRANT USAGE, CREATE ON SCHEMA public TO ${NO_DELETE_ROLE};
			 GRANT SELECT, INSERT ON ${TABLE} TO ${NO_DELETE_ROLE};`,
		);
		const message = await refused('forget-nodelete', { sessionId: 'bob' });
		assert.match(message, /failed to delete: .*permission denied for table mb_vectors/);
		assert.equal(rowCount(`metadata->>'session_id' = 'bob'`), 2, 'the rows are kept');
		assert.ok(existsSync(logFile('bob')), 'the log that names them is kept');
		const forgot = await op('forget', { sessionId: 'bob' });
		assert.deepEqual([forgot[0].messages, forgot[0].vectors], [2, 2]);
		assert.equal(rowCount(`metadata->>'session_id' = 'bob'`), 0);
		assert.equal(rowCount(), 2, 'alice’s rows stay');
		assert.equal(existsSync(logFile('bob')), false);
	});

	it('Forget User (LLM Memory Manager with the PGVector store connected) deletes the user’s rows in every conversation', async () => {
		for (const session of ['carol-1', 'carol-2'])
			for (const f of [`Carol note one in ${session}`, `Carol note two in ${session}`])
				await say(BASE, session, 'u-carol', f);
		assert.equal(rowCount(`metadata->>'user_id' = 'u-carol'`), 4);
		const forgot = await op('forget-user', { userId: 'u-carol' });
		assert.deepEqual(forgot[0].conversationIds, ['carol-1', 'carol-2'], JSON.stringify(forgot));
		assert.equal(rowCount(`metadata->>'user_id' = 'u-carol'`), 0);
		assert.equal(rowCount(), 2, 'another user’s rows stay');
		assert.equal(existsSync(logFile('carol-1')), false);
	});

	it('LLM with Memory’s Long-Term Memory (no Vector Store input) recalls by words from the base; Sync Now embeds its captures into pgvector', async () => {
		await say(LLM, 'alice-llm', 'u-alice', 'Where do I live, again?');
		const call = llm!
			.completions()
			.filter((c) => contentText(c.body?.messages?.[0]?.content).includes('pgvector recall bot'))
			.at(-1)!;
		assert.match(contentText(call.body.messages[0].content), /I live in Lisbon near the river/);
		assert.equal(rowCount(`metadata->>'session_id' = 'alice-llm'`), 0, 'not embedded yet');
		const synced = await op('sync', {});
		assert.ok(synced[0].messages >= 2, JSON.stringify(synced));
		assert.equal(rowCount(`metadata->>'session_id' = 'alice-llm'`), 2);
		assert.equal((await status()).mismatch, false);
	});

	it('the n8n log shows no unknown node types', () => {
		assert.doesNotMatch(n8n!.log(), /Unrecognized node type/);
	});
});
