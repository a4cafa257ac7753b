// Later mentions in search: a newer message that names what a top match names (the old city in "we
// moved from Lyon to Oslo") goes right above it, in hybrid and lexical search, never from outside the
// search's scope (another user, another conversation, outside the time filter), and not in
// vector-only search. Captures are stamped with a mocked clock (Date only), one day apart.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';

import { LocalDiskStorage, MemoryBase } from '../../../src';
import { TestEmbedder } from '../../support/embeddings';
import { tempDir } from '../../support/storages';

const DAY = 86_400_000;
const START = Date.parse('2026-01-01T09:00:00Z');
let day = 0;
let run = 0;

function setup(embedder = false) {
	const storage = new LocalDiskStorage({ root: tempDir('later-mentions') });
	return new MemoryBase({
		storage,
		baseId: 'kb',
		threshold: 1_000_000,
		...(embedder ? { embedder: new TestEmbedder() } : {}),
	});
}

/** Captures one user message, a day after the previous one. */
async function say(base: MemoryBase, text: string, sessionId = 's1', userId = 'ana') {
	mock.timers.setTime(START + ++day * DAY);
	await base.capture({ sessionId, userId, runId: `r${++run}`, messages: [{ text, role: 'user' }] });
}

/** Filler that shares no names with the facts, so the scope is large enough for names to be rare. */
async function chatter(base: MemoryBase, n: number, sessionId = 's1', userId = 'ana') {
	for (let i = 0; i < n; i++)
		await say(
			base,
			`Can you suggest a recipe with beans and rice, version ${i}?`,
			sessionId,
			userId,
		);
}

const texts = (hits: Array<{ text: string }>) => hits.map((h) => h.text);
const OLD = 'I live in Lyon, so anything near there works for me.';
const NEW = 'Big news: we moved from Lyon to Oslo last weekend!';

describe('search: later mentions', () => {
	beforeEach(() => mock.timers.enable({ apis: ['Date'], now: START }));
	afterEach(() => mock.timers.reset());

	it('puts the newer statement of a fact above the older one, though its words miss the question', async () => {
		const base = setup();
		await say(base, OLD);
		await chatter(base, 20);
		await say(base, NEW);
		const hits = await base.search('Where do I live now?', { userId: 'ana', k: 5 });
		assert.deepEqual(texts(hits).slice(0, 2), [NEW, OLD]);
		assert.equal(hits[0].lexicalRank, undefined, 'the newer one did not match the words');
		assert.ok(hits[0].score >= hits[1].score, 'scores stay in order');
	});

	it('does the same in hybrid search, and not in vector-only search', async () => {
		const base = setup(true);
		await say(base, OLD);
		await chatter(base, 20);
		await say(base, NEW);
		await base.sync();
		const hybrid = await base.search('Where do I live now?', { userId: 'ana', k: 5 });
		assert.deepEqual(texts(hybrid).slice(0, 2), [NEW, OLD]);
		const vector = await base.search('Where do I live now?', {
			userId: 'ana',
			k: 20,
			mode: 'vector',
		});
		const at = (t: string) => texts(vector).indexOf(t);
		assert.ok(at(OLD) >= 0 && (at(NEW) < 0 || at(NEW) > at(OLD)), 'vector order is untouched');
	});

	it("never brings in another user's or another conversation's message", async () => {
		const base = setup();
		await say(base, OLD, 's1', 'ana');
		await chatter(base, 20, 's1', 'ana');
		await chatter(base, 20, 's2', 'bob');
		await say(base, NEW, 's2', 'bob');
		const mine = await base.search('Where do I live now?', { userId: 'ana', k: 10 });
		assert.ok(!texts(mine).includes(NEW), "bob's message stays out of ana's results");
		assert.equal(texts(mine)[0], OLD);
		await say(base, 'We might move from Lyon, who knows.', 's3', 'ana');
		const one = await base.search('Where do I live now?', { sessionId: 's1', k: 10 });
		assert.ok(
			texts(one).every((t) => !t.includes('who knows')),
			'only conversation s1',
		);
	});

	it('keeps to the time filter, and a mention must be newer than its match', async () => {
		const base = setup();
		await say(base, NEW);
		await chatter(base, 20);
		await say(base, OLD);
		const until = new Date(START + (day - 1) * DAY).toISOString();
		const hits = await base.search('Where do I live now?', { userId: 'ana', k: 5, until });
		assert.ok(!texts(hits).includes(OLD), 'outside the filter');
		const all = await base.search('Where did we move to?', { userId: 'ana', k: 5 });
		assert.equal(texts(all)[0], OLD, 'the later message names Lyon: it goes above the earlier');
	});

	it('does not treat a word most messages share as a name (small scopes)', async () => {
		const base = setup();
		await say(base, 'I live in Lyon.');
		await say(base, 'I like Lyon coffee.');
		await say(base, 'My sister lives in Paris.');
		const hits = await base.search('live', { userId: 'ana', k: 3 });
		assert.equal(texts(hits)[0], 'I live in Lyon.', 'no reordering on a word in two of three');
	});
});
