// Matches that tie at a search's k-th best score in a term tier: the first in chunkOrder go first, and
// chunkOrder starts with the capture time, which a tier's word rows carry (to the second). So only the
// tied documents of the earliest seconds are read, never every segment holding one of them; a time the
// rows cannot order (not in canonical form) is always read. Answers stay those of every segment loaded.
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';

import type { IndexedChunk } from '../../../src/indexes/chunks/chunk';
import type { LexicalIndex } from '../../../src/indexes/lexical/lexical-index';
import { allRows } from '../../../src/indexes/lexical/postings';
import {
	bucketKey,
	decodeBucket,
	encodeBucket,
	ROW,
	timeKey,
	TIMED_ROW,
	wordRow,
} from '../../../src/indexes/lexical/tiers';
import { lexicalView } from '../../../src/indexes/lexical/view';
import {
	clearAllCaches,
	CorruptDocumentError,
	LocalDiskStorage,
	maintainTiers,
	SETTLING,
	settleTiers,
	tiersOf,
} from '../../../src/internal';
import { seededRandom } from '../../support/embeddings';
import { tempDir } from '../../support/storages';
import { assertExact, countedSearch, docs, indexOn, QUERIES } from '../../support/term-tiers';

const MINUTE = 60_000;
const START = Date.UTC(2026, 2, 1);

/**
 * 4,000 chunks at distinct minutes in shuffled order (the earliest are spread over the segments);
 * every tenth says "tieword" in three words, so a search of it ties every one of them.
 */
function tied(count = 4000): IndexedChunk[] {
	const rand = seededRandom(31);
	const minutes = Array.from({ length: count }, (_, i) => i);
	for (let i = count - 1; i > 0; i--) {
		const j = Math.floor((rand() + 0.5) * (i + 1));
		[minutes[i], minutes[j]] = [minutes[j], minutes[i]];
	}
	return docs(count, 8).map((d, i) => ({
		...d,
		text: i % 10 === 0 ? `tieword w${i % 7}x w${i % 11}x` : d.text,
		created_at: new Date(START + minutes[i] * MINUTE).toISOString(),
	}));
}

/** Segments a tier covers that one search of everything read, and its answer. */
async function tierReads(root: string, query: string, k: number) {
	const { got, covered, gets } = await countedSearch(new LocalDiskStorage({ root }), query, k);
	const read = [...gets.keys()].filter((key) => covered.has(key));
	return { got, read: read.length, covered: covered.size };
}

/** The answer of every segment loaded at once. */
async function fullAnswer(index: LexicalIndex, query: string, k: number) {
	return (await (await lexicalView([index], {})).search(query, k)).map((m) => [m.id, m.score]);
}

/** Rewrites the index's tiers as tiers built before carried capture seconds (four values a row). */
async function untimed(storage: LocalDiskStorage, index: LexicalIndex) {
	const { doc } = await index.readManifest(true);
	for (const tier of doc.terms ?? []) {
		if (!tier.timed) continue;
		const old = { ...tier, timed: false };
		for (let b = 0; b < tier.buckets; b++) {
			const key = bucketKey(index.segmentsPrefix, tier, b);
			const got = await storage.get(key);
			const bucket = new Map<string, Uint32Array>();
			for (const [term, postings] of decodeBucket(key, got!.body, tier, b)) {
				const rows = allRows(postings);
				const four: number[] = [];
				for (let i = 0; i < rows.length; i += TIMED_ROW) four.push(...rows.subarray(i, i + ROW));
				bucket.set(term, Uint32Array.from(four));
			}
			await storage.put(key, encodeBucket(bucket, old, b));
		}
	}
	await index.update((cur) => ({
		...cur.doc,
		terms: cur.doc.terms?.map(({ timed: _, ...t }) => t),
	}));
	clearAllCaches();
}

beforeEach(() => clearAllCaches());

describe('ties at the k-th best score of a term tier', () => {
	it('a capture second is known only for canonical times after 1970', () => {
		assert.equal(timeKey('2026-03-01T00:00:01.000Z'), Date.UTC(2026, 2, 1) / 1000 + 2);
		assert.equal(timeKey('2026-03-01T00:00:01.999Z'), timeKey('2026-03-01T00:00:01.000Z'));
		for (const other of [
			'2026-03-01T00:00:01Z',
			'2026-03-01T01:00:01.000+01:00',
			'1969-12-31T23:59:59.000Z',
			'soon',
		])
			assert.equal(timeKey(other), 0, other);
		// A lower key is an earlier time as text too (what chunkOrder compares).
		const a = '2026-03-01T00:00:59.999Z';
		const b = '2026-03-01T00:01:00.000Z';
		assert.ok(a < b && timeKey(a) < timeKey(b));
	});

	it('a word bucket says whether its rows carry capture seconds: read as the other kind, it is an error naming it', () => {
		const tier = {
			id: 'a'.repeat(18),
			segments: 2,
			n: 3,
			total: 9,
			buckets: 1,
			postings: 2,
			sessionBuckets: 1,
			sessionRows: 1,
			bytes: 0,
			timed: true,
		};
		const rows = Uint32Array.from([0, 1, 1, 3, 1000, 1, 0, 2, 4, 1001]);
		const timed = encodeBucket(new Map([['w0x', rows]]), tier, 0);
		assert.deepEqual(allRows(decodeBucket('k', timed, tier, 0).get('w0x')!), rows);
		// Five values a row read as four (what an earlier version expects), and four read as five.
		const untimed = { ...tier, timed: false };
		assert.throws(
			() => decodeBucket('k/terms-0.trm', timed, untimed, 0),
			(e: Error) => e instanceof CorruptDocumentError && e.message.includes('k/terms-0.trm'),
		);
		const four = encodeBucket(new Map([['w0x', Uint32Array.from([0, 1, 1, 3])]]), untimed, 0);
		assert.throws(() => decodeBucket('k', four, tier, 0), CorruptDocumentError);
		// Damaged binary buckets: each an error naming what is wrong, never fewer rows (more in
		// term-buckets.test.ts).
		for (const [what, bytes] of [
			['cut short', timed.subarray(0, timed.length - 4)],
			['gzipped', gzipSync(timed)],
			['not rows', Buffer.concat([Buffer.from('LLMTRM09'), timed.subarray(8)])],
		] as const)
			assert.throws(() => decodeBucket('k/b.trm', bytes, tier, 0), CorruptDocumentError, what);
		// Conversation buckets keep four values a row in every tier.
		const sessions = encodeBucket(new Map([['s-1', Uint32Array.from([0, 2, 1, 5])]]), tier, 1);
		assert.equal(decodeBucket('k', sessions, untimed, 1).get('s-1')!.length, ROW);
	});

	it('only the tied documents of the earliest seconds are read, and the answer is every segment’s', async () => {
		const root = tempDir('tier-ties');
		const storage = new LocalDiskStorage({ root });
		const index = indexOn(storage);
		await index.addOlder(tied());
		await settleTiers(index);
		assert.ok(tiersOf((await index.readManifest(true)).doc).usable.every((t) => t.tier.timed));
		for (const k of [1, 5, 12]) {
			const { got, read, covered } = await tierReads(root, 'tieword', k);
			assert.deepEqual(
				got.filter((m) => !m.context).map((m) => [m.id, m.score]),
				await fullAnswer(index, 'tieword', k),
				`k=${k}`,
			);
			// The k earliest, and the messages beside them (their conversations' segments).
			assert.ok(read <= 3 * k, `k=${k}: ${read} of ${covered} segments read`);
		}
		await assertExact(index, [...QUERIES, 'tieword', 'tieword w3x']);

		// The same tiers without capture seconds read every segment holding a tied document.
		await untimed(storage, index);
		const before = await tierReads(root, 'tieword', 5);
		assert.deepEqual(
			before.got.filter((m) => !m.context).map((m) => [m.id, m.score]),
			await fullAnswer(index, 'tieword', 5),
		);
		assert.ok(before.read > 20, `${before.read} of ${before.covered} segments read`);
		await assertExact(index, ['tieword']);
	});

	it('every document ties, each one earlier than the last: too many for one walk to keep, a second walk answers as every segment', async () => {
		const count = 17_000;
		const all = docs(count, 8).map((d, i) => ({
			...d,
			text: `flatword w${i % 3}x`,
			created_at: new Date(START + (count - i) * 1000).toISOString(),
		}));
		const root = tempDir('tier-ties-walks');
		const index = indexOn(new LocalDiskStorage({ root }));
		await index.addOlder(all);
		// Newer chunks after them, so that every segment saying the word is in a tier.
		await index.add(docs(40 * SETTLING, 9, count));
		await settleTiers(index);
		const { usable } = tiersOf((await index.readManifest(true)).doc);
		assert.ok(usable.reduce((n, t) => n + t.refs.length, 0) * 40 >= count);
		for (const k of [1, 30]) {
			const { got, read } = await tierReads(root, 'flatword', k);
			assert.deepEqual(
				got.filter((m) => !m.context).map((m) => [m.id, m.score]),
				await fullAnswer(index, 'flatword', k),
				`k=${k}`,
			);
			assert.ok(read <= 3 * k, `k=${k}: ${read} segments read`);
		}
	});

	it('times not in canonical form are read whenever they tie, and ordered as text', async () => {
		const root = tempDir('tier-ties-text');
		const index = indexOn(new LocalDiskStorage({ root }));
		const all = tied();
		// Earlier as text than every canonical time here, hours later as time: never cut by seconds.
		for (const [n, at] of [
			[1230, '2026-02-28T23:00:00-05:00'],
			[2470, '2026-02-28T20:00:00-12:00'],
			[3330, '2026-02-28T22:00:00.000-06:00'],
			// Later as text than every canonical time here: never counted as before one.
			[1500, '2026-03-05'],
			[2900, '2026-03-06T00:00:00+00:00'],
		] as const)
			all[n] = { ...all[n], created_at: at };
		await index.addOlder(all);
		await settleTiers(index);
		const { got } = await tierReads(root, 'tieword', 5);
		const ids = got.filter((m) => !m.context).map((m) => m.id);
		assert.deepEqual(ids.slice(0, 3), ['c-2470', 'c-3330', 'c-1230']);
		for (const k of [5, 8]) {
			const { got: matches } = await tierReads(root, 'tieword', k);
			assert.deepEqual(
				matches.filter((m) => !m.context).map((m) => [m.id, m.score]),
				await fullAnswer(index, 'tieword', k),
				`k=${k}`,
			);
			assert.ok(!matches.some((m) => m.id === 'c-1500' || m.id === 'c-2900'));
		}
	});

	it('the earliest tied documents superseded by newer copies give way to the next earliest', async () => {
		const root = tempDir('tier-ties-superseded');
		const index = indexOn(new LocalDiskStorage({ root }));
		const all = tied();
		await index.addOlder(all);
		await settleTiers(index);
		const first = await fullAnswer(index, 'tieword', 3);
		// Newer copies of the two earliest, in the tail: one without the word, one with it twice.
		const byId = new Map(all.map((d) => [d.id, d]));
		await index.add([
			{ ...byId.get(String(first[0][0]))!, text: 'w0x w1x w2x' },
			{ ...byId.get(String(first[1][0]))!, text: 'tieword tieword w2x' },
		]);
		// The tiers' copies still count in the statistics (until a merge drops them): the order is compared.
		for (const k of [1, 3, 6]) {
			const { got } = await tierReads(root, 'tieword', k);
			assert.deepEqual(
				got.filter((m) => !m.context).map((m) => m.id),
				(await fullAnswer(index, 'tieword', k)).map(([id]) => id),
				`k=${k}`,
			);
		}
		const { got } = await tierReads(root, 'tieword', 3);
		assert.equal(got.filter((m) => m.id === first[0][0]).length, 0);
		assert.equal(got.find((m) => !m.context)!.id, first[1][0], 'its copy says it twice');
	});

	it('a Forget of the earliest tied documents’ conversation: its rows leave the timed tier, the next earliest come in', async () => {
		const root = tempDir('tier-ties-forget');
		const index = indexOn(new LocalDiskStorage({ root }));
		await index.addOlder(tied());
		await settleTiers(index);
		const first = await fullAnswer(index, 'tieword', 5);
		const all = await (await lexicalView([index], {})).search('tieword', 5);
		const session = all.find((m) => m.id === first[0][0])!.session_id;
		assert.ok((await index.forgetSession(session)) > 0);
		const tiers = tiersOf((await index.readManifest(true)).doc).usable;
		assert.ok(tiers.length > 0 && tiers.every((t) => t.tier.timed), 'the tiers are kept, timed');
		for (const k of [1, 5, 12]) {
			const { got } = await tierReads(root, 'tieword', k);
			assert.deepEqual(
				got.filter((m) => !m.context).map((m) => [m.id, m.score]),
				await fullAnswer(index, 'tieword', k),
				`k=${k}`,
			);
			assert.ok(got.every((m) => m.session_id !== session));
		}
		await assertExact(index, ['tieword', 'w0x', 'tieword w3x']);
	});

	it('a tier built before (four values a row) merged with a timed one: the merged tier is not timed, answers as before', async () => {
		const root = tempDir('tier-ties-merge');
		const storage = new LocalDiskStorage({ root });
		const index = indexOn(storage);
		const all = tied(40 * 24);
		await index.addOlder(all.slice(0, 40 * 12));
		await settleTiers(index);
		await untimed(storage, index);
		await index.addOlder(all.slice(40 * 12));
		while (await maintainTiers(index, (await index.readManifest(true)).doc));
		const tiers = tiersOf((await index.readManifest(true)).doc).usable.map((t) => t.tier);
		assert.ok(tiers.length >= 1);
		const merged = tiers.filter((t) => t.segments > 12);
		assert.ok(merged.length > 0, 'the two tiers merged');
		for (const t of merged) assert.equal(wordRow(t), ROW);
		await assertExact(index, [...QUERIES, 'tieword', 'tieword w3x']);
	});
});
