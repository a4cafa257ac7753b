// Automatic recall's floor and its reasons: small talk recalls nothing (and is not even searched),
// real questions recall as before, and a recall that finds nothing says why: small talk, no match,
// below Minimum Similarity, all in the window, over the budget.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { chooseRecall, isSmallTalk, LocalDiskStorage, MemoryBase } from '../../../src/internal';
import { SMALL_TALK } from '../../../bench/small-talk';
import { TestEmbedder } from '../../support/embeddings';
import { InstrumentedStorage, tempDir } from '../../support/storages';

function setup(embedder = false) {
	const storage = new InstrumentedStorage(new LocalDiskStorage({ root: tempDir('recall-floor') }));
	const base = new MemoryBase({
		storage,
		baseId: 'kb',
		threshold: 1_000_000,
		...(embedder ? { embedder: new TestEmbedder() } : {}),
	});
	return { storage, base };
}

let run = 0;
async function fill(base: MemoryBase) {
	const lines = [
		'Thanks, that helps a lot!',
		'Good morning! My dog Biscuit is sick today.',
		'ok cool, I will book the vet at 9',
		'haha yes, see you tomorrow',
		'My sister Alma lives in Lisbon.',
	];
	for (const [i, text] of lines.entries())
		await base.capture({
			sessionId: 's1',
			userId: 'ana',
			runId: `r${++run}`,
			messages: [{ text, role: 'user', metadata: { messageId: `m${i}` } }],
		});
}

describe('automatic recall: a floor for small talk, and why nothing was recalled', () => {
	it('tells small talk from a question', () => {
		for (const t of [
			'thanks!',
			'ok',
			'Good morning, how are you?',
			"How's it going?",
			'👍',
			'',
			'  ',
		])
			assert.ok(isSmallTalk(t), t);
		for (const t of [
			'where does my sister live?',
			'thanks, and what was the vet’s name?',
			'Biscuit?',
		])
			assert.ok(!isSmallTalk(t), t);
		const searched = SMALL_TALK.filter((t) => !isSmallTalk(t));
		assert.ok(searched.length <= 5, `at most 5 of the 50 are searched: ${searched.join(' | ')}`);
	});

	it('small talk recalls nothing and reads nothing; a question recalls', async () => {
		for (const embedder of [false, true]) {
			const { base, storage } = setup(embedder);
			await fill(base);
			if (embedder) await base.sync();
			const before = { ...storage.calls };
			for (const query of ['thanks!', 'good morning', 'ok cool', 'haha', 'see you tomorrow']) {
				const r = await base.recall({ query, userId: 'ana' });
				assert.equal(r.section, '', query);
				assert.equal(r.hits.length, 0);
				assert.match(r.reason ?? '', /small talk/);
			}
			assert.deepEqual(storage.calls, before, 'nothing was read for small talk');
			const asked = await base.recall({ query: 'where does my sister live?', userId: 'ana' });
			assert.match(asked.section, /Lisbon/);
			assert.equal(asked.reason, undefined);
		}
	});

	it('says why nothing was recalled: no match, Minimum Similarity, in the window, over the budget', async () => {
		const { base } = setup(true);
		await fill(base);
		await base.sync();
		const none = await base.recall({ query: 'quantum chromodynamics', userId: 'ana' });
		assert.match(none.reason ?? '', /no captured message matches/);
		const strict = await base.recall({
			query: 'sister Lisbon',
			userId: 'ana',
			minSimilarity: 0.999,
		});
		assert.match(strict.reason ?? '', /Minimum Similarity/);
		const found = await base.recallCandidates({ query: 'sister Lisbon', userId: 'ana', k: 1 });
		assert.ok(found.hits.length > 0);
		const window = chooseRecall(found, {
			inWindow: found.hits.map((h) => h.metadata!.messageId as string),
		});
		assert.match(window.reason ?? '', /already in the conversation's window/);
		const tight = chooseRecall(found, { tokenBudget: 10 });
		assert.match(tight.reason ?? '', /Recall Token Budget of 10/);
		const zero = await base.recall({ query: 'sister', userId: 'ana', tokenBudget: 0 });
		assert.match(zero.reason ?? '', /budget is 0/i);
	});
});
