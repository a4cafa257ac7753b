// The Memory Base node run in-process through n8n-core's real WorkflowExecute, with an embedding
// sub-node (and a vector store sub-node) connected: every operation, on local disk and on radosgw.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';

import type { INode, INodeParameters } from 'n8n-workflow';

import {
	DAY_MS,
	LexicalIndex,
	LocalDiskStorage,
	MemoryBase as Base,
	memoryBaseConfigKey,
	sessionPart,
	vectorPartFolder,
	vectorPartsPrefix,
} from '../../src/internal';
import type { S3Storage } from '../../src/internal';
import { TestEmbedder } from '../support/embeddings';
import { storageHolds } from '../support/forget-plant';
import { manage } from '../support/manager-runs';
import { ensureRgw, rgwCredentials, rgwStorage } from '../support/rgw';
import { tempDir } from '../support/storages';
import { storedConfig, whileBusy } from '../support/wide-base';
import {
	TEST_EMBEDDINGS_TYPE,
	TEST_TRIGGER_TYPE,
	TEST_VECTOR_STORE_TYPE,
	TestEmbeddings,
	testEmbeddings,
	TestVectorStoreNode,
	testVectorStores,
} from '../support/test-nodes';
import { runWorkflow } from '../support/workflow-harness';
import type { WorkflowJson, WorkflowRunResult } from '../support/workflow-harness';
import { expanded } from '../support/stored-segments';

// The node's source, by explicit path (an extensionless import would find the codex .node.json first).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { MemoryBase } = require(
	path.resolve(__dirname, '../../nodes/MemoryBase/MemoryBase.node.ts'),
) as typeof import('../../nodes/MemoryBase/MemoryBase.node');

const MB_TYPE = 'n8n-nodes-llm-memory.memoryBase';
const nodeTypes = {
	[MB_TYPE]: new MemoryBase(),
	[TEST_EMBEDDINGS_TYPE]: new TestEmbeddings(),
	[TEST_VECTOR_STORE_TYPE]: new TestVectorStoreNode(),
};

type Json = Record<string, any>;

/** Trigger → Memory Base (with its Embeddings sub-node, and optionally a vector store). */
function workflow(
	parameters: INodeParameters,
	opts: { vectorStore?: string; embeddings?: boolean; credentials?: INode['credentials'] } = {},
): WorkflowJson {
	const nodes: INode[] = [
		{
			id: 't',
			name: 'Trigger',
			type: TEST_TRIGGER_TYPE,
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
		{
			id: 'mb',
			name: 'Memory Base',
			type: MB_TYPE,
			typeVersion: 1,
			position: [200, 0],
			parameters,
			...(opts.credentials ? { credentials: opts.credentials } : {}),
		},
	];
	const connections: WorkflowJson['connections'] = {
		Trigger: { main: [[{ node: 'Memory Base', type: 'main', index: 0 }]] },
	};
	if (opts.embeddings !== false) {
		nodes.push({
			id: 'e',
			name: 'Embeddings',
			type: TEST_EMBEDDINGS_TYPE,
			typeVersion: 1,
			position: [200, 200],
			parameters: {},
		});
		connections.Embeddings = {
			ai_embedding: [[{ node: 'Memory Base', type: 'ai_embedding', index: 0 }]],
		};
	}
	if (opts.vectorStore) {
		nodes.push({
			id: 'v',
			name: 'Vector Store',
			type: TEST_VECTOR_STORE_TYPE,
			typeVersion: 1,
			position: [400, 200],
			parameters: { memoryKey: opts.vectorStore },
		});
		connections['Vector Store'] = {
			ai_vectorStore: [[{ node: 'Memory Base', type: 'ai_vectorStore', index: 0 }]],
		};
	}
	return { id: 'wf-mb', name: 'memory base test', nodes, connections };
}

let folder = tempDir('mb-workflow');
beforeEach(() => {
	folder = tempDir('mb-workflow');
	testEmbeddings.use(new TestEmbedder());
});

async function run(
	parameters: INodeParameters,
	items: Json[] = [{}],
	opts: Parameters<typeof workflow>[1] & {
		credentials?: INode['credentials'];
		secrets?: Json;
	} = {},
): Promise<WorkflowRunResult> {
	const { secrets, ...rest } = opts;
	return runWorkflow(workflow({ localFolder: folder, ...parameters }, rest), {
		nodeTypes,
		triggerItems: items.map((json) => ({ json })),
		...(secrets ? { credentials: secrets } : {}),
	});
}

const ok = (r: WorkflowRunResult) => {
	assert.equal(r.status, 'success', JSON.stringify(r.error?.message ?? r.error));
	return r.output('Memory Base').map((i) => i.json as Json);
};

/**
 * One chat turn: the Chat Trigger's item with the model's answer under "output", captured as outputs
 * only (Langflow's memory base: the counts below are of outputs; both sides are tested further down).
 */
const say = (sessionId: string, output: string, extra: INodeParameters = {}, opts = {}) =>
	run(
		{ operation: 'capture', threshold: 4, captureMessages: 'output', ...extra },
		[{ sessionId, chatInput: 'q', output }],
		opts,
	);

const FACTS = [
	'My favourite colour is teal',
	'I live in Lisbon near the river',
	'The project deadline is in March',
	'Please remind me about the dentist',
];

describe('Memory Base node (in-process n8n)', () => {
	it('Capture: three turns stay pending under threshold 4, the fourth ingests; items pass through', async () => {
		const outs = [];
		for (const f of FACTS) outs.push(ok(await say('s1', f))[0]);
		assert.deepEqual(
			outs.map((o) => [o.memoryBase.pending, o.memoryBase.processed, o.memoryBase.ingested]),
			[
				[1, 0, 0],
				[2, 0, 0],
				[3, 0, 0],
				[0, 4, 4],
			],
		);
		assert.equal(outs[3].output, FACTS[3], 'the chat still shows the answer');
		assert.equal(outs[3].memoryBase.sessionId, 's1');
		assert.equal(outs[3].memoryBase.baseId, 'wf-mb', 'one base per workflow by default');
	});

	it('Search finds an early fact; another conversation’s facts only with All Conversations', async () => {
		for (const f of FACTS) ok(await say('alice', f));
		for (const f of ['My favourite colour is orange', 'b', 'c', 'd']) ok(await say('bob', f));
		const mine = ok(
			await run({ operation: 'search', topK: 2 }, [
				{ sessionId: 'alice', chatInput: 'what is my favourite colour?' },
			]),
		);
		assert.equal(mine[0].text, FACTS[0]);
		assert.ok(mine.every((m) => m.sessionId === 'alice'));
		// Hybrid search (an embedding model is connected): each hit says where it ranked in both lists,
		// its cosine with the query and its BM25 beside the fused score, and how the search weighed
		// words and vectors (the same for every hit of the search).
		assert.deepEqual(Object.keys(mine[0]).sort(), [
			'capturedAt',
			'chunkIndex',
			'lexicalRank',
			'lexicalScore',
			'messageId',
			'role',
			'runId',
			'score',
			'search',
			'seq',
			'sessionId',
			'similarity',
			'text',
			'vectorRank',
		]);
		assert.ok(mine[0].similarity > 0 && mine[0].similarity <= 1 && mine[0].lexicalScore > 0);
		const { mode, weights, basis } = mine[0].search;
		assert.equal(mode, 'hybrid');
		assert.ok(Math.abs(weights.words + weights.vectors - 1) < 1e-9 && weights.vectors > 0);
		assert.match(basis, /words|vectors/);
		assert.deepEqual(mine[1].search, mine[0].search, 'one report per search');
		const words = ok(
			await run({ operation: 'search', topK: 1, searchMode: 'lexical' }, [
				{ sessionId: 'alice', chatInput: 'what is my favourite colour?' },
			]),
		);
		assert.deepEqual(words[0].search, { mode: 'lexical' }, 'Search Mode stays the override');
		const floor = ok(
			await run({ operation: 'search', topK: 10, minSimilarity: mine[0].similarity }, [
				{ sessionId: 'alice', chatInput: 'what is my favourite colour?' },
			]),
		);
		assert.ok(floor.length >= 1 && floor.every((m) => m.similarity >= mine[0].similarity));
		assert.match(mine[0].runId, /^test-exec-/, 'the run is the execution that captured it');
		const all = ok(
			await run({ operation: 'search', topK: 2, sessionScope: 'all' }, [
				{ chatInput: 'my favourite colour' },
			]),
		);
		assert.deepEqual(all.map((m) => m.sessionId).sort(), ['alice', 'bob']);
	});

	it('Search says why it found nothing: an unknown base is an error, an empty base or no match a hint', async () => {
		const hint = (r: WorkflowRunResult) => r.runData['Memory Base'][0].hints?.map((h) => h.message);
		for (const operation of ['search', 'status', 'listMessages']) {
			const unknown = await run({ operation, sessionScope: 'all' }, [{ chatInput: 'x' }]);
			assert.equal(unknown.status, 'error', operation);
			assert.equal(
				unknown.error?.message,
				'No Memory Base named "wf-mb" (bases in this storage: none yet)',
			);
		}
		ok(await run({ operation: 'updateSettings' }, [{}]));
		const empty = await run({ operation: 'search', sessionScope: 'all' }, [{ chatInput: 'x' }]);
		assert.deepEqual(ok(empty), []);
		assert.deepEqual(hint(empty), [
			'Nothing captured yet: memory base "wf-mb" is empty, so there is nothing to search.',
		]);
		ok(await say('alice', 'The boat is moored at pier nine'));
		const none = await run({ operation: 'search', sessionScope: 'all' }, [
			{ chatInput: 'quantum chromodynamics' },
		]);
		assert.deepEqual(ok(none), []);
		assert.deepEqual(hint(none), ['No memories matched.']);
	});

	it('List Captured Messages across all conversations, on purpose, a page at a time', async () => {
		ok(await say('alice', 'one'));
		ok(await say('bob', 'two'));
		ok(await say('carol', 'three'));
		const page = ok(
			await run({ operation: 'listMessages', sessionScope: 'all', returnAll: false, limit: 2 }, [
				{},
			]),
		);
		assert.deepEqual(
			page.map((m) => [m.session_id, m.text]),
			[
				['alice', 'one'],
				['bob', 'two'],
			],
		);
		// Not counted across every conversation: that would read every conversation's log.
		assert.deepEqual([page[0].total, page[0].nextOffset], [null, 2]);
		const next = ok(
			await run(
				{ operation: 'listMessages', sessionScope: 'all', limit: 2, options: { offset: 2 } },
				[{}],
			),
		);
		assert.deepEqual(
			next.map((m) => [m.session_id, m.text, m.nextOffset]),
			[['carol', 'three', null]],
		);
		const all = ok(
			await run({ operation: 'listMessages', sessionScope: 'all', returnAll: true }, [{}]),
		);
		assert.deepEqual(
			all.map((m) => m.session_id),
			['alice', 'bob', 'carol'],
		);
	});

	it('items of one execution and conversation are one stride; other conversations their own', async () => {
		const out = ok(
			await run({ operation: 'capture', threshold: 3 }, [
				{ sessionId: 'a', output: 'one' },
				{ sessionId: 'b', output: 'two' },
				{ sessionId: 'a', output: 'three' },
			]),
		);
		assert.deepEqual(
			out.map((o) => [o.memoryBase.sessionId, o.memoryBase.captured, o.memoryBase.pending]),
			[
				['a', 2, 2],
				['b', 1, 1],
				['a', 2, 2],
			],
		);
	});

	it('an embeddings failure mid-sync: cursor unchanged, nothing duplicated; the next Sync Now completes', async () => {
		for (const f of FACTS) ok(await say('s1', f, { autoCapture: false }));
		const embedder = testEmbeddings.current;
		embedder.failAt.add(1);
		const failed = await run({ operation: 'syncNow', options: { embeddingBatchSize: 2 } });
		assert.equal(failed.status, 'error');
		assert.match(failed.error?.message ?? '', /embedding call 1 failed/);
		const status = ok(await run({ operation: 'status' }))[0];
		assert.deepEqual([status.sessions[0].cursor, status.sessions[0].pending], [0, 4]);
		const synced = ok(await run({ operation: 'syncNow', options: { embeddingBatchSize: 2 } }))[0];
		assert.equal(synced.messages, 4);
		const after = ok(await run({ operation: 'status' }))[0];
		assert.deepEqual(
			[after.sessions[0].cursor, after.index.vectors, after.mismatch],
			[4, 4, false],
		);
	});

	it('two concurrent Sync Now: one runs, the other fails with "sync already running"', async () => {
		for (const f of FACTS) ok(await say('s1', f, { autoCapture: false }));
		const embedder = testEmbeddings.current;
		embedder.hold();
		const first = run({ operation: 'syncNow', sessionScope: 'session' }, [{ sessionId: 's1' }]);
		await embedder.held();
		const second = await run({ operation: 'syncNow', sessionScope: 'session' }, [
			{ sessionId: 's1' },
		]);
		embedder.release();
		assert.equal(second.status, 'error');
		assert.match(
			second.error?.message ?? '',
			/^Sync already running: sync of memory base "wf-mb" \(session "s1"\)/,
		);
		assert.match(String((second.error as Json)?.description), /HTTP 409/);
		assert.equal(ok(await first)[0].messages, 4);
	});

	it('index deleted behind the base’s back: Status reports the mismatch, Regenerate restores search', async () => {
		for (const f of FACTS) ok(await say('s1', f));
		rmSync(path.join(folder, vectorPartsPrefix('wf-mb')), { recursive: true }); // every partition
		const status = ok(await run({ operation: 'status' }))[0];
		assert.equal(status.mismatch, true);
		assert.equal(status.sessions[0].mismatch, true);
		// A search would answer from part of what was captured: it says so instead of returning too little.
		const refused = await run({ operation: 'search' }, [
			{ sessionId: 's1', chatInput: 'favourite colour' },
		]);
		assert.equal(refused.status, 'error');
		assert.match(refused.error?.message ?? '', /vector index is missing.*Run Regenerate/);
		const regenerated = ok(await run({ operation: 'regenerate' }))[0];
		assert.equal(regenerated.messages, 4);
		assert.equal(ok(await run({ operation: 'status' }))[0].mismatch, false);
		const hits = ok(
			await run({ operation: 'search', topK: 1 }, [
				{ sessionId: 's1', chatInput: 'favourite colour' },
			]),
		);
		assert.equal(hits[0].text, FACTS[0]);
	});

	it('Status of all conversations pages with Conversations per Page and After Conversation', async () => {
		for (const s of ['s1', 's2', 's3']) ok(await say(s, FACTS[0]));
		const first = ok(await run({ operation: 'status', statusLimit: 2 }))[0];
		assert.deepEqual(
			[first.sessions.map((s: { sessionId: string }) => s.sessionId), first.nextAfter],
			[['s1', 's2'], 's2'],
		);
		// The next page as a loop would ask for it: After Conversation from the output, by expression.
		const next = ok(
			await run({ operation: 'status', statusLimit: 2, statusAfter: '={{ $json.nextAfter }}' }, [
				first,
			]),
		)[0];
		assert.deepEqual(
			[next.sessions.map((s: { sessionId: string }) => s.sessionId), next.nextAfter],
			[['s3'], null],
		);
		assert.equal(next.wide?.chunks, first.wide?.chunks, 'the whole base’s index on each page');
		const bad = await run({ operation: 'status', statusAfter: 'a/b' });
		assert.equal(bad.status, 'error');
		assert.match(bad.error?.message ?? '', /After Conversation|after/);
		const tooMany = await run({ operation: 'status', statusLimit: 5000 });
		assert.equal(tooMany.status, 'error');
		assert.match(tooMany.error?.message ?? '', /1 to 1000/);
	});

	it('a threshold change while messages are pending takes effect at the next capture', async () => {
		for (const f of FACTS.slice(0, 3)) ok(await say('s1', f, { threshold: 10 }));
		// The workflow is edited to threshold 2: nothing happens until the next capture, which ingests all.
		const status = ok(await run({ operation: 'status' }))[0];
		assert.equal(status.sessions[0].pending, 3);
		const next = ok(await say('s1', FACTS[3], { threshold: 2 }))[0];
		assert.deepEqual(
			[next.memoryBase.ingested, next.memoryBase.pending, next.memoryBase.threshold],
			[4, 0, 2],
		);
	});

	it('with a connected vector store: ingests into it and searches it, nothing in the embedded index', async () => {
		testVectorStores.clear();
		for (const f of FACTS) ok(await say('s1', f, {}, { vectorStore: 'kb' }));
		assert.equal(testVectorStores.get('kb')?.memoryVectors.length, 4);
		const hits = ok(
			await run(
				{ operation: 'search', topK: 1 },
				[{ sessionId: 's1', chatInput: 'favourite colour' }],
				{ vectorStore: 'kb' },
			),
		);
		assert.equal(hits[0].text, FACTS[0]);
		const status = ok(await run({ operation: 'status' }, [{}], { vectorStore: 'kb' }))[0];
		assert.deepEqual(
			[status.vectorStore, status.index, status.mismatch],
			['external', null, false],
		);
		ok(await run({ operation: 'deleteBase' }, [{}], { vectorStore: 'kb' }));
		assert.equal(testVectorStores.get('kb')?.memoryVectors.length, 0);
	});

	it('Delete Memory Base removes everything; the next capture starts a new base', async () => {
		for (const f of FACTS) ok(await say('s1', f));
		const deleted = ok(await run({ operation: 'deleteBase' }))[0];
		assert.ok(deleted.deleted >= 6);
		const status = await run({ operation: 'status' });
		assert.match(String(status.error?.message), /^No Memory Base named "wf-mb"/, 'it is gone');
		assert.equal(ok(await say('s1', 'again'))[0].memoryBase.pending, 1);
	});

	it('Forget Conversation removes one conversation for good; the other stays searchable', async () => {
		for (const f of FACTS) ok(await say('alice', f));
		for (const f of FACTS) ok(await say('bob', `bob: ${f}`));
		const forgot = ok(
			await run({ operation: 'forgetConversation' }, [{ sessionId: 'alice' }], {
				embeddings: false,
			}),
		)[0];
		assert.deepEqual(
			[forgot.conversationId, forgot.messages, forgot.vectors],
			['alice', FACTS.length, FACTS.length],
		);
		const hits = ok(
			await run({ operation: 'search', sessionScope: 'all', topK: 20 }, [
				{ sessionId: 'x', chatInput: 'favourite colour' },
			]),
		);
		assert.ok(hits.length > 0 && hits.every((h) => String(h.text).startsWith('bob: ')));
		const status = ok(await run({ operation: 'status' }))[0];
		assert.deepEqual(
			status.sessions.map((x: Json) => x.sessionId),
			['bob'],
		);
		const anything = await run({ operation: 'forgetConversation' }, [{ output: 'x' }]);
		assert.match(anything.error?.message ?? '', /No session ID found/);
	});

	it('clear errors: no embedding connected for Sync Now, a missing output field, no conversation ID; continueOnFail', async () => {
		const noEmbedder = await run({ operation: 'syncNow' }, [{ sessionId: 's', chatInput: 'x' }], {
			embeddings: false,
		});
		assert.equal(noEmbedder.status, 'error');
		assert.match(noEmbedder.error?.message ?? '', /Embedding|embedding/);
		const noField = await run({ operation: 'capture' }, [{ sessionId: 's', text: 'x' }]);
		assert.match(noField.error?.message ?? '', /The item has no field "output" to capture/);
		const noSession = await run({ operation: 'capture' }, [{ output: 'x' }]);
		assert.match(noSession.error?.message ?? '', /No session ID found/);
		// Status needs no embedding model.
		ok(await run({ operation: 'updateSettings' }, [{}], { embeddings: false }));
		ok(await run({ operation: 'status' }, [{}], { embeddings: false }));
	});

	// Issue 7 #0: an object or array ID must never collapse into "[object Object]" or "x,y".
	it('an object or array as conversation or memory base ID is an error naming the field; nothing stored', async () => {
		for (const [sessionId, got] of [
			[{ user: 'alice' }, 'an object'],
			[['x', 'y'], 'an array'],
		] as const) {
			const r = await run({ operation: 'capture', threshold: 1 }, [
				{ sessionId, chatInput: 'q', output: 'my secret is 1234' },
			]);
			assert.equal(r.status, 'error');
			assert.equal(r.error?.message, `Session ID must be a string or a number, got ${got}`);
		}
		const base = await run({ operation: 'capture', baseId: '={{ $json.team }}' }, [
			{ sessionId: 's', output: 'x', team: { id: 1 } },
		]);
		assert.equal(base.error?.message, 'Memory Base ID must be a string or a number, got an object');
		assert.deepEqual(existsSync(folder) ? readdirSync(folder) : [], []);
	});

	it('Capture with Expire After stores it; past it, Search leaves the conversation out and the next Capture deletes it', async () => {
		ok(await say('alice', 'My locker code is Locker-QX-4471', { options: { expireAfterDays: 1 } }));
		ok(await say('bob', 'My locker code is 9002'));
		const storage = new LocalDiskStorage({ root: folder });
		const key = 'memory_base/wf-mb/sessions/alice/log.json';
		const log = JSON.parse(Buffer.from((await storage.get(key))!.body).toString('utf8'));
		assert.equal(log.expire_after_days, 1);
		// Two days pass: the stored time of the last capture is set back (nothing sleeps).
		log.captured_at = new Date(Date.now() - 2 * DAY_MS).toISOString();
		await storage.put(key, Buffer.from(JSON.stringify(log)));
		const search = async () =>
			ok(
				await run({ operation: 'search', topK: 5, sessionScope: 'all' }, [
					{ chatInput: 'locker code' },
				]),
			).map((m) => m.text);
		assert.deepEqual(await search(), ['My locker code is 9002']);
		const holds = () => storageHolds(storage, 'Locker-QX-4471');
		assert.equal(await holds(), true, 'left out, not yet deleted');
		ok(await say('alice', 'A new start'));
		assert.equal(await holds(), false, 'the next capture deleted it, index entries included');
	});
});

const engine = (baseId: string) =>
	new Base({
		storage: new LocalDiskStorage({ root: folder }),
		baseId,
		embedder: new TestEmbedder(),
		threshold: 2,
	});

describe('All Conversations through n8n', () => {
	it('each match of a search of every conversation says what it read: the base-wide index, up to which capture', async () => {
		const base = engine('wf-mb');
		for (const [user, text] of [
			['ana', 'ana likes the new pricing of the kayak plan'],
			['ben', 'ben finds the new pricing too steep'],
			['cai', 'cai asked about opening hours'],
		])
			for (let t = 0; t < 3; t++)
				await base.capture({
					sessionId: `chat-${user}`,
					userId: user,
					runId: `${user}-${t}`,
					texts: [`${text} (${t})`],
				});
		const hits = ok(
			await run({
				operation: 'search',
				sessionScope: 'all',
				query: 'what did people say about the new pricing',
				topK: 4,
			}),
		);
		assert.deepEqual([...new Set(hits.map((h) => h.userId))].sort(), ['ana', 'ben']);
		for (const h of hits) {
			assert.equal(h.coverage.source, 'base-wide index');
			assert.equal(h.coverage.state, 'ready');
			assert.ok(h.coverage.chunks + h.coverage.recentConversations > 0, JSON.stringify(h.coverage));
			assert.ok(h.coverage.newestCapture || h.coverage.recentConversations > 0);
		}
		const one = ok(
			await run({
				operation: 'search',
				sessionScope: 'user',
				userId: 'ana',
				query: 'pricing',
			}),
		);
		assert.ok(one.length > 0 && one.every((h) => h.coverage === undefined && h.userId === 'ana'));
	});
});

describe('Upgrade Memory Base (LLM Memory Manager)', () => {
	/** A base as versions before partitions kept it: one word index, captured into while busy. */
	async function legacy(baseId: string) {
		const storage = new LocalDiskStorage({ root: folder });
		const now = new Date().toISOString();
		const config = { base_id: baseId, kb_id: baseId, threshold: 1000, auto_capture: true };
		await storage.put(
			memoryBaseConfigKey(baseId),
			Buffer.from(
				JSON.stringify({ ...config, created_at: now, updated_at: now, lexical_since: now }),
			),
		);
		await new LexicalIndex(storage, baseId, `memory_base/${baseId}/lexical/`).ensure();
		const base = engine(baseId);
		await whileBusy(storage, baseId, async () => {
			for (let u = 0; u < 5; u++)
				await base.capture({
					sessionId: `c${u}`,
					userId: `u${u}`,
					runId: `r${u}`,
					texts: [`user ${u} owns a red heron kite`],
				});
		});
		assert.equal((await storedConfig(storage, baseId)).layout, undefined, 'still the old layout');
		return storage;
	}

	it('moves a base from before partitions now, once; the same search then reads the base-wide index', async () => {
		await legacy('old');
		const params = { resource: 'memoryBase', operation: 'upgrade', memoryBaseId: 'old' };
		const first = await manage(folder, params);
		assert.equal(first.status, 'success', first.error?.message);
		const out = first.output('Manager')[0];
		assert.deepEqual(
			[out.json.upgraded, out.json.layout, out.json.wide, out.json.baseId],
			[true, 'partitioned', 'ready', 'old'],
		);
		assert.deepEqual(out.pairedItem, { item: 0 });
		const again = (await manage(folder, params)).output('Manager')[0].json;
		assert.equal(again.upgraded, false, 'current already');
		const hits = ok(
			await run({
				operation: 'search',
				baseId: 'old',
				sessionScope: 'all',
				query: 'heron kite',
				topK: 10,
			}),
		);
		assert.equal(hits.length, 5);
		assert.ok(
			hits.every((h) => h.coverage.source === 'base-wide index' && h.coverage.chunks === 5),
		);
	});

	it('a busy base: an error naming the running sync, nothing changed; with continueOnFail the item says so', async () => {
		const storage = await legacy('busy');
		const params = { resource: 'memoryBase', operation: 'upgrade', memoryBaseId: 'busy' };
		await whileBusy(storage, 'busy', async () => {
			const failed = await manage(folder, params);
			assert.equal(failed.status, 'error');
			assert.match(failed.error?.message ?? '', /Sync already running/);
			const kept = await manage(folder, params, undefined, { onError: 'continueRegularOutput' });
			const item = kept.output('Manager')[0];
			assert.match(String(item.json.error), /Sync already running/);
			assert.deepEqual(item.pairedItem, { item: 0 });
		});
		assert.equal((await storedConfig(storage, 'busy')).layout, undefined, 'nothing changed');
		const unknown = await manage(folder, { ...params, memoryBaseId: 'nope' });
		assert.equal(unknown.status, 'error');
		assert.match(
			unknown.error?.message ?? '',
			/No Memory Base named "nope" \(bases in this storage: "busy"\)/,
		);
	});
});

describe('Memory Base node on S3 (radosgw)', () => {
	let s3: S3Storage;
	after(async () => (await ensureRgw()).stop());

	it('capture, ingest and search with the data on S3', async () => {
		s3 = await rgwStorage({ prefix: 'n8n' });
		const { credentials, cred } = rgwCredentials(s3);
		const opts = { credentials: cred, secrets: credentials };
		for (const f of FACTS) ok(await say('s1', f, { storage: 's3' }, opts));
		const hits = ok(
			await run(
				{ operation: 'search', storage: 's3', topK: 1 },
				[{ sessionId: 's1', chatInput: 'favourite colour' }],
				opts,
			),
		);
		assert.equal(hits[0].text, FACTS[0]);
		const keys = (await s3.list('')).map((o) => o.key).sort();
		assert.ok(keys.includes('memory_base/wf-mb/sessions/s1/log.json'), JSON.stringify(keys));
		// The vector partition of s1 (captured without a user).
		const partition = vectorPartFolder('wf-mb', { part: sessionPart('s1') });
		assert.ok(keys.includes(`${partition}manifest.json`), JSON.stringify(keys));
		assert.ok(keys.includes('knowledge_base/wf-mb/embedding_metadata.json'));
		// Forget Conversation on S3: no object of the conversation, and no segment with its text, is left.
		ok(await say('s2', 'bob likes green', { storage: 's3' }, opts));
		ok(await run({ operation: 'forgetConversation', storage: 's3' }, [{ sessionId: 's1' }], opts));
		const left = await s3.list('');
		assert.ok(
			left.every((o) => !o.key.includes('/sessions/s1/')),
			JSON.stringify(left),
		);
		for (const o of left) {
			const body = expanded((await s3.get(o.key))!.body);
			assert.ok(!body.includes(FACTS[0]), `${o.key} still holds s1's text`);
		}
	});
});
