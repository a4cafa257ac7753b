// Recall in the engine: a lexical index updated at every capture (any language), hybrid search fused
// by weighed scaled scores with a recency half-life and repeats merged, user scope across
// conversations (never another user's), refusals before anything is read, mismatch errors instead of
// empty answers, and the recall section a model call gets.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	captureLogKey,
	CrossUserSearchError,
	FAN,
	fuse,
	IndexMismatchError,
	InvalidIdError,
	lexicalPartFolder,
	LocalDiskStorage,
	MemoryBase,
	memoryBaseConfigKey,
	RECALL_END,
	RECENCY_WEIGHT,
	recencyFactor,
	VECTOR_WEIGHT_PRIOR,
	RECALL_START,
	sessionPart,
	TAIL_MAX,
	tokenize,
} from '../../../src/internal';
import type { MemoryBaseOptions } from '../../../src/internal';
import { TestEmbedder } from '../../support/embeddings';
import { InstrumentedStorage, tempDir } from '../../support/storages';

function setup(extra: Partial<MemoryBaseOptions> = {}) {
	const root = tempDir('hybrid');
	const storage = new InstrumentedStorage(new LocalDiskStorage({ root }));
	const base = new MemoryBase({ storage, baseId: 'kb', threshold: 1_000_000, ...extra });
	return { root, storage, base };
}

let run = 0;
const say = (
	base: MemoryBase,
	sessionId: string,
	text: string,
	extra: { userId?: string; role?: string } = {},
) =>
	base.capture({
		sessionId,
		userId: extra.userId,
		runId: `run-${++run}`,
		messages: [{ text, role: extra.role ?? 'user' }],
	});

const texts = (hits: Array<{ text: string }>) => hits.map((h) => h.text);

describe('lexical index: updated at capture, any language', () => {
	it('finds a fact at once, before any sync, with no embedding model connected', async () => {
		const { base } = setup();
		await say(base, 'c1', 'My order number is 4471 and it ships from Lyon');
		await say(base, 'c1', 'I like hiking in the Alps');
		const hits = await base.search('where does order 4471 ship from?', { sessionId: 'c1' });
		assert.equal(hits[0].text, 'My order number is 4471 and it ships from Lyon');
		assert.equal(hits[0].lexicalRank, 1);
		assert.equal(hits[0].vectorRank, undefined);
		assert.equal((await base.status()).sessions[0].pending, 2, 'nothing was synced');
	});

	it('tokenizes Chinese, Japanese and Thai with Intl.Segmenter, folds case and accents, trims English endings', async () => {
		assert.deepEqual(tokenize('我住在北京'), ['我', '住在', '北京']);
		assert.ok(tokenize('東京に住んでいます').includes('東京'));
		assert.ok(tokenize('ฉันอาศัยอยู่ในกรุงเทพ').includes('กรุงเทพ'));
		assert.deepEqual(tokenize('CAFÉ Crème'), tokenize('cafe creme'));
		assert.deepEqual(tokenize('moved moving moves'), ['mov', 'mov', 'mov']);
		const { base } = setup();
		await say(base, 'zh', '我住在北京，每天坐地铁上班');
		await say(base, 'zh', '我喜欢喝咖啡');
		await say(base, 'th', 'ฉันอาศัยอยู่ในกรุงเทพ');
		assert.equal(
			(await base.search('北京', { sessionId: 'zh' }))[0].text,
			'我住在北京，每天坐地铁上班',
		);
		assert.equal((await base.search('กรุงเทพ', { sessionId: 'th' }))[0].text, 'ฉันอาศัยอยู่ในกรุงเทพ');
		assert.equal((await base.search('Café', { allUsers: true })).length, 0);
	});

	it('seals the tail into segments and merges FAN of a level into one of the next; every chunk stays findable', async () => {
		const { base, storage } = setup();
		// Captured messages reach the manifest when their log seals them (SEAL_AT at a time); the
		// newest stay in the logs. Twice what one merge needs, so the manifest sees one for sure.
		const n = 2 * TAIL_MAX * FAN;
		// One conversation without a user: its own partition, whose segments merge.
		for (let i = 0; i < n; i++) await say(base, 's', `note number${i} about topic${i}`);
		const folder = lexicalPartFolder('kb', { part: sessionPart('s') });
		const manifest = JSON.parse(
			Buffer.from((await storage.get(`${folder}manifest.json`))!.body).toString(),
		) as { tail: unknown[]; segments: Array<{ level: number }> };
		assert.ok(
			manifest.segments.some((s) => s.level === 1),
			'a merged segment',
		);
		assert.ok(manifest.segments.length < FAN);
		assert.ok(manifest.tail.length <= TAIL_MAX);
		for (const i of [0, 77, n - 1])
			assert.equal(
				(await base.search(`number${i}`, { k: 1, allUsers: true }))[0].text,
				`note number${i} about topic${i}`,
			);
		const status = await base.status();
		assert.equal(status.lexical?.chunks, n);
		assert.equal(status.mismatch, false);
	});
});

describe('search scope: a conversation, a user, or every user on purpose', () => {
	it('refuses a search without a conversation or a user before reading anything', async () => {
		const { base, storage } = setup();
		await say(base, 'c', 'secret of alice', { userId: 'alice' });
		const before = { ...storage.calls };
		await assert.rejects(base.search('secret'), CrossUserSearchError);
		await assert.rejects(base.search('secret', { k: 3 }), CrossUserSearchError);
		for (const bad of [{ a: 1 }, ['x'], 7, '', 'a/b'])
			await assert.rejects(
				base.search('secret', { userId: bad as unknown as string }),
				InvalidIdError,
				JSON.stringify(bad),
			);
		await assert.rejects(
			base.capture({
				sessionId: 'c',
				runId: 'r',
				userId: { id: 1 } as unknown as string,
				texts: ['x'],
			}),
			InvalidIdError,
		);
		assert.deepEqual(storage.calls, before, 'nothing read or written');
	});

	it("a user's memories span every conversation and workflow of the base; another user's never appear", async () => {
		const { base, storage } = setup();
		// Another workflow using the same Base ID: another MemoryBase object on the same storage.
		const other = new MemoryBase({ storage, baseId: 'kb', threshold: 1_000_000 });
		await say(base, 'alice-1', 'My sister is called Ines', { userId: 'alice' });
		await say(other, 'alice-2', 'I bought a red bicycle', { userId: 'alice' });
		await say(base, 'bob-1', 'My sister is called Marta and I bought a blue bicycle', {
			userId: 'bob',
		});
		const alice = await base.search('sister bicycle', { userId: 'alice', k: 10 });
		assert.deepEqual(texts(alice).sort(), ['I bought a red bicycle', 'My sister is called Ines']);
		assert.ok(alice.every((h) => h.userId === 'alice'));
		const bob = await other.search('sister', { userId: 'bob', k: 10 });
		assert.deepEqual(texts(bob), ['My sister is called Marta and I bought a blue bicycle']);
		const all = await base.search('sister', { allUsers: true, k: 10 });
		assert.equal(all.length, 2);
	});

	it('filters by time', async () => {
		const { base } = setup();
		await say(base, 'c', 'first report about the outage');
		const middle = new Date();
		await new Promise((r) => setTimeout(r, 5));
		await say(base, 'c', 'second report about the outage');
		const after = await base.search('outage report', { sessionId: 'c', since: middle });
		assert.deepEqual(texts(after), ['second report about the outage']);
		const before = await base.search('outage report', { sessionId: 'c', until: middle });
		assert.deepEqual(texts(before), ['first report about the outage']);
	});
});

describe('hybrid ranking', () => {
	it('fuses the lexical and the vector ranking; modes choose one', async () => {
		const { base } = setup({ embedder: new TestEmbedder(), threshold: 1 });
		await say(base, 'c', 'The invoice for March was paid by bank transfer');
		await say(base, 'c', 'We talked about the weather in March');
		await say(base, 'c', 'The dog needs a walk');
		const hybrid = await base.search('invoice paid', { sessionId: 'c' });
		assert.equal(hybrid[0].text, 'The invoice for March was paid by bank transfer');
		assert.equal(hybrid[0].lexicalRank, 1);
		assert.equal(hybrid[0].vectorRank, 1);
		assert.ok(hybrid[0].score > 0.99 && hybrid[0].score <= 1);
		const lexical = await base.search('invoice paid', { sessionId: 'c', mode: 'lexical' });
		assert.ok(lexical.every((h) => h.vectorRank === undefined));
		const vector = await base.search('invoice paid', { sessionId: 'c', mode: 'vector' });
		assert.ok(vector.every((h) => h.lexicalRank === undefined));
	});

	it('a newer statement of a fact outranks an older one under a half-life', async () => {
		const { base, storage } = setup();
		await say(base, 'c1', 'I live in Lyon near the old town', { userId: 'u' });
		// Age the first statement by rewriting its capture time where the lexical index reads it, its
		// capture log (as if said in 2025).
		const key = captureLogKey('kb', 'c1');
		const log = JSON.parse(Buffer.from((await storage.get(key))!.body).toString());
		log.messages[0].created_at = '2025-01-10T10:00:00.000Z';
		writeFileSync(path.join((storage.inner as LocalDiskStorage).root, key), JSON.stringify(log));
		await say(base, 'c2', 'I moved from Lyon to Oslo, so I live in Oslo now', { userId: 'u' });
		const plain = await base.search('where do I live', { userId: 'u' });
		const recent = await base.search('where do I live', { userId: 'u', halfLifeDays: 30 });
		assert.equal(recent[0].text, 'I moved from Lyon to Oslo, so I live in Oslo now');
		assert.ok(recent[0].score > recent[1].score);
		assert.equal(plain.length, 2);
	});

	it('fusion scales each ranking over its candidates and weighs them; recency only orders close matches', () => {
		const chunk = (id: string, score: number, created_at = '2026-01-01T00:00:00.000Z') => ({
			id,
			session_id: 's',
			message_id: id,
			seq: 0,
			run_id: 'r',
			chunk_index: 0,
			text: id,
			created_at,
			score,
		});
		const others = (n: number, top: number) =>
			Array.from({ length: n }, (_, i) => chunk(`x${i}`, top - i * 0.01));
		// "a" is first by its words and last of ten by vector; "b" is last by words and first by vector.
		// Without weights words weigh more, so "a" leads; a chunk in neither list is not there.
		const lexical = [chunk('a', 9), ...others(3, 5), chunk('b', 1)];
		const vector = [chunk('b', 0.9), ...others(8, 0.8), chunk('a', 0.1)];
		const fused = fuse(lexical, vector, { now: new Date('2026-01-02T00:00:00Z') });
		const order = (r: Array<{ text: string }>) =>
			r.filter((x) => x.text === 'a' || x.text === 'b').map((x) => x.text);
		assert.deepEqual(order(fused), ['a', 'b']);
		const a = fused.find((r) => r.text === 'a')!;
		assert.ok(
			Math.abs(a.score - (1 - VECTOR_WEIGHT_PRIOR)) < 1e-12,
			'first by words, last by vector',
		);
		// The weights a search gives decide: with the vectors weighing more, "b" leads.
		const weights = { lexical: 0.25, vector: 0.75 };
		const led = fuse(lexical, vector, { now: new Date('2026-01-02T00:00:00Z'), weights });
		assert.deepEqual(order(led), ['b', 'a']);
		assert.ok(Math.abs(led.find((r) => r.text === 'b')!.score - 0.75) < 1e-12);
		assert.equal(a.similarity, 0.1);
		assert.equal(a.lexicalScore, 9);
		// One ranking alone: its best scores 1.
		assert.equal(fuse([chunk('a', 3), chunk('b', 1)], [], { now: new Date() })[0].score, 1);
		const now = new Date('2026-07-01T00:00:00Z');
		const day = (d: number) => new Date(now.getTime() - d * 86_400_000).toISOString();
		assert.equal(recencyFactor(day(0), now, 90), 1);
		assert.ok(Math.abs(recencyFactor(day(90), now, 90) - (1 - RECENCY_WEIGHT / 2)) < 1e-9);
		assert.ok(recencyFactor(day(100_000), now, 90) >= 1 - RECENCY_WEIGHT - 1e-9);
		// A first place from long ago still beats a match half as good from today.
		const strongOld = 1 * recencyFactor(day(3650), now, 90);
		const weakNew = 0.5 * recencyFactor(day(0), now, 90);
		assert.ok(strongOld > weakNew);
	});

	it('merges near-duplicates: the same fact captured twice takes one place', async () => {
		const { base } = setup({ embedder: new TestEmbedder(), threshold: 1 });
		await say(base, 'c1', 'My favourite colour is teal', { userId: 'u' });
		await say(base, 'c2', 'my favourite colour is  teal', { userId: 'u' });
		await say(base, 'c3', 'My favourite colour is teal!', { userId: 'u' });
		await say(base, 'c3', 'I have a cat named Miso', { userId: 'u' });
		const hits = await base.search('favourite colour', { userId: 'u', k: 10 });
		assert.equal(hits.filter((h) => /colour/i.test(h.text)).length, 1, JSON.stringify(texts(hits)));
	});
});

describe('mismatch instead of an empty answer', () => {
	it('a deleted lexical index, or a base from before lexical capture, is refused until Regenerate', async () => {
		const { base, root, storage } = setup();
		await say(base, 'c', 'remember the code word pelican');
		// The conversation's partition (it has no user) deleted behind the base's back.
		rmSync(path.join(root, lexicalPartFolder('kb', { part: sessionPart('c') })), {
			recursive: true,
		});
		await assert.rejects(
			base.search('code word', { sessionId: 'c' }),
			(e: unknown) => e instanceof IndexMismatchError && /Regenerate/.test(e.message),
		);
		assert.match((await base.status()).mismatchReason ?? '', /lexical index is missing/);
		await base.regenerate(); // no embedding model: the lexical index alone is rebuilt
		assert.equal(
			(await base.search('code word', { sessionId: 'c' }))[0].text,
			'remember the code word pelican',
		);
		// A configuration written by an older version has no lexical_since.
		const config = JSON.parse(
			Buffer.from((await storage.get(memoryBaseConfigKey('kb')))!.body).toString(),
		);
		delete config.lexical_since;
		writeFileSync(path.join(root, memoryBaseConfigKey('kb')), JSON.stringify(config));
		await assert.rejects(base.search('code word', { sessionId: 'c' }), IndexMismatchError);
		await base.regenerate();
		assert.equal((await base.search('pelican', { sessionId: 'c' })).length, 1);
		assert.ok(await storage.get(captureLogKey('kb', 'c')), 'the log is untouched');
	});
});

describe('recall for a model call', () => {
	it('one marked section, dates, oldest first, within the budget, leaving out what the window holds', async () => {
		const { base } = setup();
		const facts = [
			'My order number is 4471',
			'My order was shipped to Porto',
			'The order 4471 arrived damaged',
		];
		const ids: string[] = [];
		for (const [i, f] of facts.entries()) {
			const r = await base.capture({
				sessionId: `c${i}`,
				userId: 'u',
				runId: `r${i}`,
				messages: [{ text: f, role: 'user', metadata: { messageId: `m${i}` } }],
			});
			ids.push(...r.ids);
		}
		const all = await base.recall({ query: 'what about my order 4471?', userId: 'u' });
		assert.ok(all.section.startsWith(RECALL_START) && all.section.endsWith(RECALL_END));
		assert.equal(all.hits.length, 3);
		assert.match(all.section, /- \d{4}-\d{2}-\d{2} user: My order number is 4471/);
		const order = all.hits.map((h) => h.capturedAt);
		assert.deepEqual(order, [...order].sort(), 'oldest first');
		const windowed = await base.recall({
			query: 'what about my order 4471?',
			userId: 'u',
			excludeMessageIds: ['m0'],
		});
		assert.ok(!windowed.hits.some((h) => h.text === facts[0]));
		assert.ok(windowed.skipped >= 1);
		const small = await base.recall({ query: 'order 4471', userId: 'u', tokenBudget: 60 });
		assert.ok(small.tokens <= 60 && small.hits.length < 3 && small.hits.length > 0);
		const none = await base.recall({ query: 'order 4471', userId: 'nobody' });
		assert.deepEqual([none.section, none.tokens], ['', 0]);
	});
});
