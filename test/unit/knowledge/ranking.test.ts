// Ranking on what real conversations need: a later message that names what the best match names
// never goes above it unless it answers the query about as well (and only with a recency half-life);
// distinct messages with similar vectors are all returned (only the same words are one message); a
// weak vector ranking cannot drag a strong word match down; the message beside a match comes in
// below it, within the search's scope only; every match says its cosine and BM25; Minimum Similarity.
// Captures are stamped with a mocked clock (Date only), one day apart.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';

import { InvalidInputError, LocalDiskStorage, MemoryBase } from '../../../src/internal';
import type { Embedder } from '../../../src/internal';
import { cosine, seededRandom, TestEmbedder } from '../../support/embeddings';
import { tempDir } from '../../support/storages';

const DAY = 86_400_000;
const START = Date.parse('2026-01-01T09:00:00Z');
let day = 0;
let run = 0;

function setup(embedder?: Embedder) {
	const storage = new LocalDiskStorage({ root: tempDir('ranking') });
	return new MemoryBase({ storage, baseId: 'kb', threshold: 1_000_000, embedder });
}

/** Captures one message, a day after the previous one. */
async function say(
	base: MemoryBase,
	text: string,
	sessionId = 's1',
	userId = 'ana',
	role = 'user',
) {
	mock.timers.setTime(START + ++day * DAY);
	await base.capture({ sessionId, userId, runId: `r${++run}`, messages: [{ text, role }] });
}

/** Filler that shares no words with the facts, so the scope is large enough for names to be rare. */
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

/**
 * Vectors that cluster tightly, as averaged word vectors and many real models do: every text is one
 * shared direction plus a little of its own, so distinct texts have cosines of 0.90–0.99.
 */
class DenseEmbedder implements Embedder {
	constructor(private readonly spread = 0.12) {}
	embed(text: string): number[] {
		const own = new TestEmbedder(64).embedQuery(text);
		return own.then((v) => v.map((x, i) => (i % 7 === 0 ? 1 : 0.2) + this.spread * x)) as never;
	}
	async embedDocuments(texts: string[]) {
		return Promise.all(texts.map((t) => this.embed(t)));
	}
	async embedQuery(text: string) {
		return this.embed(text);
	}
}

/** Gives each text "row i" the i-th row and "query j" the j-th query: vectors chosen by the test. */
class TableEmbedder implements Embedder {
	constructor(
		private readonly rows: number[][],
		private readonly queries: number[][],
	) {}
	private of(text: string): number[] {
		const [kind, n] = text.split(' ');
		return (kind === 'row' ? this.rows : this.queries)[Number(n)];
	}
	async embedDocuments(texts: string[]) {
		return texts.map((t) => this.of(t));
	}
	async embedQuery(text: string) {
		return this.of(text);
	}
}

describe('ranking on real conversations', () => {
	beforeEach(() => mock.timers.enable({ apis: ['Date'], now: START }));
	afterEach(() => mock.timers.reset());

	it('a later message naming what the best match names, but not answering the question, stays below it', async () => {
		for (const embedder of [undefined, new TestEmbedder()]) {
			const base = setup(embedder);
			const EVIDENCE = 'I moved here from Sweden four years ago, for the job.';
			const LATER =
				'It must have been special at your wedding in Sweden! I wish I had known you then.';
			await say(base, EVIDENCE);
			await chatter(base, 20);
			await say(base, LATER);
			if (embedder) await base.sync();
			for (const halfLifeDays of [undefined, 180]) {
				const hits = await base.search('Where did I move from four years ago?', {
					userId: 'ana',
					k: 5,
					halfLifeDays,
				});
				assert.equal(
					texts(hits)[0],
					EVIDENCE,
					`${embedder ? 'hybrid' : 'lexical'} ${halfLifeDays}`,
				);
			}
		}
	});

	it('with a half-life, the newer of two statements that answer the question alike comes first', async () => {
		const base = setup();
		const OLD = 'I live in Lyon, so anything near there works for me.';
		const NEW = 'We live in Oslo now: we moved from Lyon in March.';
		await say(base, OLD);
		await chatter(base, 20);
		await say(base, NEW);
		const plain = await base.search('Where do I live?', { userId: 'ana', k: 5 });
		assert.deepEqual(new Set(texts(plain).slice(0, 2)), new Set([OLD, NEW]));
		const recent = await base.search('Where do I live?', {
			userId: 'ana',
			k: 5,
			halfLifeDays: 180,
		});
		assert.deepEqual(texts(recent).slice(0, 2), [NEW, OLD]);
		assert.ok(recent[0].score >= recent[1].score, 'scores stay in order');
	});

	it('distinct messages whose vectors are 0.95+ alike are all returned; the same words are one', async () => {
		const embedder = new DenseEmbedder();
		const a = await embedder.embedQuery('my dog is called Biscuit');
		const b = await embedder.embedQuery('my cat is called Pepper');
		assert.ok(cosine(a, b) >= 0.95, `the stand-in clusters: ${cosine(a, b)}`);
		const base = setup(embedder);
		for (const t of [
			'my dog is called Biscuit',
			'my cat is called Pepper',
			'My dog is called  Biscuit!',
		])
			await say(base, t);
		await base.sync();
		for (const mode of ['vector', 'hybrid'] as const) {
			const hits = await base.search('what are my pets called', { userId: 'ana', k: 5, mode });
			assert.equal(hits.length, 2, `${mode}: ${JSON.stringify(texts(hits))}`);
			assert.ok(texts(hits).some((t) => t.includes('Pepper')));
		}
	});

	it('a weak vector ranking does not drag a strong word match down', async () => {
		// The hashed stand-in ranks by shared words; the date-and-name prefix every message carries
		// dominates it, as it does on real logs, while only the evidence holds the rare word.
		const base = setup(new TestEmbedder());
		const prefix = (i: number) => `Caroline (2 pm on ${i} May, 2023): `;
		for (let i = 0; i < 30; i++)
			await say(base, `${prefix(1)}what a lovely day it was, number ${i}`);
		await say(
			base,
			`${prefix(9)}I finally went to the pottery workshop yesterday, after weeks of planning, with my sister, her two kids, the neighbours and their enormous friendly dog called Rex.`,
		);
		await base.sync();
		const hits = await base.search('When did Caroline go to the pottery workshop on 1 May?', {
			userId: 'ana',
			k: 5,
		});
		assert.match(hits[0].text, /pottery/);
	});

	it('brings in the message beside a match, below it, within the scope only', async () => {
		const base = setup();
		await say(base, 'What did you paint last weekend?', 's1', 'ana', 'assistant');
		const until = new Date(START + day * DAY).toISOString();
		await say(base, 'A sunrise over the lake, in watercolours.', 's1', 'ana', 'user');
		await say(base, 'Unrelated: please book a table for two.', 's1', 'ana', 'user');
		await say(base, 'A sunrise over the bay, in oil.', 's2', 'bob', 'user');
		await chatter(base, 10);
		const hits = await base.search('what did I paint', { userId: 'ana', k: 5 });
		assert.equal(texts(hits)[0], 'What did you paint last weekend?');
		assert.equal(texts(hits)[1], 'A sunrise over the lake, in watercolours.');
		assert.equal(hits[1].context, true);
		assert.equal(hits[1].lexicalScore, 0, 'its own words did not match');
		assert.ok(hits[1].score < hits[0].score && hits[1].score > 0);
		assert.ok(!texts(hits).some((t) => t.includes('bay')), "bob's message never comes in");
		const early = await base.search('what did I paint', { userId: 'ana', k: 5, until });
		assert.deepEqual(
			texts(early),
			['What did you paint last weekend?'],
			'nor one past the time filter',
		);
	});

	it('every match carries its cosine and its BM25; Minimum Similarity leaves out the rest', async () => {
		const embedder = new TestEmbedder();
		const base = setup(embedder);
		await say(base, 'My order number is 4471');
		await say(base, 'The order shipped from Lyon');
		await chatter(base, 60);
		await base.sync();
		const hits = await base.search('order 4471', { userId: 'ana', k: 10 });
		const q = await embedder.embedQuery('order 4471');
		for (const h of hits) {
			assert.equal(typeof h.similarity, 'number', JSON.stringify(h));
			const exact = cosine(q, await embedder.embedQuery(h.text));
			assert.ok(Math.abs(h.similarity! - exact) < 1e-5, `${h.similarity} vs ${exact}`);
		}
		assert.ok(hits[0].lexicalScore! > 0);
		const floor = hits[1].similarity!;
		const above = await base.search('order 4471', { userId: 'ana', k: 10, minSimilarity: floor });
		assert.ok(above.length >= 1 && above.every((h) => h.similarity! >= floor));
		assert.ok(above.length < hits.length);
		await assert.rejects(
			base.search('order', { userId: 'ana', mode: 'lexical', minSimilarity: 0.5 }),
			InvalidInputError,
		);
		await assert.rejects(
			base.search('order', { userId: 'ana', minSimilarity: 2 }),
			InvalidInputError,
		);
	});

	it('vector search is exact at 8 dimensions with 1,100 dense chunks in one conversation, k = 30', async () => {
		const rand = seededRandom(8);
		const centre = Array.from({ length: 8 }, () => 0.5 + rand());
		const near = () => centre.map((x) => x + 0.3 * rand());
		const rows = Array.from({ length: 1100 }, near);
		const queries = Array.from({ length: 10 }, near);
		const base = setup(new TableEmbedder(rows, queries));
		for (let i = 0; i < rows.length; i += 50)
			await base.capture({
				sessionId: 's1',
				runId: `r${i}`,
				messages: rows.slice(i, i + 50).map((_, j) => ({ text: `row ${i + j}` })),
			});
		await base.sync();
		for (let q = 0; q < queries.length; q++) {
			const hits = await base.search(`query ${q}`, { sessionId: 's1', k: 30, mode: 'vector' });
			const exact = rows
				.map((r, i) => ({ i, s: cosine(r, queries[q]) }))
				.sort((a, b) => b.s - a.s || a.i - b.i)
				.slice(0, 30);
			assert.ok(exact[29].s > 0.9, `dense: ${exact[29].s}`);
			assert.deepEqual(
				texts(hits),
				exact.map((e) => `row ${e.i}`),
			);
			hits.forEach((h, i) => assert.ok(Math.abs(h.similarity! - exact[i].s) < 1e-6));
		}
	});
});
