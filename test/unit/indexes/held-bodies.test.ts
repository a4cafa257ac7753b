// What searches keep of the objects they read: a search of cell tiers holds no bucket once it has
// scored it (only copies of the blocks of its best rows), and a search of every conversation keeps
// nothing it read once the caches are emptied. A bucket is megabytes on a large base: one kept per
// bucket read made a search's memory grow with the base.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	clearAllCaches,
	clearVectorCache,
	EmbeddedIndex,
	LocalDiskStorage,
	MemoryBase,
	vectorIndexPrefix,
} from '../../../src/internal';
import { buildCellTier } from '../../../src/indexes/vector/cell-tiers';
import {
	bestInCells,
	bucketsToRead,
	PROBE_CELLS,
	PROBE_PARENTS,
} from '../../../src/indexes/vector/cell-search';
import { probe, trainCodebook } from '../../../src/indexes/vector/codebook';
import { WINDOW, WINDOW_BYTES } from '../../../src/indexes/chunks/search-reads';
import { normaliseRows } from '../../../src/indexes/vector/vector-segment';
import { randomRows, seededRandom, TestEmbedder } from '../../support/embeddings';
import { aliveAfterCollecting, HeldBodies } from '../../support/held';
import { tempDir } from '../../support/storages';
import { appendSegments, vectorChunk } from '../../support/vector-segments';
import { manyUsers } from '../../support/wide-base';

const DIMS = 16;

const chunk = (i: number) => vectorChunk(i, `s${i % 11}`);

describe('what a search keeps of what it read', () => {
	it('a search of cell tiers holds no bucket it has scored beyond the cache: at most those read at once, whatever it reads', async () => {
		const root = tempDir('held-bodies');
		const writer = new EmbeddedIndex(new LocalDiskStorage({ root }), 'kb', vectorIndexPrefix('kb'));
		// Rows in no clusters: the 50 best come from every bucket read, each kept until the end.
		const rows = randomRows(6000, DIMS, seededRandom(7));
		await appendSegments(
			writer,
			rows.map((_, i) => chunk(i)),
			rows,
			1000,
		);
		const refs = (await writer.readManifest(true)).doc.segments;
		const unit = normaliseRows(rows, rows.length);
		const cb = trainCodebook(unit, DIMS);
		// Small buckets, so a search reads many.
		const tiers = [
			await buildCellTier(writer, cb, refs.slice(0, 3), 100),
			await buildCellTier(writer, cb, refs.slice(3), 100),
		];
		clearVectorCache();
		for (let qi = 0; qi < 2; qi++) {
			const storage = new HeldBodies(
				new LocalDiskStorage({ root }),
				(key) => key.endsWith('.vcl'),
				true,
			);
			// No room in the cache: what is alive after the search is what the search itself kept.
			const index = new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb'), 12, {
				cacheBytes: 0,
			});
			const q = unit.subarray(qi * 97 * DIMS, (qi * 97 + 1) * DIMS);
			const reads = bucketsToRead(cb, tiers, probe(cb, q, PROBE_CELLS, PROBE_PARENTS)).length;
			assert.ok(reads >= 12, `${reads} buckets to read: too few to tell`);
			const got = await bestInCells(index, cb, tiers, q, 50, {});
			assert.equal(storage.read, reads, 'each bucket read once');
			assert.equal(got.length, 50);
			assert.equal(new Set(got.map((m) => m.chunk.id)).size, 50, 'each chunk once');
			assert.ok(storage.mostAlive <= WINDOW, `${storage.mostAlive} buckets alive at one read`);
			assert.deepEqual(
				await aliveAfterCollecting(() => storage.alive()),
				[],
				'nothing of a bucket kept with the best',
			);
			// What is kept decodes to the chunks stored.
			for (const { chunk: c } of got) assert.deepEqual(c, chunk(Number(c.id.slice(1))));
		}
	});

	it('buckets of large vectors are read one at a time: two would hold more than the window of bytes', async () => {
		const dims = 1024;
		const root = tempDir('held-bodies');
		const writer = new EmbeddedIndex(new LocalDiskStorage({ root }), 'kb', vectorIndexPrefix('kb'));
		const rows = randomRows(2400, dims, seededRandom(9));
		await appendSegments(
			writer,
			rows.map((_, i) => chunk(i)),
			rows,
			600,
		);
		const refs = (await writer.readManifest(true)).doc.segments;
		const unit = normaliseRows(rows, rows.length);
		// A codebook of few cells (trained on a few rows), so that the probed cells span both buckets.
		const cb = trainCodebook(unit.subarray(0, 64 * dims), dims);
		const tier = await buildCellTier(writer, cb, refs, 1200);
		assert.equal(tier.buckets, 2);
		assert.ok(
			tier.bytes / 2 > WINDOW_BYTES / 2,
			`${tier.bytes / 2} bytes a bucket: too small to tell`,
		);
		const q = unit.subarray(5 * dims, 6 * dims);
		assert.equal(bucketsToRead(cb, [tier], probe(cb, q, PROBE_CELLS, PROBE_PARENTS)).length, 2);
		clearVectorCache();
		const storage = new HeldBodies(
			new LocalDiskStorage({ root }),
			(key) => key.endsWith('.vcl'),
			true,
		);
		const index = new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb'), 12, { cacheBytes: 0 });
		const got = await bestInCells(index, cb, [tier], q, 10, {});
		assert.equal(storage.read, 2, 'both buckets read');
		assert.equal(got[0].chunk.id, chunk(5).id, 'the row itself first');
		assert.equal(storage.peak, 1, 'one bucket read at a time');
		// The search lets go of the first before reading the second; a loaded machine's garbage
		// collection sometimes still finds it (seen under load): never more than that one.
		assert.ok(storage.mostAlive <= 1, `${storage.mostAlive} earlier buckets alive`);
	});

	it('a search of every conversation keeps nothing it read once the caches are emptied, hybrid or by words', async () => {
		const { root, baseId } = await manyUsers({ users: 24, turns: 4 });
		const storage = new HeldBodies(new LocalDiskStorage({ root }), () => true);
		const base = new MemoryBase({ storage, baseId, embedder: new TestEmbedder(32) });
		await base.sync();
		for (const mode of ['hybrid', 'lexical'] as const) {
			clearAllCaches();
			const matches = await base.search('pricing plan answer', { allUsers: true, k: 5, mode });
			assert.equal(matches.length, 5);
			clearAllCaches();
			assert.ok(storage.read > 4, `${storage.read} objects read`);
			assert.deepEqual(
				await aliveAfterCollecting(() => storage.alive()),
				[],
				`${mode}: kept past the caches`,
			);
		}
	});
});
