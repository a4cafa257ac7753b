// The two rankings of a search of every conversation run side by side: the vector ranking is handed
// the word ranking's chunks (to score them on its pass), but with cell tiers it never waits for them
// (its similarities read their segments again anyway), so a remote store's round trips overlap. Without
// tiers it still waits, and scores the handed chunks on its one pass.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	clearVectorCache,
	EmbeddedIndex,
	LocalDiskStorage,
	streamedRanking,
	vectorIndexPrefix,
} from '../../../src/internal';
import { randomRows, seededRandom } from '../../support/embeddings';
import { tempDir } from '../../support/storages';
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
