// Versioned data on local disk and on Ceph radosgw: the core contract on both, and branch heads under
// compare-and-swap from 4 separate processes saving at once (no save lost, numbers unique, one chain).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';

import {
	clearDocumentCache,
	ConflictError,
	deleteConversationMemory,
	exportConversation,
	importConversation,
	InvalidIdError,
	InvalidInputError,
	NotJsonError,
	parseKey,
	SchemaViolationError,
	versionCounterKey,
	VersionConflictError,
	VersionedData,
	versionedDataPrefix,
	versionKey,
} from '../../src/internal';
import type { MemoryStorage } from '../../src/internal';
import { ensureRgw, runWorkers, workerBackends } from '../support/rgw';
import { storedObjects, storedUnder, toxicity } from '../unit/snapshots/support';

const WORKER = path.resolve(__dirname, '../support/version-writer.ts');
const PROCESSES = 4;
const SAVES_EACH = 25;

const backends = workerBackends();

async function rejectsUnchanged(
	storage: MemoryStorage,
	fn: () => Promise<unknown>,
	type: new (...args: never[]) => unknown,
) {
	const before = await storedObjects(storage);
	await assert.rejects(fn, type);
	assert.deepEqual(await storedObjects(storage), before, 'nothing was written');
}

for (const backend of backends)
	describe(`versioned data on ${backend.name}`, () => {
		it('save, current, version, history, diff, rollback, branches', async () => {
			const { storage } = await backend.make();
			const vd = new VersionedData({ storage, appId: 'wf', conversationId: 'c' });
			assert.equal(await vd.getCurrent(), null);
			for (let i = 0; i < 5; i++)
				await vd.saveVersion({ data: toxicity(i), summary: `edit ${i}`, messageId: `m${i}` });
			clearDocumentCache();
			const current = await vd.getCurrent();
			assert.deepEqual([current?.version, current?.parent, current?.message_id], [5, 4, 'm4']);
			assert.deepEqual((await vd.getVersion(2)).data, toxicity(1));
			const page = await vd.history({ limit: 2 });
			assert.deepEqual(
				page.entries.map((e) => e.version),
				[5, 4],
			);
			assert.deepEqual(
				(await vd.history({ limit: 10, before: page.nextBefore as number })).entries.map(
					(e) => e.version,
				),
				[3, 2, 1],
			);
			assert.deepEqual((await vd.diff(1, 2)).summary, [
				'replaced /category: "PERFUME" → "FRAGRANCE"',
				'replaced /acute_toxicity/ld50_oral_mg_kg: 90000 → 90001',
				'replaced /acute_toxicity/noael_mg_kg_day: 1000 → 1001',
				'replaced /references/0/note: "checked 0" → "checked 1"',
				'replaced /references/1/note: "checked 0" → "checked 1"',
				'replaced /references/2/note: "checked 0" → "checked 1"',
				'replaced /references/3/note: "checked 0" → "checked 1"',
				'replaced /references/4/note: "checked 0" → "checked 1"',
				'replaced /references/5/note: "checked 0" → "checked 1"',
				'replaced /edited: 0 → 1',
			]);
			await vd.branch('alt', 2);
			const alt = await vd.saveVersion({ data: { alt: true }, summary: 'alt', branch: 'alt' });
			assert.deepEqual([alt.version, alt.parent], [6, 2]);
			const back = await vd.rollback(1);
			assert.deepEqual([back.version, back.parent, back.summary], [7, 5, 'Rolled back to v1']);
			assert.deepEqual(back.data, toxicity(0));
			assert.deepEqual(
				(await vd.listBranches()).map((b) => [b.branch, b.version]),
				[
					['alt', 6],
					['main', 7],
				],
			);
			const keys = (await storage.list(vd.prefix)).map((o) => parseKey(o.key)?.kind).sort();
			assert.deepEqual(keys, [
				'branch',
				'branch',
				'version',
				'version',
				'version',
				'version',
				'version',
				'version',
				'version',
				'version_counter',
			]);
		});

		it('versions are write-once; bad input and stale expectations write nothing', async () => {
			const { storage } = await backend.make();
			const vd = new VersionedData({
				storage,
				appId: 'wf',
				conversationId: 'c',
				schema: { type: 'object', required: ['inci'] },
			});
			await vd.saveVersion({ data: { inci: 'WATER' }, summary: 'first' });
			const key = versionKey('wf', 'c', 1);
			const before = await storage.get(key);
			await assert.rejects(storage.put(key, Buffer.from('{}'), { ifVersion: null }), ConflictError);
			assert.deepEqual((await storage.get(key))?.body, before?.body);
			await rejectsUnchanged(
				storage,
				() => vd.saveVersion({ data: { inci: NaN }, summary: 's' }),
				NotJsonError,
			);
			await rejectsUnchanged(
				storage,
				() => vd.saveVersion({ data: { inci: 'W' }, summary: '' }),
				InvalidInputError,
			);
			await rejectsUnchanged(
				storage,
				() => vd.saveVersion({ data: { x: 1 }, summary: 's' }),
				SchemaViolationError,
			);
			await rejectsUnchanged(
				storage,
				() => vd.saveVersion({ data: { inci: 'W' }, summary: 's', branch: 'a/b' }),
				InvalidIdError,
			);
			await rejectsUnchanged(
				storage,
				() => vd.saveVersion({ data: { inci: 'W' }, summary: 's', expectedVersion: null }),
				VersionConflictError,
			);
			// With the counter gone, a save still never overwrites: it steps to the next free number.
			await storage.delete(versionCounterKey('wf', 'c'));
			await vd.branch('b', 1);
			await vd.saveVersion({ data: { inci: 'A' }, summary: 'main 2' });
			await storage.delete(versionCounterKey('wf', 'c'));
			const v = await vd.saveVersion({ data: { inci: 'B' }, summary: 'b', branch: 'b' });
			assert.deepEqual([v.version, v.parent], [3, 1]);
			assert.deepEqual((await storage.get(key))?.body, before?.body);
		});

		it('export, delete, import: the same bytes', async () => {
			const { storage } = await backend.make();
			const vd = new VersionedData({ storage, appId: 'wf', conversationId: 'c' });
			for (let i = 0; i < 4; i++) await vd.saveVersion({ data: toxicity(i), summary: `e${i}` });
			await vd.branch('x', 2);
			await vd.saveVersion({ data: [1, { 'a/b': '~' }], summary: 'x', branch: 'x' });
			const before = await storedObjects(storage, versionedDataPrefix('wf', 'c'));
			const exported = JSON.parse(JSON.stringify(await exportConversation(storage, 'wf', 'c')));
			await importConversation(storage, 'wf', exported, { conversationId: 'copy' });
			assert.deepEqual(
				await storedUnder(storage, versionedDataPrefix('wf', 'copy')),
				await storedUnder(storage, versionedDataPrefix('wf', 'c')),
			);
			assert.equal((await deleteConversationMemory(storage, 'wf', 'c')).length, before.size);
			assert.deepEqual(await storedObjects(storage, versionedDataPrefix('wf', 'c')), new Map());
			await importConversation(storage, 'wf', exported);
			assert.deepEqual(await storedObjects(storage, versionedDataPrefix('wf', 'c')), before);
		});

		it(`${PROCESSES} processes × ${SAVES_EACH} saves on one branch: every save once, one linear chain`, async (t) => {
			const { storage, worker } = await backend.make();
			const startAt = Date.now() + 4000; // after every worker has started (tsx takes ~1 s)
			const outputs = await runWorkers(
				WORKER,
				Array.from({ length: PROCESSES }, (_, p) => ({
					...worker,
					conversationId: 'race',
					saves: SAVES_EACH,
					tag: `p${p}`,
					startAt,
				})),
				240_000,
			);
			const reports = outputs.map(
				(o) =>
					JSON.parse(o) as {
						saves: { summary: string; version: number; parent: number | null }[];
						conflicts: number;
					},
			);
			const reported = reports.flatMap((r) => r.saves);
			const total = PROCESSES * SAVES_EACH;
			assert.equal(reported.length, total);
			clearDocumentCache();
			const vd = new VersionedData({ storage, appId: 'wf', conversationId: 'race' });
			const chain = (await vd.history({ limit: 1000 })).entries;
			assert.equal(chain.length, total, 'every save is on the branch');
			assert.equal(chain[chain.length - 1].parent, null);
			for (let i = 0; i + 1 < chain.length; i++)
				assert.equal(chain[i].parent, chain[i + 1].version, 'each version follows the one before');
			assert.equal(new Set(chain.map((e) => e.version)).size, total, 'version numbers are unique');
			const summaries = chain.map((e) => e.summary).sort();
			assert.deepEqual(summaries, reported.map((r) => r.summary).sort(), 'every save exactly once');
			assert.equal(new Set(summaries).size, total);
			const byVersion = new Map(chain.map((e) => [e.version, e]));
			for (const r of reported) {
				assert.equal(
					byVersion.get(r.version)?.summary,
					r.summary,
					'each writer got its own version',
				);
				assert.equal(byVersion.get(r.version)?.parent, r.parent);
			}
			for (const e of chain.slice(0, 5)) {
				const [writer, j] = e.summary.split('-');
				assert.deepEqual((await vd.getVersion(e.version)).data, { writer, j: Number(j) });
			}
			// Each process saw its own saves in order.
			for (const r of reports)
				for (let i = 1; i < r.saves.length; i++)
					assert.ok(r.saves[i].version > r.saves[i - 1].version);
			const objects = (await storage.list(`${vd.prefix}versions/`)).length;
			const conflicts = reports.reduce((n, r) => n + r.conflicts, 0);
			t.diagnostic(
				`${conflicts} conditional writes lost a race; ${objects - total} versions were left unreferenced by saves that lost the head`,
			);
			assert.ok(conflicts > 0, 'the writers really raced');
			const counter = JSON.parse(
				Buffer.from((await storage.get(versionCounterKey('wf', 'race')))!.body).toString(),
			);
			assert.ok(counter.next > Math.max(...chain.map((e) => e.version)));
		});
	});

after(async () => (await ensureRgw()).stop());
