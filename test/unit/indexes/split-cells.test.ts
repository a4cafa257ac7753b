// Ranges of cells too large for one bucket (large vectors on a large base, or one crowded cell): a tier
// splits such a range's rows among several buckets by their chunk IDs, that range only, so no bucket a
// search or a merge holds outgrows the byte cap, and a search near the other ranges reads one bucket
// each. Tiers written before split every range alike; they are still read, merged and forgotten.
// Small vectors and a small cap here stand for 1,536-dimension rows and 12 MiB.
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
	newCellTierId,
} from '../../../src/indexes/vector/cell-tiers';
import { rangeLayout, splitFor, TierLayout } from '../../../src/indexes/vector/cell-layout';
import type { CellTier } from '../../../src/indexes/vector/cell-tiers';
import { bestInCells, bucketBytesOf, bucketsToRead } from '../../../src/indexes/vector/cell-search';
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

/** Rows of each range of `ranges` of a tier's rows (`id@cell`), by the cells' numbering. */
function rowsPerRange(ids: string[], cells: number, ranges: number): number[] {
	const out = new Array<number>(ranges).fill(0);
	for (const x of ids) out[Math.floor((Number(x.split('@')[1]) * ranges) / cells)]++;
	return out;
}

/**
 * A tier in the form versions before per-range splits wrote: every range split alike (`split`), no
 * cells' rows counted. Written here bucket by bucket as they placed rows.
 */
async function uniformTier(
	index: EmbeddedIndex,
	cb: ReturnType<typeof trainCodebook>,
	refs: Awaited<ReturnType<EmbeddedIndex['readManifest']>>['doc']['segments'],
	ranges: number,
	split: number,
): Promise<CellTier> {
	const cells = cellCount(cb);
	const tier: CellTier = {
		id: newCellTierId(split),
		codebook: '',
		segments: refs.length,
		rows: 0,
		buckets: ranges * split,
		bytes: 0,
		...(split > 1 ? { split } : {}),
	};
	const groups = Array.from({ length: tier.buckets }, () => ({
		chunks: [] as IndexedChunk[],
		rows: [] as number[],
		cells: [] as number[],
	}));
	const perRange = new Array<number>(ranges).fill(0);
	for (const ref of refs) {
		const seg = (await index.readSegment(ref, { quantize: false }))!;
		seg.chunks.forEach((c, r) => {
			const row = seg.vectors.subarray(r * DIMS, (r + 1) * DIMS);
			const cell = cellOf(cb, row);
			const g = groups[bucketOfRow(tier, cells, cell, c.id)];
			g.chunks.push(c);
			g.rows.push(...row);
			g.cells.push(cell);
			perRange[Math.floor((cell * ranges) / cells)]++;
		});
	}
	for (const [b, g] of groups.entries()) {
		const body = encodeCellBucket(DIMS, g.chunks, new Float32Array(g.rows), g.cells);
		await index.storage.put(cellBucketKey(index.segmentsPrefix, tier, b), body);
		tier.rows += g.chunks.length;
		tier.bytes += body.byteLength;
	}
	tier.largest = Math.max(...perRange);
	return tier;
}

describe('cells split among buckets', () => {
	it('a tier splits by chunk ID only its ranges of cells past the cap: each row once, in its bucket, no bucket far past the cap', async () => {
		const { open, refs, cb, cells } = await segmentsOf(2000);
		// Ranges for 2,000 rows at about 100 a bucket: a power of two, at most the cells.
		let ranges = 1;
		while (ranges * 100 < 2000 && ranges < cells) ranges *= 2;
		const whole = await buildCellTier(open(), cb, refs, 100);
		assert.equal(whole.split, undefined);
		assert.equal(whole.parts, undefined);
		assert.equal(whole.buckets, ranges);
		assert.equal(whole.id.length, 18, 'an unsplit tier keeps the form every version reads');
		const all = (await rowsOfTier(open(), whole, cells)).ids;
		const perRange = rowsPerRange(all, cells, ranges);
		const crowded = perRange.filter((n) => splitFor(n, DIMS, CAP) > 1).length;
		assert.ok(crowded >= 1 && crowded < ranges, `${crowded} of ${ranges} ranges past the cap`);

		const tier = await buildCellTier(open(CAP), cb, refs, 100);
		assert.equal(tier.id.length, 22, 'a per-range tier has the longest ID');
		assert.equal(tier.ranges, ranges);
		const expected = perRange.flatMap((n, r) => {
			const s = splitFor(n, DIMS, CAP);
			return s > 1 ? [[r, s]] : [];
		});
		assert.deepEqual(tier.parts, expected, 'each range split as its own rows need');
		assert.equal(
			tier.buckets,
			perRange.reduce((n, rows) => n + splitFor(rows, DIMS, CAP), 0),
		);
		assert.equal(tier.largest, Math.max(...perRange));
		assert.equal(tier.cellRows!.length, cells);
		assert.equal(
			tier.cellRows!.reduce((a, n) => a + n, 0),
			2000,
		);
		const { ids, most } = await rowsOfTier(open(), tier, cells);
		assert.deepEqual(ids, all, 'the same rows, the layout alone differs');
		assert.ok(most * 4 * DIMS <= 2 * CAP, `${most} rows in one bucket`);
		// A search reads large buckets one at a time, by the fullest bucket's share of its range.
		const fullest = Math.max(...perRange.map((n) => Math.ceil(n / splitFor(n, DIMS, CAP))));
		const perRow = tier.bytes / tier.rows;
		assert.equal(bucketBytesOf(tier), Math.max(tier.bytes / tier.buckets, fullest * perRow));
		// A range under the cap is one bucket: a search near it reads one.
		const layout = new TierLayout(tier, cells);
		const calm = perRange.findIndex((n) => splitFor(n, DIMS, CAP) === 1);
		assert.equal(layout.splitOf(calm), 1);
		assert.equal(bucketsOfCell(tier, cells, Math.ceil((calm * cells) / ranges)).length, 1);
	});

	it('a small tier with a crowded cell keeps few buckets: its one range split, not every cell', async () => {
		const { open, refs, cb, cells } = await segmentsOf(2000);
		assert.ok(cells >= 16, `${cells} cells`);
		// 2,000 rows take one range at the default 2,048 rows a bucket.
		const tier = await buildCellTier(open(CAP), cb, refs);
		const split = tier.parts?.[0]?.[1] ?? 1;
		assert.ok(split >= 64, `split ${split}`);
		assert.equal(tier.buckets, split, 'buckets: the split of one range');
		assert.equal(tier.largest, 2000);
		const { ids, most } = await rowsOfTier(open(), tier, cells);
		assert.equal(new Set(ids.map((x) => x.split('@')[0])).size, 2000, 'each row once');
		assert.ok(most * 4 * DIMS <= 2 * CAP, `${most} rows in one bucket`);
	});

	it('merges of per-range, uniformly split and whole tiers, either way, hold every row once in its bucket', async () => {
		const { open, refs, cb, cells } = await segmentsOf(2000);
		const all = (await rowsOfTier(open(), await buildCellTier(open(), cb, refs), cells)).ids;
		// Tiers of several ranges (a bucket per cell, or about 50 rows a range) into merges of one.
		const splitA = await buildCellTier(open(CAP), cb, refs.slice(0, 2), 50);
		const wholeB = await buildCellTier(open(), cb, refs.slice(2), 1);
		const splitB = await buildCellTier(open(CAP / 2), cb, refs.slice(2), 1);
		const oldA = await uniformTier(open(), cb, refs.slice(0, 2), 8, 4);
		const oldB = await uniformTier(open(), cb, refs.slice(2), 4, 1);
		assert.ok(splitA.ranges! > 1 && wholeB.buckets === cells, 'several ranges');
		assert.ok(splitA.parts && splitB.parts, 'ranges split');
		for (const [a, b, cap, form] of [
			[splitA, wholeB, CAP, 'ranges'],
			[splitA, splitB, CAP, 'ranges'],
			[splitB, splitA, CAP / 4, 'ranges'],
			[splitA, wholeB, undefined, 'whole'],
			[splitA, splitB, undefined, 'whole'],
			// A tier written before counts no cells: its merges split every range alike.
			[oldA, splitB, CAP, 'uniform'],
			[splitA, oldB, CAP, 'uniform'],
			[oldA, oldB, undefined, 'whole'],
		] as const) {
			const merged = await mergeCellTiers(open(cap), cb, a, b);
			const got = await rowsOfTier(open(), merged, cells);
			assert.deepEqual(got.ids, all);
			const seen = merged.parts ? 'ranges' : merged.split ? 'uniform' : 'whole';
			assert.equal(seen, form, `${merged.id}: ${seen}`);
			// The merge bounds its ranges from its sources: no bucket far past the cap.
			if (cap) assert.ok(got.most * 4 * DIMS <= 2 * cap, `${got.most} rows in one bucket`);
			assert.ok(merged.largest! >= 1 && merged.rows === 2000);
			assert.equal(
				merged.cellRows?.reduce((n, c) => n + c, 0),
				2000,
				'cells counted',
			);
			if (form !== 'ranges') continue;
			// Counted cells bound each range exactly: none splits more than its own rows need.
			const layout = new TierLayout(merged, cells);
			rowsPerRange(got.ids, cells, layout.ranges).forEach((n, r) =>
				assert.equal(layout.splitOf(r), splitFor(n, DIMS, cap!), `range ${r}: ${n} rows`),
			);
		}
	});

	it('a search of split cells reads each probed cell’s buckets and finds exactly what whole cells give', async () => {
		const { open, rows, refs, cb, cells } = await segmentsOf(2000);
		// A range a cell, one range for all, and the form written before (every cell split alike).
		const split = await buildCellTier(open(CAP), cb, refs, 1);
		const one = await buildCellTier(open(CAP), cb, refs);
		const old = await uniformTier(open(), cb, refs, cells, 8);
		const layout = new TierLayout(split, cells);
		assert.equal(split.ranges, cells);
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
			const d = await bestInCells(open(), cb, [old], q, 20, {}, { cells: 4, parents: 2 });
			const ranked = (got: typeof a) => got.map((m) => [m.chunk.id, m.score]);
			assert.deepEqual(ranked(a), ranked(b));
			assert.deepEqual(ranked(d), ranked(b));
			// One range holds every cell: it scores them all, so it finds at least as well.
			assert.ok(c[c.length - 1].score >= a[a.length - 1].score);
			const probed = [0, 1, 2].map((c) => c % cells);
			const own = probed.reduce((n, c) => n + layout.splitOf(layout.rangeOfCell(c)), 0);
			assert.equal(bucketsToRead(cb, [split], probed).length, own);
			assert.equal(bucketsToRead(cb, [one], probed).length, one.buckets);
			assert.equal(bucketsToRead(cb, [old], probed).length, 3 * 8);
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
		const ranged = {
			...tier,
			id: 'a'.repeat(22),
			ranges: 8,
			parts: [
				[1, 4],
				[5, 2],
			],
			buckets: 12,
		};
		assert.deepEqual(manifestCodec.decode('m', doc(ranged)).cells?.tiers[0].parts, ranged.parts);
		for (const bad of [
			{ ...tier, buckets: 96, split: 4 },
			{ ...tier, buckets: 2, split: 4 },
			{ ...tier, buckets: 64, split: 3 },
			{ ...tier, id: 'a'.repeat(18), buckets: 64, split: 4 },
			{ ...tier, buckets: 64 },
			{ ...tier, id: 'a'.repeat(18), buckets: 96 },
			// Per-range splits: the ranges plus each split's buckets more, in order, with the longest ID.
			{ ...ranged, buckets: 11 },
			{ ...ranged, id: 'a'.repeat(20) },
			{
				...ranged,
				parts: [
					[5, 2],
					[1, 4],
				],
			},
			{
				...ranged,
				parts: [
					[1, 4],
					[8, 2],
				],
			},
			{
				...ranged,
				parts: [
					[1, 4],
					[5, 3],
				],
				buckets: 13,
			},
			{ ...ranged, parts: [], buckets: 8 },
			{ ...ranged, ranges: 6, buckets: 10 },
			{ ...ranged, split: 2 },
			{ ...ranged, parts: undefined, buckets: 8 },
			{ ...tier, id: 'a'.repeat(22), buckets: 64, split: 4 },
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
		assert.ok(tiers.length >= 1 && tiers.every((t) => t.parts), 'split tiers built');
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
		// Per range: only the crowded ones split, each as much as its own rows need.
		const rows = [40, 5000, 100, 2100];
		assert.deepEqual(
			rangeLayout(4, 1536, 12 * 2 ** 20, (r) => rows[r]),
			{
				buckets: 1 + 4 + 1 + 2,
				ranges: 4,
				parts: [
					[1, 4],
					[3, 2],
				],
			},
		);
		assert.deepEqual(
			rangeLayout(2, 64, 12 * 2 ** 20, () => 4900),
			{ buckets: 2, ranges: 2, parts: [] },
		);
	});
});
