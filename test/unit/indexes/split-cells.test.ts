// Ranges of cells too large for one bucket (large vectors on a large base, or one crowded cell): a tier
// splits each range's rows among several buckets by their chunk IDs, so no bucket a search or a merge
// holds outgrows the byte cap, and a small tier keeps few buckets. Small vectors and a small cap here
// stand for 1,536-dimension rows and 12 MiB.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	clearVectorCache,
	CorruptDocumentError,
	EmbeddedIndex,
	LocalDiskStorage,
	streamedRanking,
	vectorIndexPrefix,
} from '../../../src/internal';
import type { IndexedChunk, MemoryStorage } from '../../../src/internal';
import {
	bucketOfRow,
	bucketsOfCell,
	buildCellTier,
	cellBucketKey,
	decodeCellBucket,
	encodeCellBucket,
	layoutFor,
	mergeCellTiers,
} from '../../../src/indexes/vector/cell-tiers';
import type { CellTier } from '../../../src/indexes/vector/cell-tiers';
import { bestInCells, bucketsToRead } from '../../../src/indexes/vector/cell-search';
import { cellCount, cellOf, trainCodebook } from '../../../src/indexes/vector/codebook';
import { manifestCodec } from '../../../src/indexes/vector/manifest';
import { normaliseRows } from '../../../src/indexes/vector/vector-segment';
import {
	appendSegments,
	clusteredRows,
	tieredVectorIndex,
	vectorChunk,
} from '../../support/vector-segments';
import { tempDir } from '../../support/storages';

const DIMS = 16;
/** A cap of 24 rows of 16 floats: the bench's cells of thousands of rows, scaled down. */
const CAP = 24 * 4 * DIMS;

const chunk = (i: number): IndexedChunk => vectorChunk(i, `s${i % 7}`);

/** Segments of clustered rows on local disk, and indexes over them writing buckets of `bucketBytes`. */
async function segmentsOf(count: number) {
	const root = tempDir('split-cells');
	const open = (bucketBytes?: number) =>
		new EmbeddedIndex(new LocalDiskStorage({ root }), 'kb', vectorIndexPrefix('kb'), 12, {
			...(bucketBytes === undefined ? {} : { bucketBytes }),
		});
	const rows = clusteredRows(count, 12, DIMS, 0.3, 3);
	await appendSegments(
		open(),
		rows.map((_, i) => chunk(i)),
		rows,
		count / 4,
	);
	const refs = (await open().readManifest(true)).doc.segments;
	const unit = normaliseRows(rows, rows.length);
	const cb = trainCodebook(unit.subarray(0, 1000 * DIMS), DIMS);
	return { open, rows, refs, cb, cells: cellCount(cb) };
}

/** Every row of a tier as `id@cell`, checking that each is in the bucket its cell and ID name. */
async function rowsOfTier(index: EmbeddedIndex, tier: CellTier, cells: number) {
	const out: string[] = [];
	let most = 0;
	for (let b = 0; b < tier.buckets; b++) {
		const key = cellBucketKey(index.segmentsPrefix, tier, b);
		const got = await index.storage.get(key);
		assert.ok(got, `bucket ${b} stored`);
		const { segment, cells: rowCells } = decodeCellBucket(key, got.body, tier, b, cells);
		segment.chunks.forEach((c, r) => {
			assert.equal(bucketOfRow(tier, cells, rowCells[r], c.id), b, `${c.id} in its bucket`);
			out.push(`${c.id}@${rowCells[r]}`);
		});
		most = Math.max(most, segment.chunks.length);
	}
	return { ids: out.sort(), most };
}

describe('cells split among buckets', () => {
	it('a tier whose fullest range of cells is past the cap splits every range by chunk ID: each row once, in its bucket, no bucket far past the cap', async () => {
		const { open, rows, refs, cb, cells } = await segmentsOf(2000);
		// Ranges for 2,000 rows at about 100 a bucket: a power of two, at most the cells.
		let ranges = 1;
		while (ranges * 100 < 2000 && ranges < cells) ranges *= 2;
		const perRange = new Map<number, number>();
		for (const r of rows) {
			const range = Math.floor((cellOf(cb, normaliseRows([r], 1)) * ranges) / cells);
			perRange.set(range, (perRange.get(range) ?? 0) + 1);
		}
		const largest = Math.max(...perRange.values());
		assert.ok(largest * 4 * DIMS >= 3 * CAP, `fullest range ${largest} rows: too small to tell`);

		const tier = await buildCellTier(open(CAP), cb, refs, 100);
		assert.ok((tier.split ?? 1) >= 4, `split ${tier.split}`);
		assert.equal(tier.buckets, ranges * tier.split!);
		assert.equal(tier.largest, largest);
		assert.equal(tier.id.length, 20, 'a split tier has the longer ID');
		const { ids, most } = await rowsOfTier(open(), tier, cells);
		assert.equal(ids.length, 2000);
		assert.equal(new Set(ids.map((x) => x.split('@')[0])).size, 2000, 'each row once');
		assert.ok(most * 4 * DIMS <= 2 * CAP, `${most} rows in one bucket`);

		// Without a cap the same rows make whole cells; the layout alone differs.
		const whole = await buildCellTier(open(), cb, refs, 100);
		assert.equal(whole.split, undefined);
		assert.equal(whole.buckets, ranges);
		assert.equal(whole.id.length, 18);
		assert.deepEqual((await rowsOfTier(open(), whole, cells)).ids, ids);
	});

	it('a small tier with a crowded cell keeps few buckets: its one range split, not every cell', async () => {
		const { open, refs, cb, cells } = await segmentsOf(2000);
		assert.ok(cells >= 16, `${cells} cells`);
		// 2,000 rows take one range at the default 2,048 rows a bucket.
		const tier = await buildCellTier(open(CAP), cb, refs);
		assert.ok((tier.split ?? 1) >= 64, `split ${tier.split}`);
		assert.equal(tier.buckets, tier.split, 'buckets: the split of one range');
		assert.equal(tier.largest, 2000);
		const { ids, most } = await rowsOfTier(open(), tier, cells);
		assert.equal(new Set(ids.map((x) => x.split('@')[0])).size, 2000, 'each row once');
		assert.ok(most * 4 * DIMS <= 2 * CAP, `${most} rows in one bucket`);
	});

	it('merges of split and whole tiers, either way, hold every row once in its bucket', async () => {
		const { open, refs, cb, cells } = await segmentsOf(2000);
		const all = (await rowsOfTier(open(), await buildCellTier(open(), cb, refs), cells)).ids;
		// Tiers of several ranges (a bucket per cell, or about 50 rows a range) into merges of one.
		const splitA = await buildCellTier(open(CAP), cb, refs.slice(0, 2), 50);
		const wholeB = await buildCellTier(open(), cb, refs.slice(2), 1);
		const splitB = await buildCellTier(open(CAP / 2), cb, refs.slice(2), 1);
		assert.ok(splitA.buckets / splitA.split! > 1 && wholeB.buckets === cells, 'several ranges');
		assert.ok(splitA.split! > 1 && splitB.split! > splitA.split!, 'splits of two sizes');
		for (const [a, b, cap, split] of [
			[splitA, wholeB, CAP, true],
			[splitA, splitB, CAP, true],
			[splitB, splitA, CAP / 4, true],
			[splitA, wholeB, undefined, false],
			[splitA, splitB, undefined, false],
		] as const) {
			const merged = await mergeCellTiers(open(cap), cb, a, b);
			assert.equal((merged.split ?? 1) > 1, split, `split ${merged.split}`);
			const got = await rowsOfTier(open(), merged, cells);
			assert.deepEqual(got.ids, all);
			// The merge bounds its ranges from its sources' fullest: no bucket far past the cap.
			if (cap) assert.ok(got.most * 4 * DIMS <= 2 * cap, `${got.most} rows in one bucket`);
			assert.ok(merged.largest! >= 1 && merged.rows === 2000);
		}
	});

	it('a search of split cells reads each probed cell’s buckets and finds exactly what whole cells give', async () => {
		const { open, rows, refs, cb, cells } = await segmentsOf(2000);
		// A range a cell, and one range for all.
		const split = await buildCellTier(open(CAP), cb, refs, 1);
		const one = await buildCellTier(open(CAP), cb, refs);
		assert.equal(split.buckets, cells * split.split!);
		// Whole cells, a bucket each (a bucket of several cells scores them all).
		const whole = await buildCellTier(open(), cb, refs, 1);
		assert.ok(whole.buckets >= cells);
		const unit = normaliseRows(rows, rows.length);
		for (let qi = 0; qi < 10; qi++) {
			const q = unit.subarray(qi * 173 * DIMS, (qi * 173 + 1) * DIMS);
			clearVectorCache();
			const a = await bestInCells(open(), cb, [split], q, 20, {}, { cells: 4, parents: 2 });
			const b = await bestInCells(open(), cb, [whole], q, 20, {}, { cells: 4, parents: 2 });
			const c = await bestInCells(open(), cb, [one], q, 20, {}, { cells: 4, parents: 2 });
			const ranked = (got: typeof a) => got.map((m) => [m.chunk.id, m.score]);
			assert.deepEqual(ranked(a), ranked(b));
			// One range holds every cell: it scores them all, so it finds at least as well.
			assert.ok(c[c.length - 1].score >= a[a.length - 1].score);
			const probed = [0, 1, 2].map((c) => c % cells);
			assert.equal(bucketsToRead(cb, [split], probed).length, 3 * split.split!);
			assert.equal(bucketsToRead(cb, [one], probed).length, one.split!);
		}
	});

	it('a row in the other share’s bucket of its cell stops a merge, naming the bucket', async () => {
		const { open, rows, refs, cb, cells } = await segmentsOf(1000);
		const index = open(CAP);
		const a = await buildCellTier(index, cb, refs.slice(0, 2));
		const b = await buildCellTier(index, cb, refs.slice(2));
		const row = normaliseRows([rows[0]], 1);
		const cell = cellOf(cb, row);
		const mine = bucketOfRow(a, cells, cell, 'c0');
		const other = bucketsOfCell(a, cells, cell).find((b) => b !== mine)!;
		const key = cellBucketKey(index.segmentsPrefix, a, other);
		// Its cell is right, so the bucket reads; only its share is wrong.
		await index.storage.put(key, encodeCellBucket(DIMS, [chunk(0)], row, [cell]));
		decodeCellBucket(key, (await index.storage.get(key))!.body, a, other, cells);
		await assert.rejects(
			mergeCellTiers(index, cb, a, b),
			(e: unknown) => e instanceof CorruptDocumentError && (e as Error).message.includes(key),
		);
	});

	it('the manifest refuses a split that does not add up, and a split tier with a short ID', () => {
		const tier = { id: 'a'.repeat(20), codebook: 'k', segments: 8, rows: 10, bytes: 1 };
		const doc = (t: object) =>
			Buffer.from(
				JSON.stringify({
					dimensions: 4,
					segments: [],
					cells: { codebook: 'k', tiers: [t] },
					updated_at: new Date(0).toISOString(),
				}),
			);
		assert.equal(
			manifestCodec.decode('m', doc({ ...tier, buckets: 64, split: 4 })).cells?.tiers[0].split,
			4,
		);
		assert.ok(manifestCodec.decode('m', doc({ ...tier, buckets: 4, split: 4 })));
		assert.ok(manifestCodec.decode('m', doc({ ...tier, id: 'a'.repeat(18), buckets: 64 })));
		for (const bad of [
			{ ...tier, buckets: 96, split: 4 },
			{ ...tier, buckets: 2, split: 4 },
			{ ...tier, buckets: 64, split: 3 },
			{ ...tier, id: 'a'.repeat(18), buckets: 64, split: 4 },
			{ ...tier, buckets: 64 },
			{ ...tier, id: 'a'.repeat(18), buckets: 96 },
		])
			assert.throws(
				() => manifestCodec.decode('m', doc(bad)),
				CorruptDocumentError,
				JSON.stringify(bad),
			);
	});

	it('Forget rewrites only the split buckets holding the conversation: nothing of it stays, searches find the rest', async () => {
		const { root, open, writer, rows } = await tieredVectorIndex(DIMS, chunk, {
			bucketBytes: 1024,
		});
		const before = (await writer.readManifest(true)).doc;
		const tiers = before.cells?.tiers ?? [];
		assert.ok(tiers.length >= 1 && tiers.every((t) => (t.split ?? 1) > 1), 'split tiers built');
		const removed = await writer.forgetSession('s3');
		assert.equal(removed, rows.filter((_, i) => i % 7 === 3).length);
		const after = (await writer.readManifest(true)).doc;
		assert.deepEqual(
			(after.cells?.tiers ?? []).map((t) => t.id),
			tiers.map((t) => t.id),
			'every tier kept',
		);
		const rewritten = (after.cells?.tiers ?? []).flatMap((t) => Object.keys(t.versions ?? {}));
		const buckets = tiers.reduce((n, t) => n + t.buckets, 0);
		assert.ok(rewritten.length > 0 && rewritten.length < buckets, `${rewritten.length} rewritten`);
		const storage: MemoryStorage = new LocalDiskStorage({ root });
		for (const o of await storage.list(vectorIndexPrefix('kb'))) {
			const got = await storage.get(o.key);
			assert.ok(!got!.body.toString().includes('"s3"'), `${o.key} holds the forgotten session`);
		}
		assert.deepEqual(await writer.sweepOrphans(0), [], 'every stored part listed');
		let found = 0;
		for (let qi = 0; qi < 10; qi++) {
			const q = rows[qi * 113 + 3];
			const exact = await writer.search(q, 10);
			clearVectorCache();
			const ranking = await streamedRanking(open(), q, 10, {});
			assert.ok(
				ranking.matches.every((m) => m.session_id !== 's3'),
				'nothing forgotten found',
			);
			const ids = new Set(ranking.matches.map((m) => m.id));
			found += exact.filter((m) => ids.has(m.id)).length;
		}
		assert.ok(found / 100 >= 0.9, `recall@10 ${found / 100}`);
	});

	it('a layout splits only past the cap, enough for the fullest range', () => {
		assert.deepEqual(layoutFor(2048, 64, 4900), { buckets: 2048 });
		assert.deepEqual(layoutFor(2048, 1536, 4900), { buckets: 2048 * 4, split: 4 });
		assert.deepEqual(layoutFor(8, 1536, 40), { buckets: 8 });
		// A small tier with a crowded cell: a few buckets more, not one per cell.
		assert.deepEqual(layoutFor(4, 1536, 5000), { buckets: 16, split: 4 });
		assert.deepEqual(layoutFor(128, 16, 100, 16 * 4 * 30), { buckets: 512, split: 4 });
	});
});
