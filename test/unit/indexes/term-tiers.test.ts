// Term tiers of a word index read one segment after another: the postings of settled segments
// regrouped by word, so a search of everything reads the buckets of its words instead of every
// segment. The answers must be the ones reading every segment gives (scores, order, ties), a Forget
// must leave no word of what it removed in any tier, and a tier whose segments changed is never used.
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import type { IndexedChunk } from '../../../src/indexes/chunks/chunk';
import { retiredKeys } from '../../../src/indexes/chunks/retiring';
import { LexicalIndex } from '../../../src/indexes/lexical/lexical-index';
import { streamedView } from '../../../src/indexes/lexical/stream';
import { lexicalView } from '../../../src/indexes/lexical/view';
import {
	bucketKeys,
	clearAllCaches,
	CorruptDocumentError,
	MAX_TIERS,
	IndexDamagedError,
	LocalDiskStorage,
	maintainTiers,
	SETTLING,
	settleTiers,
	sizeClass,
	TIER_SEGMENTS,
	tiersOf,
} from '../../../src/internal';
import { bloomMayHave, bloomPositions } from '../../../src/store/bloom';
import { tempDir } from '../../support/storages';
import {
	assertExact,
	chunk,
	countedSearch,
	docs,
	indexOn,
	QUERIES,
	storedText,
} from '../../support/term-tiers';

/** Chunks written and their tiers settled, then one search of everything with its reads counted. */
async function searchCounted(
	disk: LocalDiskStorage,
	all: IndexedChunk[],
	query: string,
	k: number,
) {
	await indexOn(disk).addOlder(all);
	await settleTiers(indexOn(disk));
	return countedSearch(disk, query, k);
}

/**
 * 20 conversations of 200 messages, taken in turns (every segment holds every conversation); two say
 * "wombatword", and notes after the first carry its flow three messages on, past the first segment read.
 */
function interleaved(): IndexedChunk[] {
	const all = docs(4000, 21).map((d, i) => ({
		...d,
		session_id: `talk-${i % 20}`,
		seq: Math.floor(i / 20),
	}));
	all[1210] = { ...all[1210], text: `wombatword ${all[1210].text}` };
	for (const n of [1, 2, 3]) all[1210 + 20 * n] = { ...all[1210 + 20 * n], role: 'fact' };
	all[2530] = { ...all[2530], text: `wombatword ${all[2530].text}` };
	return all;
}

beforeEach(() => clearAllCaches());

describe('term tiers of a word index', () => {
	it('settled segments are regrouped into few tiers, and searches answer as over every segment', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-exact') });
		const index = indexOn(storage);
		await index.addOlder(docs(4400));
		await settleTiers(index);
		const m = await index.readManifest(true);
		const { usable, stale } = tiersOf(m.doc);
		const segments = m.doc.segments.length;
		const tiered = usable.reduce((n, t) => n + t.tier.segments, 0);
		assert.equal(stale.length, 0);
		// Settled segments in whole builds: all but the newest SETTLING, and full ones (40 chunks, the
		// cap: no merge replaces them) however new; tiers of decreasing size classes.
		const settled = m.doc.segments.filter((r, i) => i < segments - SETTLING || r.count === 40);
		assert.ok(settled.length > segments - SETTLING, 'some of the newest are full');
		assert.equal(tiered, Math.floor(settled.length / TIER_SEGMENTS) * TIER_SEGMENTS);
		assert.ok(usable.length >= 2 && usable.length <= MAX_TIERS, `${usable.length} tiers`);
		for (let i = 1; i < usable.length; i++)
			assert.ok(sizeClass(usable[i - 1].tier.segments) > sizeClass(usable[i].tier.segments));
		assert.ok(usable[0].tier.buckets > 1, 'a large tier has several buckets');
		await assertExact(index);
	});

	it('a search of everything reads the buckets of its words, not the segments of a tier', async () => {
		const disk = new LocalDiskStorage({ root: tempDir('tiers-reads') });
		const all = docs(4000);
		for (const i of [100, 1700, 2900]) all[i] = chunk(i, `platypusword ${all[i].text}`);
		const { m, covered, gets, got: matches } = await searchCounted(disk, all, 'platypusword', 3);
		const read = [...gets.keys()].filter((key) => covered.has(key));
		assert.deepEqual(
			matches
				.filter((x) => !x.context)
				.map((x) => x.id)
				.sort(),
			['c-100', 'c-1700', 'c-2900'],
		);
		// Only segments that may hold a match's conversation (the best, and the messages beside them).
		const refs = new Map(m.doc.segments.map((r) => [r.key, r]));
		for (const key of read)
			assert.ok(
				matches.some((x) =>
					bloomMayHave(refs.get(key)!.bloom, bloomPositions(`s:${x.session_id}`)),
				),
				key,
			);
		assert.ok(read.length < covered.size / 2, `${read.length} of ${covered.size}`);
		// One bucket of words and one of conversations per tier.
		const buckets = [...gets.keys()].filter((key) => key.endsWith('.trm'));
		const tiers = tiersOf(m.doc).usable.length;
		assert.ok(buckets.length >= 2 && buckets.length <= 2 * tiers, `${buckets.length} buckets`);
	});

	it('adds keep the tiers up to date as they go', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-adds') });
		const index = indexOn(storage);
		const all = docs(3000, 9);
		for (let i = 0; i < all.length; i += 100) await index.add(all.slice(i, i + 100));
		const m = await index.readManifest(true);
		const { usable } = tiersOf(m.doc);
		assert.ok(usable.length >= 1, 'tiers built by adds');
		const free = m.doc.segments.slice(0, -SETTLING).filter((r) => !r.tier);
		assert.ok(free.length < TIER_SEGMENTS + 1, `${free.length} settled segments in no tier`);
		await assertExact(index);
		// No bucket is left that no listed tier names, but the replaced ones kept a while (retired).
		const listed = new Set([
			...usable.flatMap((t) => bucketKeys(index.segmentsPrefix, t.tier)),
			...retiredKeys(m.doc),
		]);
		const held = (await storage.list('kb/')).map((o) => o.key).filter((k) => k.endsWith('.trm'));
		assert.deepEqual(
			held.filter((k) => !listed.has(k)),
			[],
		);
	});

	/** The term tiers' IDs, and each one whole (every segment it names listed in its place). */
	async function tierIds(index: LexicalIndex): Promise<string[]> {
		const m = await index.readManifest(true);
		assert.deepEqual(tiersOf(m.doc).stale, [], 'no stale tier');
		return tiersOf(m.doc).usable.map((u) => u.tier.id);
	}

	it('a Forget keeps the term tiers: gone documents keep the others’ places, only the buckets that named them are written again; no word of it stays', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-forget') });
		const index = indexOn(storage);
		const all = docs(2000, 3);
		// One conversation with a word nobody else says, spread in the oldest segments.
		for (let i = 0; i < 400; i += 40) all[i] = chunk(i, 'zanzibarword w0x', 'secret-session');
		await index.addOlder(all);
		await settleTiers(index);
		const before = await tierIds(index);
		assert.ok(before.length >= 1, 'tiers built');
		const stored = async () =>
			(await storage.list('kb/')).map((o) => o.key).filter((k) => k.endsWith('.trm'));
		assert.match(await storedText(storage), /zanzibarword/);
		assert.equal(await index.forgetSession('secret-session'), 10);
		const text = await storedText(storage);
		assert.doesNotMatch(text, /zanzibarword/);
		assert.doesNotMatch(text, /secret-session/);
		assert.deepEqual(await tierIds(index), before, 'every tier kept');
		const m = await index.readManifest(true);
		const listed = (m.doc.terms ?? []).flatMap((t) => bucketKeys(index.segmentsPrefix, t));
		assert.deepEqual((await stored()).sort(), listed.sort(), 'every bucket stored is listed');
		const versions = (m.doc.terms ?? []).flatMap((t) => Object.keys(t.versions ?? {}));
		assert.ok(versions.length > 0, 'buckets written again');
		assert.equal(
			m.doc.segments.reduce((n, r) => n + (r.gone ?? 0), 0),
			10,
			'the gone documents counted',
		);
		await assertExact(index, [...QUERIES, 'zanzibarword']);
		// Later adds and upkeep merge tiers holding gone documents: still exact, and nothing comes back.
		await index.addOlder(docs(1200, 9, 5000));
		await settleTiers(index);
		await assertExact(index, [...QUERIES, 'zanzibarword']);
		assert.doesNotMatch(await storedText(storage), /zanzibarword|secret-session/);
	});

	it('a Forget whose swap loses to other writes retries without writing its segments and buckets again', async () => {
		const root = tempDir('tiers-forget-busy');
		const disk = new LocalDiskStorage({ root });
		const all = docs(2000, 7);
		for (let i = 0; i < 400; i += 40) all[i] = chunk(i, 'okapiword w0x', 'busy-session');
		await indexOn(disk).addOlder(all);
		await settleTiers(indexOn(disk));
		const puts: string[] = [];
		let adds = 0;
		const hooked = Object.assign(Object.create(disk), {
			put: async (key: string, body: Uint8Array, opts?: object) => {
				if (!key.endsWith('manifest.json')) puts.push(key);
				else if (adds < 2) {
					// Another process's write lands first, twice: the first two swaps lose.
					const cur = (await disk.get(key))!;
					const doc = JSON.parse(Buffer.from(cur.body).toString('utf8'));
					doc.updated_at = new Date(Date.now() + ++adds * 1000).toISOString();
					await disk.put(key, Buffer.from(JSON.stringify(doc)), { ifVersion: cur.version });
				}
				return disk.put(key, body, opts);
			},
		}) as LocalDiskStorage;
		const index = indexOn(hooked);
		assert.equal(await index.forgetSession('busy-session'), 10);
		assert.equal(adds, 2, 'two other writes first');
		const m = await index.readManifest(true);
		const listed = new Set([
			...m.doc.segments.map((r) => r.key),
			...(m.doc.terms ?? []).flatMap((t) => bucketKeys(index.segmentsPrefix, t)),
		]);
		assert.deepEqual(
			puts.filter((k) => !listed.has(k)),
			[],
			'every segment and bucket written is the one listed',
		);
		assert.equal(new Set(puts).size, puts.length, 'nothing written twice');
		await assertExact(index, [...QUERIES, 'okapiword']);
		assert.doesNotMatch(await storedText(disk), /okapiword|busy-session/);
	});

	it('an expiry of some messages of a conversation spread over a tier: the messages beside the best still come from the segments that hold them', async () => {
		const disk = new LocalDiskStorage({ root: tempDir('tiers-expire') });
		const all = interleaved();
		const index = indexOn(disk);
		await index.addOlder(all);
		await settleTiers(index);
		const before = await tierIds(index);
		// talk-10's messages 0-59 expire (the first of its wombat messages among them, not its flow).
		const expired = new Set(
			all.filter((d) => d.session_id === 'talk-10' && d.seq < 60).map((d) => d.id),
		);
		assert.equal(await index.forgetSession('talk-10', (d) => expired.has(d.id)), 60);
		assert.deepEqual(await tierIds(index), before, 'every tier kept');
		await assertExact(index, [...QUERIES, 'wombatword']);
		const got = await (await streamedView(index, {})).search('wombatword', 10);
		assert.ok(
			got.every((m) => !expired.has(m.id)),
			'nothing expired found',
		);
		assert.ok(got.some((m) => m.id === all[2530].id));
		// The rest of talk-10 forgotten too; then a conversation whose every chunk is in one segment.
		await index.forgetSession('talk-10');
		await assertExact(index, [...QUERIES, 'wombatword']);
		assert.deepEqual(await tierIds(index), before, 'every tier kept');
	});

	it('a segment of a tier left with only gone documents keeps its place; a search counts none of them', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-emptied') });
		const index = indexOn(storage);
		// The first 40 chunks (one segment) are one conversation's.
		const all = docs(2000, 4).map((d, i) => (i < 40 ? { ...d, session_id: 'whole' } : d));
		await index.addOlder(all);
		await settleTiers(index);
		const before = await tierIds(index);
		const first = await streamedView(index, {});
		await first.search('w0x', 5);
		const size = first.size;
		assert.equal(size, 2000);
		assert.equal(await index.forgetSession('whole'), 40);
		assert.deepEqual(await tierIds(index), before);
		const m = await index.readManifest(true);
		assert.ok(
			m.doc.segments.some((r) => r.gone === r.count),
			'a segment of gone documents listed',
		);
		const view = await streamedView(index, {});
		await view.search('w0x', 5);
		assert.equal(view.size, size - 40);
		await assertExact(index);
		// A time range reads the segments themselves: gone documents match none (their time is the epoch).
		for (const filter of [
			{ until: '2026-12-31T00:00:00.000Z' },
			{ since: '1970-01-01T00:00:00.000Z' },
		]) {
			const streamed = await streamedView(index, filter);
			const loaded = await lexicalView([index], filter);
			const [a, b] = [await streamed.search('w0x w1x', 30), await loaded.search('w0x w1x', 30)];
			assert.deepEqual(
				a.map((m) => [m.id, m.score]),
				b.map((m) => [m.id, m.score]),
			);
			assert.equal(streamed.size, 1960);
			assert.equal(loaded.size, 1960);
		}
		assert.doesNotMatch(await storedText(storage), /"whole"/);
	});

	it('a tier merge that read its buckets before a Forget rewrote them is not listed: nothing of the conversation stays', async () => {
		const root = tempDir('tiers-forget-race');
		const disk = new LocalDiskStorage({ root });
		const all = docs(2000, 6);
		for (let i = 0; i < 2000; i += 37) all[i] = chunk(i, 'quokkaword w1x', 'raced-session');
		await indexOn(disk, false).addOlder(all);
		let forgot = false;
		const hooked = Object.assign(Object.create(disk), {
			put: async (key: string, body: Uint8Array, opts?: object) => {
				const out = await disk.put(key, body, opts);
				// Upkeep wrote a bucket of a tier it builds or merges: the Forget swaps now.
				if (
					!forgot &&
					key.endsWith('.trm') &&
					(await indexOn(disk).readManifest(true)).doc.terms?.length
				) {
					forgot = true;
					await indexOn(disk).forgetSession('raced-session');
				}
				return out;
			},
		}) as LocalDiskStorage;
		await settleTiers(indexOn(hooked));
		assert.ok(forgot, 'the Forget ran mid-upkeep');
		await settleTiers(indexOn(disk));
		const index = indexOn(disk);
		await tierIds(index);
		await assertExact(index, [...QUERIES, 'quokkaword']);
		assert.doesNotMatch(await storedText(disk), /quokkaword|raced-session/);
	});

	it('a tier whose segment changed is not used, and the next upkeep drops it with its buckets', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-stale') });
		const index = indexOn(storage);
		await index.addOlder(docs(1600, 4));
		await settleTiers(index);
		const before = tiersOf((await index.readManifest(true)).doc).usable;
		assert.ok(before.length > 0);
		// A writer that knows nothing of tiers replaces a tiered segment by a copy of it.
		const victim = before[0].refs[1];
		const seg = await index.readSegment(victim);
		const copy = await index.writeSegment(victim.level, seg!.docs);
		await index.update((cur) => ({
			...cur.doc,
			segments: cur.doc.segments.map((r) => (r.key === victim.key ? copy : r)),
		}));
		const m = await index.readManifest(true);
		assert.equal(tiersOf(m.doc).stale.length, 1);
		await assertExact(index);
		assert.equal(await maintainTiers(index, m.doc), true);
		const after = await index.readManifest(true);
		assert.equal(tiersOf(after.doc).stale.length, 0);
		assert.ok(after.doc.segments.every((r) => r.tier?.id !== before[0].tier.id));
		for (const key of bucketKeys(index.segmentsPrefix, before[0].tier))
			assert.equal(await storage.get(key), null, key);
	});

	it('a damaged bucket is an error naming it, never an empty answer', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-corrupt') });
		const index = indexOn(storage);
		await index.addOlder(docs(1200, 6));
		await settleTiers(index);
		const { usable } = tiersOf((await index.readManifest(true)).doc);
		for (const key of bucketKeys(index.segmentsPrefix, usable[0].tier))
			await storage.put(key, Buffer.from('{"kind":"terms","terms":{"w0x":"AAAA"}}'));
		clearAllCaches();
		await assert.rejects(
			async () => (await streamedView(index, {})).search('w0x w1x', 5),
			(e: unknown) =>
				e instanceof CorruptDocumentError && /\.trm/.test(String((e as Error).message)),
		);
	});

	it('a bucket lost for good: the search starts over, then says the index is damaged', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-lost') });
		const index = indexOn(storage);
		await index.addOlder(docs(1200, 6));
		await settleTiers(index);
		const { usable } = tiersOf((await index.readManifest(true)).doc);
		for (const key of bucketKeys(index.segmentsPrefix, usable[0].tier)) await storage.delete(key);
		clearAllCaches();
		await assert.rejects(
			async () => (await streamedView(index, {})).search('w0x', 5),
			(e: unknown) => e instanceof IndexDamagedError && /\.trm/.test((e as Error).message),
		);
	});

	it('two processes keeping the tiers at once: one tier per segment, no bucket left unlisted', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-race') });
		await indexOn(storage).addOlder(docs(2400, 8));
		const a = indexOn(storage);
		const b = indexOn(storage);
		await Promise.all([settleTiers(a), settleTiers(b)]);
		const m = await a.readManifest(true);
		const { usable, stale } = tiersOf(m.doc);
		assert.equal(stale.length, 0);
		const ids = m.doc.segments.filter((r) => r.tier).map((r) => `${r.tier!.id}/${r.tier!.ord}`);
		assert.equal(new Set(ids).size, ids.length);
		const listed = new Set([
			...usable.flatMap((t) => bucketKeys(a.segmentsPrefix, t.tier)),
			...retiredKeys(m.doc),
		]);
		const held = (await storage.list('kb/')).map((o) => o.key).filter((k) => k.endsWith('.trm'));
		assert.deepEqual(held.filter((k) => !listed.has(k)).sort(), []);
		clearAllCaches();
		await assertExact(a);
	});

	it('a newer copy of a tiered chunk supersedes it: the old words are never returned', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-superseded') });
		const index = indexOn(storage);
		const all = docs(1600, 2);
		all[10] = chunk(10, 'quokkaword quokkaword quokkaword');
		await index.addOlder(all);
		await settleTiers(index);
		assert.ok((await index.readManifest(true)).doc.segments[0].tier, 'the chunk is in a tier');
		// Its newer copy (in the tail) says something else.
		await index.add([{ ...all[10], text: 'w0x' }]);
		const got = await (await streamedView(index, {})).search('quokkaword', 5);
		assert.deepEqual(
			got.map((m) => m.id),
			[],
		);
		const w0 = await (await streamedView(index, {})).search('w0x', 3000);
		assert.equal(w0.filter((m) => m.id === 'c-10').length, 1);
		assert.equal(w0.find((m) => m.id === 'c-10')!.text, 'w0x');
	});

	it('newer copies supersede theirs in segments out of tiers too; segments without their conversations count every document', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('untiered-superseded') });
		const index = indexOn(storage, false);
		const all = docs(400, 3);
		all[10] = chunk(10, 'quokkaword w1x');
		all[395] = chunk(395, 'quokkaword w2x');
		await index.addOlder(all);
		// Newer copies in the tail: one of a chunk of the first segment, one of a conversation no
		// segment holds; the last segment holds neither conversation.
		await index.add([{ ...all[10], text: 'w0x' }, chunk(900, 'quokkaword w3x', 'new-conv')]);
		const view = await streamedView(index, {});
		assert.deepEqual(
			(await view.search('quokkaword', 5))
				.filter((m) => !m.context)
				.map((m) => m.id)
				.sort(),
			['c-395', 'c-900'],
		);
		const w0 = await view.search('w0x', 3000);
		assert.equal(w0.filter((m) => m.id === 'c-10').length, 1);
		assert.equal(w0.find((m) => m.id === 'c-10')!.text, 'w0x');
		await assertExact(index, [...QUERIES, 'quokkaword', 'quokkaword w1x']);
	});

	it('a search in a time range reads the segments, as before (tiers count every document)', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-since') });
		const index = indexOn(storage);
		await index.addOlder(docs(1600, 12));
		await settleTiers(index);
		const filter = { since: new Date(Date.UTC(2026, 0, 3)).toISOString() };
		for (const q of QUERIES) {
			const full = await (await lexicalView([index], filter)).search(q, 10);
			const got = await (await streamedView(index, filter)).search(q, 10);
			assert.deepEqual(
				got.map((m) => [m.id, m.score]),
				full.map((m) => [m.id, m.score]),
				q,
			);
		}
	});

	it('a damaged bucket met by upkeep drops its tiers (rebuilt from the segments), and adds go on', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-damaged-upkeep') });
		const index = indexOn(storage);
		// Two tiers of one size class are due to merge: the merge meets the damaged bucket.
		await index.addOlder(docs(40 * (SETTLING + 2 * TIER_SEGMENTS), 13));
		const first = await index.readManifest(true);
		await maintainTiers(index, first.doc);
		await maintainTiers(index, (await index.readManifest(true)).doc);
		const two = tiersOf((await index.readManifest(true)).doc).usable;
		assert.equal(two.length, 2);
		const key = bucketKeys(index.segmentsPrefix, two[1].tier)[0];
		await storage.put(key, Buffer.from('not a bucket'));
		clearAllCaches();
		assert.equal(await maintainTiers(index, (await index.readManifest(true)).doc), true);
		const after = tiersOf((await index.readManifest(true)).doc);
		assert.deepEqual(after.usable, []);
		assert.equal(await storage.get(key), null);
		await index.add(docs(30, 14, 90_000));
		await settleTiers(index);
		assert.ok(tiersOf((await index.readManifest(true)).doc).usable.length > 0);
		await assertExact(index);
	});

	it('a damaged segment stops the upkeep, not the add (the search of it says so)', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-damaged-segment') });
		const index = indexOn(storage);
		await index.addOlder(docs(40 * (SETTLING + TIER_SEGMENTS), 15));
		const m = await index.readManifest(true);
		await storage.put(m.doc.segments[2].key, Buffer.from('damaged'));
		clearAllCaches();
		await index.add(docs(5, 16, 80_000));
		assert.equal(tiersOf((await index.readManifest(true)).doc).usable.length, 0);
		const tail = (await index.readManifest(true)).doc.tail.map((d) => d.id);
		assert.ok(tail.includes('c-80000'));
		await assert.rejects(
			async () => (await streamedView(index, {})).search('w0x', 5),
			CorruptDocumentError,
		);
	});

	it('long conversations spread over every segment: the messages beside the best are read from the segments that hold them', async () => {
		const disk = new LocalDiskStorage({ root: tempDir('tiers-interleaved') });
		const all = interleaved();
		const { index, covered, gets, got } = await searchCounted(disk, all, 'wombatword', 10);
		assert.ok(covered.size >= 64);
		const read = [...gets.keys()].filter((key) => covered.has(key));
		const full = await (await lexicalView([index], {})).search('wombatword', 10);
		assert.deepEqual(
			got.map((x) => [x.id, x.score, x.context ?? false]),
			full.map((x) => [x.id, x.score, x.context ?? false]),
		);
		assert.ok(
			got.some((x) => x.id === all[1210 + 80].id),
			'the flow past the notes is there',
		);
		// Every segment holds both conversations; only those around the two messages are read.
		assert.ok(read.length <= 10, `${read.length} of ${covered.size} tiered segments read`);
	});

	it('names of the matches (a recency half-life) count the tiers too', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-names') });
		const index = indexOn(storage);
		// Rare words, each in three chunks: what a half-life search calls names.
		const all = docs(2000, 17).map((d, i) =>
			i % 50 < 3 ? { ...d, text: `${d.text} name${Math.floor(i / 50)}q` } : d,
		);
		await index.addOlder(all);
		await settleTiers(index);
		assert.ok(tiersOf((await index.readManifest(true)).doc).usable.length > 0);
		let named = 0;
		for (const q of ['name3q w0x', 'name20q', 'name39q w1x w2x']) {
			const view = await streamedView(index, {});
			const got = await view.search(q, 10);
			await view.prepareNames?.(got);
			const loaded = await lexicalView([index], {});
			assert.deepEqual(
				got.map((c) => view.names(c)),
				got.map((c) => loaded.names(c)),
				q,
			);
			named += got.filter((c) => view.names(c).length > 0).length;
		}
		assert.ok(named > 0, 'some matches have names');
	});

	it('a bucket lost: the index says so (Status), and upkeep drops the tier when it meets it', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('tiers-lost-upkeep') });
		const index = indexOn(storage);
		await index.addOlder(docs(40 * (SETTLING + 2 * TIER_SEGMENTS), 19));
		await maintainTiers(index, (await index.readManifest(true)).doc);
		await maintainTiers(index, (await index.readManifest(true)).doc);
		const two = tiersOf((await index.readManifest(true)).doc).usable;
		assert.equal(two.length, 2);
		const key = bucketKeys(index.segmentsPrefix, two[1].tier).at(-1)!;
		await storage.delete(key);
		clearAllCaches();
		assert.deepEqual((await index.lostSegments()).missing, [key]);
		// The two are due to merge: the merge meets the lost bucket and drops both.
		assert.equal(await maintainTiers(index, (await index.readManifest(true)).doc), true);
		assert.deepEqual(tiersOf((await index.readManifest(true)).doc).usable, []);
		assert.deepEqual((await index.lostSegments()).missing, []);
		await settleTiers(index);
		await assertExact(index);
	});
});
