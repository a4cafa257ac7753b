// The two rankings of a search of every conversation run side by side: the vector ranking is handed
// the word ranking's chunks (to score them on its pass), but with cell tiers it never waits for them
// (its similarities read their segments again anyway), so a remote store's round trips overlap. Without
// tiers it still waits, and scores the handed chunks on its one pass. The word ranking reads its term
// tiers' buckets while the open sources are read (both need only the manifest that lists the sources).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { LexicalIndex } from '../../../src/indexes/lexical/lexical-index';
import type { SourceTail } from '../../../src/indexes/lexical/open-sources';
import { streamedView } from '../../../src/indexes/lexical/stream';
import {
	clearAllCaches,
	clearVectorCache,
	EmbeddedIndex,
	LocalDiskStorage,
	settleTiers,
	streamedRanking,
	vectorIndexPrefix,
} from '../../../src/internal';
import type { MemoryStorage } from '../../../src/internal';
import { randomRows, seededRandom } from '../../support/embeddings';
import { tempDir } from '../../support/storages';
import { docs, indexOn } from '../../support/term-tiers';
import { appendSegments, tieredVectorIndex, vectorChunk } from '../../support/vector-segments';
import { MeteredStorage } from '../../support/wide-base';

const DIMS = 16;
const chunk = (i: number) => vectorChunk(i, `s${i % 7}`);

/** Whether `p` settles within `ms`. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
	let timer: NodeJS.Timeout | undefined;
	const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
	try {
		return await Promise.race([p.then(() => true), late]);
	} finally {
		clearTimeout(timer);
	}
}

describe('a vector ranking beside the word ranking', () => {
	it('with cell tiers, it reads its buckets and segments and answers without waiting for the word ranking', async () => {
		const { root, open, rows } = await tieredVectorIndex(DIMS, chunk);
		clearVectorCache();
		const alone = await streamedRanking(open(), rows[300], 10, {});
		clearVectorCache();
		const metered = new MeteredStorage(new LocalDiskStorage({ root }));
		// A word ranking that has not finished (never, here).
		const never = new Promise<Map<string, Set<number>> | undefined>(() => {});
		const ranking = streamedRanking(open(metered), rows[300], 10, {}, never);
		assert.ok(await settlesWithin(ranking, 10_000), 'the ranking waited for the word ranking');
		const bucketReads = [...metered.gets.keys()].filter((k) => k.endsWith('.vcl')).length;
		assert.ok(bucketReads > 0, 'the buckets were read');
		assert.deepEqual(
			(await ranking).matches.map((m) => [m.id, m.score]),
			alone.matches.map((m) => [m.id, m.score]),
		);
	});

	it('without tiers, it waits for the word ranking and scores its chunks on the one pass', async () => {
		const root = tempDir('ranking-overlap');
		const writer = new EmbeddedIndex(new LocalDiskStorage({ root }), 'kb', vectorIndexPrefix('kb'));
		const rows = randomRows(400, DIMS, seededRandom(3));
		await appendSegments(
			writer,
			rows.map((_, i) => chunk(i)),
			rows,
			100,
		);
		clearVectorCache();
		let hand: (named: Map<string, Set<number>>) => void = () => {};
		const handed = new Promise<Map<string, Set<number>> | undefined>((r) => (hand = r));
		const metered = new MeteredStorage(new LocalDiskStorage({ root }));
		const index = new EmbeddedIndex(metered, 'kb', vectorIndexPrefix('kb'));
		const ranking = streamedRanking(index, rows[5], 3, {}, handed);
		assert.equal(
			await settlesWithin(ranking, 300),
			false,
			'it answered before it was handed chunks',
		);
		const named = chunk(250);
		hand(new Map([[named.message_id, new Set([named.chunk_index])]]));
		const { similarities } = await ranking;
		const reads = metered.counts.get;
		const cosines = await similarities(
			new Map([[named.message_id, new Set([named.chunk_index])]]),
			new Set([named.session_id]),
		);
		assert.equal(metered.counts.get, reads, 'the handed chunk was scored on the pass');
		assert.equal(cosines.size, 1);
	});
});

/** A tiered word index read through `storage`, its open sources given by `read`. */
const wordIndex = (storage: MemoryStorage, read: (ids: string[]) => Promise<SourceTail[]>) =>
	new LexicalIndex(storage, 'test', 'kb/lexical/', 12, read, { segmentChunks: 40, tiers: true });

/** The open source 'live', as listed (opening 1, through 0), holding nothing the index lacks. */
const live: SourceTail = {
	id: 'live',
	key: 'live@1',
	docs: () => [],
	state: { gen: 1, through: 0 },
};

/** A tiered word index of 2,000 chunks on disk, listing 'live' as an open source; caches emptied. */
async function listingLive(name: string, seed: number): Promise<LocalDiskStorage> {
	const disk = new LocalDiskStorage({ root: tempDir(name) });
	await indexOn(disk).addOlder(docs(2000, seed));
	await settleTiers(indexOn(disk));
	const at = new Date().toISOString();
	await wordIndex(disk, async () => []).add([], {
		open: [{ session_id: 'live', gen: 1, users: null, at, through: 0 }],
	});
	clearAllCaches();
	return disk;
}

/**
 * A search of everything on `disk` whose open sources are given as `tail` only once `release` is
 * called, started once the first term bucket was read (or 10 s passed).
 */
async function heldSearch(disk: LocalDiskStorage, tail: SourceTail) {
	const metered = new MeteredStorage(disk);
	let release: () => void = () => {};
	const gate = new Promise<void>((r) => (release = r));
	let asked = false;
	const held = wordIndex(metered, async () => {
		asked = true;
		await gate;
		return [tail];
	});
	const search = (await streamedView(held, {})).search('w0x w3x', 5);
	const bucketsRead = () => [...metered.gets.keys()].filter((k) => k.endsWith('.trm')).length;
	const deadline = Date.now() + 10_000;
	while (bucketsRead() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
	return { search, release, asked: () => asked, bucketsRead };
}

/** The same search on a fresh view with no source held back, caches emptied first. */
async function plainSearch(disk: LocalDiskStorage, tail: SourceTail) {
	clearAllCaches();
	const view = await streamedView(
		wordIndex(disk, async () => [tail]),
		{},
	);
	return (await view.search('w0x w3x', 5)).map((m) => [m.id, m.score]);
}

describe('a word ranking of everything beside its open sources', () => {
	it('reads its term buckets while the open sources are read, and answers as when it waits', async () => {
		const disk = await listingLive('early-rows', 8);
		const alone = await plainSearch(disk, live);
		assert.ok(alone.length > 0);
		clearAllCaches();
		const { search, release, asked, bucketsRead } = await heldSearch(disk, live);
		assert.ok(asked(), 'the open sources were asked for');
		assert.ok(bucketsRead() > 0, 'no term bucket was read while the open sources were');
		release();
		assert.deepEqual(
			(await search).map((m) => [m.id, m.score]),
			alone,
		);
	});

	it('a source that moved past its listing meanwhile: the rows read early are not used on the newer manifest', async () => {
		const disk = await listingLive('early-rows-moved', 9);
		const moved: SourceTail = { ...live, key: 'live@1#2', state: { gen: 1, through: 2 } };
		const { search, release } = await heldSearch(disk, moved);
		// Meanwhile the source's messages went into the index (more of the query's words: new statistics).
		const more = docs(400, 10).map((d, i) => ({ ...d, id: `moved-${i}`, text: `w0x ${d.text}` }));
		await wordIndex(disk, async () => []).add(more, {
			moved: [{ session_id: 'live', gen: 1, through: 2 }],
		});
		await settleTiers(indexOn(disk));
		release();
		const got = (await search).map((m) => [m.id, m.score]);
		assert.deepEqual(got, await plainSearch(disk, moved));
	});
});
