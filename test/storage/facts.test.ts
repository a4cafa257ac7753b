// Facts on local disk and on Ceph radosgw: 4 processes learning facts of one user at once lose no
// operation (each save a compare-and-swap of the branch head, re-applied on conflict), and Forget takes
// what was learned in a forgotten conversation out of every stored byte on both backends.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';

import { clearDocumentCache, Facts, forgetUser } from '../../src/internal';
import { standInExtractor } from '../support/fact-extractor';
import { storageHolds } from '../support/forget-plant';
import { ensureRgw, runWorkers, workerBackends } from '../support/rgw';

const WORKER = path.resolve(__dirname, '../support/facts-worker.ts');
const PROCESSES = 4;
const LEARNS_EACH = 12;

const backends = workerBackends();

interface Report {
	learned: { added: string[]; attempts: number; error?: string }[];
	conflicts: number;
}

for (const backend of backends)
	describe(`facts on ${backend.name}`, () => {
		it(`${PROCESSES} processes × ${LEARNS_EACH} extractions of one user's facts: no operation lost`, async (t) => {
			const { storage, worker } = await backend.make();
			const startAt = Date.now() + 4000; // after every worker has started (tsx takes ~1 s)
			const outputs = await runWorkers(
				WORKER,
				Array.from({ length: PROCESSES }, (_, p) => ({
					...worker,
					tag: `p${p}`,
					learns: LEARNS_EACH,
					startAt,
				})),
				240_000,
			);
			const reports = outputs.map((o) => JSON.parse(o) as Report);
			const learned = reports.flatMap((r) => r.learned);
			assert.ok(
				learned.every((l) => !l.error && l.added.length === 1),
				JSON.stringify(learned),
			);
			clearDocumentCache();
			const facts = new Facts({ storage, space: 'base', subject: { userId: 'shared' } });
			const now = await facts.get();
			const expected = learned.flatMap((l) => l.added).sort();
			assert.equal(expected.length, PROCESSES * LEARNS_EACH);
			assert.deepEqual(
				now.facts.map((f) => f.text).sort(),
				expected,
				'every operation exactly once',
			);
			assert.equal(new Set(now.facts.map((f) => f.id)).size, expected.length, 'unique fact IDs');
			assert.equal(now.cursors.length, expected.length, 'every conversation read');
			const history = (await facts.history({ limit: 1000 })).entries;
			assert.equal(history.length, expected.length, 'one version per extraction');
			for (let i = 0; i + 1 < history.length; i++)
				assert.equal(history[i].parent, history[i + 1].version);
			const retried = learned.filter((l) => l.attempts > 1).length;
			const conflicts = reports.reduce((n, r) => n + r.conflicts, 0);
			t.diagnostic(
				`${retried} extractions re-applied their operations; ${conflicts} conditional writes lost a race`,
			);
			assert.ok(retried > 0, 'the writers really raced');
		});

		it('Forget Conversation takes what was learned in it out of every version', async () => {
			const { storage } = await backend.make();
			const facts = new Facts({ storage, space: 'base', subject: { userId: 'bob' } });
			const learn = (conversationId: string, text: string) =>
				facts.learn({
					extract: standInExtractor().extract,
					source: { conversationId },
					messages: [
						{ messageId: `${conversationId}-m`, role: 'user', text, at: new Date().toISOString() },
					],
					force: true,
				});
			await learn('keep', 'I have a boat called Keepsake.');
			await learn('gone', 'I have a pin Forgotten-5521.');
			await learn('keep2', 'I live in Lisbon.');
			assert.ok(await storageHolds(storage, 'Forgotten-5521'));
			await forgetUser(storage, { conversationId: 'gone' });
			assert.ok(!(await storageHolds(storage, 'Forgotten-5521')), 'no stored byte holds it');
			assert.ok(await storageHolds(storage, 'Keepsake'));
			clearDocumentCache();
			assert.deepEqual(
				(await facts.get()).facts.map((f) => f.text),
				['Has a boat called Keepsake', 'Lives in Lisbon'],
			);
		});
	});

after(async () => (await ensureRgw()).stop());
