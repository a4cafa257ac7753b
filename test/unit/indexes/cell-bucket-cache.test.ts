// The buckets of cell tiers a search read are kept for the next search near them (an agent asking
// across conversations turn after turn probes the same cells): within a quarter of the index's cache
// cap, never a bucket a Forget replaced, and never instead of what the manifest now lists.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { clearVectorCache, LocalDiskStorage, streamedRanking } from '../../../src/internal';
import { cellBuckets } from '../../../src/indexes/vector/caches';
import { cellBucketKeys } from '../../../src/indexes/vector/cell-tiers';
import { storageIdentity } from '../../../src/store/storage';
import { tieredVectorIndex, vectorChunk } from '../../support/vector-segments';
import { MeteredStorage } from '../../support/wide-base';

const DIMS = 16;

const chunk = (i: number) => vectorChunk(i, `s${i % 7}`);

/** Buckets read from storage (not from the cache). */
const bucketReads = (m: MeteredStorage) =>
	[...m.gets].filter(([k]) => k.endsWith('.vcl')).reduce((n, [, c]) => n + c, 0);

describe('cell buckets kept between searches', () => {
	it('the same search again reads no bucket from storage and answers alike', async () => {
		const { root, open, rows } = await tieredVectorIndex(DIMS, chunk);
		clearVectorCache();
		const first = new MeteredStorage(new LocalDiskStorage({ root }));
		const a = await streamedRanking(open(first), rows[300], 10, {});
		assert.ok(bucketReads(first) > 0, 'the first search reads its buckets');
		const again = new MeteredStorage(new LocalDiskStorage({ root }));
		const b = await streamedRanking(open(again), rows[300], 10, {});
		assert.equal(bucketReads(again), 0, 'the second reads none of them again');
		assert.deepEqual(
			b.matches.map((m) => [m.id, m.score]),
			a.matches.map((m) => [m.id, m.score]),
		);
	});

	it('a bucket a Forget replaced is dropped from the cache, and the next search reads the new one', async () => {
		const { root, open, writer, rows } = await tieredVectorIndex(DIMS, chunk);
		const identity = storageIdentity(new LocalDiskStorage({ root }));
		const cached = (key: string) => cellBuckets.has(`${identity}\n${key}`);
		const listed = async () =>
			((await writer.readManifest(true)).doc.cells?.tiers ?? []).flatMap((t) =>
				cellBucketKeys(writer.segmentsPrefix, t),
			);
		clearVectorCache();
		// Searches near rows of every topic: most buckets cached.
		for (let i = 0; i < 40; i++) await streamedRanking(open(), rows[i * 3], 10, {});
		const before = await listed();
		const held = before.filter(cached);
		assert.ok(held.length > 0, 'buckets kept');
		assert.ok((await writer.forgetSession('s3')) > 0);
		const now = new Set(await listed());
		const replaced = held.filter((k) => !now.has(k));
		assert.ok(replaced.length > 0, 'the Forget wrote some kept buckets again');
		assert.deepEqual(replaced.filter(cached), [], 'no replaced bucket kept');
		for (let i = 0; i < 40; i++) {
			const metered = new MeteredStorage(new LocalDiskStorage({ root }));
			const ranking = await streamedRanking(open(metered), rows[i * 3], 10, {});
			assert.ok(
				ranking.matches.every((m) => m.session_id !== 's3'),
				'nothing forgotten found',
			);
			for (const key of metered.gets.keys())
				assert.ok(!replaced.includes(key), `${key}: a replaced bucket read`);
		}
	});

	it('an index keeps at most a quarter of its cache cap in buckets; with no room, each search reads them again', async () => {
		const { root, open, rows } = await tieredVectorIndex(DIMS, chunk);
		const stored = await new LocalDiskStorage({ root }).list('');
		// A cap whose quarter holds a third of the buckets' bytes: searches must let some go.
		const cap =
			(4 / 3) * stored.filter((o) => o.key.endsWith('.vcl')).reduce((n, o) => n + o.size, 0);
		clearVectorCache();
		const reads = new Map<string, number>();
		for (let i = 0; i < 40; i++) {
			const metered = new MeteredStorage(new LocalDiskStorage({ root }));
			await streamedRanking(open(metered, cap), rows[i * 3], 10, {});
			for (const [k, c] of metered.gets)
				if (k.endsWith('.vcl')) reads.set(k, (reads.get(k) ?? 0) + c);
			assert.ok(cellBuckets.weight <= cap / 4, `${cellBuckets.weight} bytes of buckets kept`);
			assert.ok(cellBuckets.weight > 0, 'some kept');
		}
		assert.ok(
			[...reads.values()].some((c) => c > 1),
			'a bucket let go was read again',
		);
		clearVectorCache();
		const none = () => new MeteredStorage(new LocalDiskStorage({ root }));
		const [first, second] = [none(), none()];
		await streamedRanking(open(first, 0), rows[300], 10, {});
		await streamedRanking(open(second, 0), rows[300], 10, {});
		assert.ok(bucketReads(first) > 0);
		assert.equal(bucketReads(second), bucketReads(first), 'nothing kept');
	});
});
