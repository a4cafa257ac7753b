// Searches across every conversation through n8n (in-process WorkflowExecute): the Memory Base node's
// All Conversations search reads the base-wide index and each match says what it read (coverage); a
// base from before partitions is upgraded by the LLM Memory Manager's Upgrade Memory Base (once; busy:
// an error naming the running sync, continueOnFail keeps the item), after which the same search finds
// what it held. The embedding model is the test stand-in (deterministic hashed-word embeddings).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { beforeEach, describe, it } from 'node:test';

import type { INode, INodeParameters } from 'n8n-workflow';

import {
	LexicalIndex,
	LocalDiskStorage,
	MemoryBase as Base,
	memoryBaseConfigKey,
} from '../../src/internal';
import { TestEmbedder } from '../support/embeddings';
import { manage } from '../support/manager-runs';
import { tempDir } from '../support/storages';
import {
	TEST_EMBEDDINGS_TYPE,
	TEST_TRIGGER_TYPE,
	TestEmbeddings,
	testEmbeddings,
} from '../support/test-nodes';
import { storedConfig, whileBusy } from '../support/wide-base';
import { runWorkflow } from '../support/workflow-harness';
import type { WorkflowRunResult } from '../support/workflow-harness';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { MemoryBase } = require(
	path.resolve(__dirname, '../../nodes/MemoryBase/MemoryBase.node.ts'),
) as typeof import('../../nodes/MemoryBase/MemoryBase.node');

const MB_TYPE = 'n8n-nodes-llm-memory.memoryBase';
const nodeTypes = { [MB_TYPE]: new MemoryBase(), [TEST_EMBEDDINGS_TYPE]: new TestEmbeddings() };
type Json = Record<string, any>;

let folder = tempDir('mb-wide');
beforeEach(() => {
	folder = tempDir('mb-wide');
	testEmbeddings.use(new TestEmbedder());
});

/** Trigger → Memory Base (with the Embeddings stand-in) on this test's folder. */
function memoryBase(parameters: INodeParameters): Promise<WorkflowRunResult> {
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
			parameters: { localFolder: folder, ...parameters },
		},
		{
			id: 'e',
			name: 'Embeddings',
			type: TEST_EMBEDDINGS_TYPE,
			typeVersion: 1,
			position: [200, 200],
			parameters: {},
		},
	];
	return runWorkflow(
		{
			id: 'wf-wide',
			name: 'wide',
			nodes,
			connections: {
				Trigger: { main: [[{ node: 'Memory Base', type: 'main', index: 0 }]] },
				Embeddings: { ai_embedding: [[{ node: 'Memory Base', type: 'ai_embedding', index: 0 }]] },
			},
		},
		{ nodeTypes, triggerItems: [{ json: { chatInput: 'q' } }] },
	);
}

const ok = (r: WorkflowRunResult) => {
	assert.equal(r.status, 'success', JSON.stringify(r.error?.message ?? r.error));
	return r.output('Memory Base').map((i) => i.json as Json);
};

const engine = (baseId: string) =>
	new Base({
		storage: new LocalDiskStorage({ root: folder }),
		baseId,
		embedder: new TestEmbedder(),
		threshold: 2,
	});

describe('All Conversations through n8n', () => {
	it('each match of a search of every conversation says what it read: the base-wide index, up to which capture', async () => {
		const base = engine('wf-wide');
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
			await memoryBase({
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
			await memoryBase({
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
			await memoryBase({
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
