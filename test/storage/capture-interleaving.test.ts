// Flat capture across processes, on local disk and a real Ceph radosgw. A capture writes only its
// conversation's log; the lexical index reads the newest messages from the logs its manifest lists,
// and a log is listed before it is opened. Two writer processes capture into one user's conversations
// at once, one of them killed between its two writes (the listing of a new conversation, then that
// conversation's log); a reader in a third process finds every acknowledged capture at once and
// nothing of the killed one; a capture into that conversation afterwards is found too.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';

import { fakeEmbedding } from '../../demo/model-server';
import { captureLogKey, lexicalPartFolder, MemoryBase, userPart } from '../../src/internal';
import type { Embedder } from '../../src/internal';
import { ensureRgw, workerBackends } from '../support/rgw';
import type { WorkerBackend } from '../support/rgw';
import { tempDir } from '../support/storages';

const WORKER = path.resolve(__dirname, '../support/memory-base-worker.ts');

const embedder: Embedder = {
	embedDocuments: async (texts) => texts.map((t) => fakeEmbedding(t, 64)),
	embedQuery: async (text) => fakeEmbedding(text, 64),
};

const backends = workerBackends('interleave');

interface Exit {
	stdout: string;
	code: number | null;
	signal: NodeJS.Signals | null;
}

/** One worker process, to its end (a kill included). */
function worker(config: Record<string, unknown>): Promise<Exit> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(config)], {
			env: { ...process.env, NODE_NO_WARNINGS: '1' },
			stdio: ['ignore', 'pipe', 'inherit'],
		});
		let stdout = '';
		child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
		const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
		child.once('error', reject);
		child.once('exit', (code, signal) => {
			clearTimeout(timer);
			resolve({ stdout, code, signal });
		});
	});
}

/** Workers that start their captures at the same moment, once every one of them is loaded. */
async function together(configs: Array<Record<string, unknown>>): Promise<Exit[]> {
	const barrier = tempDir('interleave-barrier');
	const runs = Promise.all(configs.map((c) => worker({ ...c, barrier })));
	const deadline = Date.now() + 120_000;
	while (
		readdirSync(barrier).filter((f) => f.startsWith('ready-')).length < configs.length &&
		Date.now() < deadline
	)
		await new Promise((r) => setTimeout(r, 20));
	writeFileSync(path.join(barrier, 'go'), '');
	return runs;
}

/** A search from another process: the texts of the top hits of each query. */
async function search(w: WorkerBackend, queries: string[], userId?: string): Promise<string[][]> {
	const out = await worker({ ...w, action: 'search', sessions: [], queries, userId, tag: 'r' });
	assert.equal(out.code, 0, out.stdout);
	return (JSON.parse(out.stdout) as { hits: string[][] }).hits;
}

const text = (tag: string, j: number) => `${tag} stride ${j} about topic${tag}${j}`;

after(async () => (await ensureRgw()).stop());

for (const backend of backends)
	describe(`flat capture across processes on ${backend.name}`, () => {
		it('two writers, one killed between listing a new conversation and writing its log: a reader elsewhere finds every acknowledged capture at once, nothing of the killed one', async () => {
			const { storage, worker: w } = await backend.make();
			const base = new MemoryBase({ storage, baseId: 'wf', embedder, threshold: 4 });
			await base.configure();
			const common = { ...w, action: 'capture', userId: 'u', threshold: 4 };
			const [killed, survivor] = await together([
				{ ...common, tag: 'a', sessions: ['a1', 'a1', 'a1', 'z'], strides: 4, crashOn: 'z' },
				{ ...common, tag: 'b', sessions: ['a1', 'b1'], strides: 12 },
			]);
			assert.equal(killed.signal, 'SIGKILL', killed.stdout);
			const acked = killed.stdout
				.split('\n')
				.filter((l) => l.startsWith('ACK '))
				.map((l) => l.slice(4));
			assert.deepEqual(
				acked,
				[0, 1, 2].map((j) => text('a', j)),
			);
			assert.equal(survivor.code, 0);
			const b = JSON.parse(survivor.stdout) as { captured: number; errors: string[] };
			assert.deepEqual([b.captured, b.errors], [12, []]);
			// The kill fell between the two writes: "z" is listed, its log was never written.
			const manifest = await storage.get(
				`${lexicalPartFolder('wf', { part: userPart('u') })}manifest.json`, // user u's partition
			);
			assert.ok(manifest);
			const open = (
				JSON.parse(Buffer.from(manifest.body).toString()) as {
					open: Array<{ session_id: string }>;
				}
			).open.map((o) => o.session_id);
			assert.ok(open.includes('z'), JSON.stringify(open));
			assert.equal(await storage.get(captureLogKey('wf', 'z')), null);
			const expected = [...acked, ...Array.from({ length: 12 }, (_, j) => text('b', j))];
			const queries = [...expected.map((t) => t.split(' ').pop() as string), 'topica3'];
			for (const scope of ['u', undefined]) {
				const hits = await search(w, queries, scope);
				assert.deepEqual(
					hits.slice(0, -1).map((h) => h[0]),
					expected,
					`scope ${scope ?? 'all users'}`,
				);
				assert.deepEqual(hits[hits.length - 1], [], 'nothing of the killed capture');
			}
			// The conversation the killed writer listed takes captures as any other.
			const later = await worker({ ...common, tag: 'd', sessions: ['z'], strides: 1 });
			assert.equal(later.code, 0);
			assert.deepEqual(await search(w, ['topicd0'], 'u'), [[text('d', 0)]]);
			const status = await base.status();
			assert.equal(status.lexical?.chunks, expected.length + 1);
			assert.equal(status.mismatch, false, status.mismatchReason ?? '');
		});
	});
