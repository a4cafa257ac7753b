// The Memory Base on local disk and on a real Ceph radosgw, from several processes at once: captures
// never lost, one sync per session across processes (the others refused, nothing duplicated), and a
// sync killed while holding its lock blocks the next one only until the lock expires.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';

import { fakeEmbedding } from '../../demo/model-server';
import {
	clearDocumentCache,
	clearVectorCache,
	forgetUser,
	MemoryBase,
	SyncRunningError,
	wideLexicalPrefix,
	wideVectorPrefix,
} from '../../src/internal';
import type { Embedder } from '../../src/internal';
import { storedObjects } from '../support/forget-plant';
import { ensureRgw, workerBackends } from '../support/rgw';
import { tempDir } from '../support/storages';

const run = promisify(execFile);
const WORKER = path.resolve(__dirname, '../support/memory-base-worker.ts');

const embedder: Embedder = {
	embedDocuments: async (texts) => texts.map((t) => fakeEmbedding(t, 64)),
	embedQuery: async (text) => fakeEmbedding(text, 64),
};

const backends = workerBackends('mb-storage');

async function worker(config: Record<string, unknown>): Promise<any> {
	const { stdout } = await run(
		process.execPath,
		['--import', 'tsx', WORKER, JSON.stringify(config)],
		{
			env: { ...process.env, NODE_NO_WARNINGS: '1' },
			timeout: 120_000,
		},
	);
	return JSON.parse(stdout);
}

/** Workers that start their action at the same moment, once every one of them is loaded. */
async function together(configs: Array<Record<string, unknown>>): Promise<any[]> {
	const barrier = tempDir('mb-barrier');
	const runs = Promise.all(configs.map((c) => worker({ ...c, barrier })));
	const ready = () => readdirSync(barrier).filter((f) => f.startsWith('ready-')).length;
	const deadline = Date.now() + 120_000;
	while (ready() < configs.length && Date.now() < deadline)
		await new Promise((r) => setTimeout(r, 20));
	writeFileSync(path.join(barrier, 'go'), '');
	return runs;
}

after(async () => (await ensureRgw()).stop());

for (const backend of backends)
	describe(`Memory Base on ${backend.name}`, () => {
		it('capture, ingest, search, status, regenerate and delete', async () => {
			const { storage } = await backend.make();
			const base = new MemoryBase({ storage, baseId: 'wf', embedder, threshold: 3 });
			const facts = ['My favourite colour is teal', 'I live in Lisbon', 'I play the cello'];
			for (const [i, f] of facts.entries())
				await base.capture({ sessionId: 's1', runId: `r${i}`, texts: [f] });
			await base.capture({ sessionId: 's2', runId: 'x', texts: ['My favourite colour is red'] });
			clearDocumentCache();
			clearVectorCache();
			const hits = await base.search('favourite colour', { k: 5, sessionId: 's1' });
			assert.equal(hits[0].text, facts[0]);
			assert.deepEqual(
				hits.map((h) => h.sessionId),
				['s1', 's1', 's1'],
				'only s1, whose outputs were ingested',
			);
			const status = await base.status();
			assert.deepEqual(
				status.sessions.map((s) => [s.sessionId, s.cursor, s.pending]),
				[
					['s1', 3, 0],
					['s2', 0, 1],
				],
			);
			assert.equal(status.index?.vectors, 3);
			// The whole index deleted behind the base's back.
			for (const o of await storage.list('knowledge_base/wf/parts/')) await storage.delete(o.key);
			assert.equal((await base.status()).mismatch, true);
			const regenerated = await base.regenerate();
			assert.equal(regenerated.messages, 4);
			assert.equal((await base.status()).mismatch, false);
			assert.equal((await base.search('colour red', { k: 1, allUsers: true }))[0].sessionId, 's2');
			await base.delete();
			assert.deepEqual(await storage.list('memory_base/wf/'), []);
			assert.deepEqual(await storage.list('knowledge_base/wf/'), []);
		});

		it('4 processes capture into 2 conversations at once: nothing lost, each output ingested once', async () => {
			const { storage, worker: w } = await backend.make();
			const outs = await together(
				['a', 'b', 'c', 'd'].map((tag) => ({
					...w,
					action: 'capture',
					sessions: ['x', 'y'],
					strides: 12,
					threshold: 5,
					tag,
				})),
			);
			assert.deepEqual(
				outs.map((o) => o.errors),
				[[], [], [], []],
			);
			assert.equal(
				outs.reduce((n, o) => n + o.captured, 0),
				48,
			);
			const base = new MemoryBase({ storage, baseId: 'wf', embedder });
			await base.sync();
			const status = await base.status();
			assert.deepEqual(
				status.sessions.map((s) => [s.sessionId, s.captured, s.cursor, s.pending]),
				[
					['x', 24, 24, 0],
					['y', 24, 24, 0],
				],
			);
			assert.equal(status.index?.vectors, 48, 'every output once');
			assert.ok(outs.reduce((n, o) => n + o.syncs, 0) >= 1, 'captures past the threshold synced');
		});

		it('4 processes of 4 users capture and sync side by side: a fifth finds every capture across conversations, once; Forget User leaves none of one of them in the base-wide index', async () => {
			const { storage, worker: w } = await backend.make();
			const tags = ['a', 'b', 'c', 'd'];
			const outs = await together(
				tags.map((tag) => ({
					...w,
					action: 'capture',
					sessions: [`${tag}-1`, `${tag}-2`],
					userId: `user-${tag}`,
					strides: 12,
					threshold: 3,
					tag,
				})),
			);
			assert.deepEqual(
				outs.map((o) => o.errors),
				[[], [], [], []],
			);
			const queries = tags.flatMap((t) => [`topic${t}0`, `topic${t}11`]);
			const { hits } = await worker({
				...w,
				action: 'search',
				sessions: [],
				tag: 'reader',
				queries,
			});
			// Each capture first (its neighbours in its conversation may follow), and none twice.
			assert.deepEqual(
				hits.map((h: string[]) => h[0]),
				queries.map((q) => `${q[5]} stride ${q.slice(6)} about ${q}`),
				'found by a search of every conversation in another process',
			);
			for (const h of hits) assert.equal(new Set(h).size, h.length, 'each once');
			const base = new MemoryBase({ storage, baseId: 'wf', embedder });
			await base.sync();
			const status = await base.status();
			assert.equal(status.mismatch, false, status.mismatchReason ?? undefined);
			assert.deepEqual([status.index?.vectors, status.wide?.vectors], [48, 48]);
			await forgetUser(storage, { userId: 'user-a' });
			const wide = [
				...(await storedObjects(storage, wideLexicalPrefix('wf'))),
				...(await storedObjects(storage, wideVectorPrefix('wf'))),
			];
			assert.ok(
				wide.some((b) => b.includes('topicb')),
				'the scan reads what is stored',
			);
			for (const bytes of wide) assert.ok(!bytes.includes('topica') && !bytes.includes('user-a'));
			const left = await base.search('stride', { allUsers: true, k: 100, mode: 'lexical' });
			assert.deepEqual([...new Set(left.map((h) => h.userId))].sort(), [
				'user-b',
				'user-c',
				'user-d',
			]);
		});

		it('4 processes Sync Now one conversation at once: one runs, the others get "sync already running"', async () => {
			const { storage, worker: w } = await backend.make();
			const base = new MemoryBase({ storage, baseId: 'wf', embedder, autoCapture: false });
			for (let i = 0; i < 6; i++)
				await base.capture({ sessionId: 's', runId: `r${i}`, texts: [`fact number ${i}`] });
			const outs = await together(
				['a', 'b', 'c', 'd'].map((tag) => ({
					...w,
					action: 'sync',
					sessions: ['s'],
					embedDelayMs: 1500,
					tag,
				})),
			);
			const ran = outs.filter((o) => o.result);
			const refused = outs.filter((o) => o.error);
			assert.equal(ran.length, 1, JSON.stringify(outs));
			assert.equal(ran[0].result.messages, 6);
			assert.equal(refused.length, 3);
			for (const r of refused) {
				assert.equal(r.error, SyncRunningError.name);
				assert.match(r.message, /^Sync already running: sync of memory base "wf" \(session "s"\)/);
			}
			const status = await base.status();
			assert.deepEqual([status.sessions[0].cursor, status.index?.vectors], [6, 6]);
		});

		it('a sync killed while holding its lock: the next sync is refused until the lock expires, then resumes', async () => {
			const { storage, worker: w } = await backend.make();
			const base = new MemoryBase({ storage, baseId: 'wf', embedder, autoCapture: false });
			for (let i = 0; i < 3; i++)
				await base.capture({ sessionId: 's', runId: `r${i}`, texts: [`fact number ${i}`] });
			const config = {
				...w,
				action: 'sync',
				sessions: ['s'],
				hang: true,
				leaseMs: 3000,
				tag: 'k',
				startAt: 0,
			};
			const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(config)], {
				env: { ...process.env, NODE_NO_WARNINGS: '1' },
				stdio: ['ignore', 'pipe', 'inherit'],
			});
			await new Promise<void>((resolve, reject) => {
				child.stdout.on('data', (d: Buffer) => d.toString().includes('HOLDING') && resolve());
				child.once('exit', (code) => reject(new Error(`worker exited early (${code})`)));
			});
			const exited = new Promise((r) => child.once('exit', r));
			child.kill('SIGKILL');
			await exited;
			const killedAt = Date.now();
			await assert.rejects(base.sync({ sessionId: 's' }), SyncRunningError);
			const status = await base.status();
			assert.deepEqual([status.sessions[0].syncRunning, status.sessions[0].cursor], [true, 0]);
			// Once the lock has expired (3 s after its last renewal), the next sync takes over.
			let result;
			for (;;) {
				try {
					result = await base.sync({ sessionId: 's' });
					break;
				} catch (error) {
					if (!(error instanceof SyncRunningError)) throw error;
					assert.ok(Date.now() - killedAt < 10_000, 'the lock expired in time');
					await new Promise((r) => setTimeout(r, 250));
				}
			}
			assert.ok(Date.now() - killedAt >= 1000, 'it was refused while the lock was fresh');
			assert.equal(result.messages, 3);
			assert.deepEqual((await base.status()).sessions[0].cursor, 3);
		});
	});
