// Regenerate refills the base-wide index once, from the partitions, instead of writing it with each
// conversation: its manifests are written a few times whatever the number of conversations; searches
// of every conversation meanwhile read it without a false mismatch; a capture meanwhile is kept; a
// Regenerate cut short leaves a marker that the next idle use turns into a full copy.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import { clearAllCaches, wideLexicalPrefix, wideVectorPrefix } from '../../../src/internal';
import { manyUsers, storedConfig, whileBusy } from '../../support/wide-base';

afterEach(() => clearAllCaches());

const manifests = {
	words: `${wideLexicalPrefix('kb')}manifest.json`,
	vectors: `${wideVectorPrefix('kb')}manifest.json`,
};

/** Status of the whole base on one page, with the base-wide index's figures. */
async function settled(base: Awaited<ReturnType<typeof manyUsers>>['base']) {
	const status = await base.status({ limit: 1000 });
	assert.equal(status.mismatch, false, status.mismatchReason ?? undefined);
	assert.equal(status.wide?.refill, undefined, 'no refill left');
	assert.equal(
		status.wide?.vectors,
		status.index?.vectors,
		'each vector once in the base-wide index',
	);
	assert.equal(
		status.wide?.chunks,
		status.lexical?.chunks,
		'each chunk once in the base-wide index',
	);
	return status;
}

describe('Regenerate refills the base-wide index once', () => {
	it('writes its manifests a few times, whatever the number of conversations (12 → 48)', async () => {
		const writes = async (users: number) => {
			const { base, storage } = await manyUsers({ users, turns: 4 });
			await base.sync();
			storage.take();
			await base.regenerate();
			const { puts } = storage.take();
			await settled(base);
			return { words: puts.get(manifests.words) ?? 0, vectors: puts.get(manifests.vectors) ?? 0 };
		};
		const small = await writes(6);
		const large = await writes(24);
		for (const kind of ['words', 'vectors'] as const) {
			assert.ok(large[kind] > 0, `${kind}: written`);
			assert.ok(
				large[kind] <= small[kind] + 2 && large[kind] <= 12,
				`${kind} manifest writes: ${small[kind]} → ${large[kind]}`,
			);
		}
	});

	it('answers after it as before it; searches meanwhile read the base-wide index, words found', async () => {
		const { base, embedder, storage } = await manyUsers({ users: 8, turns: 4 });
		await base.sync();
		const before = await base.search('heron nest', { allUsers: true, k: 6 });
		const wordsBefore = await base.search('heron nest', { allUsers: true, k: 6, mode: 'lexical' });
		embedder.hold();
		const held = embedder.held();
		const running = base.regenerate();
		await held; // the words refilled, the vectors being embedded again
		assert.ok((await storedConfig(storage, 'kb')).wide.refill, 'marked as refilled');
		const report = await base.searchReport('heron nest', { allUsers: true, k: 6 });
		assert.equal(report.coverage?.source, 'base-wide index');
		assert.ok(report.coverage?.refill, 'the search says the index is being refilled');
		const words = await base.search('heron nest', { allUsers: true, k: 6, mode: 'lexical' });
		assert.ok(words.length > 0);
		assert.deepEqual(
			words.map((h) => h.text),
			wordsBefore.map((h) => h.text),
			'every word searchable meanwhile',
		);
		embedder.release();
		await running;
		assert.deepEqual(
			(await base.search('heron nest', { allUsers: true, k: 6 })).map((h) => h.text),
			before.map((h) => h.text),
		);
		assert.equal((await storedConfig(storage, 'kb')).wide.refill, undefined);
		await settled(base);
	});

	it('a capture while it embeds is found after it, by words and (once synced) by vectors', async () => {
		const { base, embedder } = await manyUsers({ users: 6, turns: 4 });
		await base.sync();
		embedder.hold();
		const held = embedder.held();
		const running = base.regenerate();
		await held;
		await base.capture({
			sessionId: 'late-chat',
			userId: 'late-user',
			runId: 'late-run',
			messages: [{ role: 'user', text: 'the zeppelin hangar opens on friday' }],
		});
		embedder.release();
		await running;
		const found = await base.search('zeppelin hangar', { allUsers: true, mode: 'lexical' });
		assert.equal(found[0]?.text, 'the zeppelin hangar opens on friday');
		await base.sync();
		const byVectors = await base.search('the zeppelin hangar opens on friday', {
			allUsers: true,
			mode: 'vector',
			k: 1,
		});
		assert.equal(byVectors[0]?.text, 'the zeppelin hangar opens on friday');
		await settled(base);
	});

	it('cut short: the marker stays, searches read on without a mismatch, the next idle use copies it all', async () => {
		const { base, embedder, storage } = await manyUsers({ users: 8, turns: 4 });
		await base.sync();
		embedder.failAt = new Set([embedder.calls.length + 3]);
		await assert.rejects(base.regenerate(), /embed|fail/i);
		embedder.failAt = new Set();
		assert.ok((await storedConfig(storage, 'kb')).wide.refill, 'left marked');
		await whileBusy(storage, 'kb', async () => {
			// Used as it stands while busy: the words are all there, the vectors missing until the copy.
			const hits = await base.search('pricing plan', { allUsers: true, k: 5 });
			assert.ok(hits.length > 0);
			const status = await base.status({ limit: 1000 });
			assert.equal(status.mismatch, false, status.mismatchReason ?? undefined);
			assert.ok(status.wide?.refill);
		});
		// Idle: the search copies the partitions into the base-wide index first.
		const report = await base.searchReport('pricing plan', { allUsers: true, k: 5 });
		assert.equal(report.coverage?.source, 'base-wide index');
		const config = await storedConfig(storage, 'kb');
		assert.equal(config.wide.state, 'ready');
		assert.equal(config.wide.refill, undefined);
		await settled(base);
		await base.sync(); // what Regenerate did not reach
		const status = await settled(base);
		assert.ok(status.sessions.every((s) => s.pending === 0));
	});
});
