// Cell tiers: settled segments' rows regrouped by cell into buckets, and two tiers merged bucket
// by bucket, on local disk.
import assert from 'node:assert/strict';
import { utimesSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

import {
	clearVectorCache,
	CorruptDocumentError,
	EmbeddedIndex,
	LocalDiskStorage,
	settleCellTiers,
	streamedRanking,
	vectorIndexPrefix,
} from '../../../src/internal';
import type { IndexedChunk, MemoryStorage } from '../../../src/internal';
import {
	BUCKET_ROWS,
	buildCellTier,
	cellBucketKey,
	CellTierGone,
	decodeCellBucket,
	encodeCellBucket,
	mergeCellTiers,
} from '../../../src/indexes/vector/cell-tiers';
import { bucketOfCell, TierLayout } from '../../../src/indexes/vector/cell-layout';
import type { CellTier } from '../../../src/indexes/vector/cell-tiers';
import {
	bestInCells,
	bucketsToRead,
	PROBE_BUCKETS,
	PROBE_CELLS,
	PROBE_PARENTS,
} from '../../../src/indexes/vector/cell-search';
import { cellCount, cellOf, probe, trainCodebook } from '../../../src/indexes/vector/codebook';
import { readCodebook } from '../../../src/indexes/vector/cell-upkeep';
import { dot, normaliseRows } from '../../../src/indexes/vector/vector-segment';
import {
	appendSegments,
	clusteredRows,
	tieredVectorIndex,
	vectorChunk,
} from '../../support/vector-segments';
import { MeteredStorage } from '../../support/wide-base';
import { randomRows, seededRandom } from '../../support/embeddings';
import { tempDir } from '../../support/storages';

const DIMS = 16;

const chunk = (i: number): IndexedChunk => vectorChunk(i, `s${i % 7}`);

/** An index of `segments` segments of `per` rows, with the rows as added. */
async function indexOf(segments: number, per: number) {
	const root = tempDir('cell-tiers');
	const index = new EmbeddedIndex(new LocalDiskStorage({ root }), 'kb', vectorIndexPrefix('kb'));
	const rows = randomRows(segments * per, DIMS, seededRandom(11)).map((r) => {
		const norm = Math.hypot(...r);
		return r.map((x) => x / norm);
	});
	for (let s = 0; s < segments; s++)
		await appendSegments(
			index,
			rows.slice(s * per, (s + 1) * per).map((_, i) => chunk(s * per + i)),
			rows.slice(s * per, (s + 1) * per),
		);
	const refs = (await index.readManifest(true)).doc.segments;
	return { index, rows, refs };
}

/** An index of `segments` segments of 1,000 rows around `topics` topics (mixed), a codebook of half. */
async function clusteredIndex(segments: number, topics: number, seed: number) {
	const root = tempDir('cell-tiers');
	const writer = new EmbeddedIndex(new LocalDiskStorage({ root }), 'kb', vectorIndexPrefix('kb'));
	const rows = clusteredRows(segments * 1000, topics, DIMS, 0.08, seed);
	for (let s = 0; s < segments; s++)
		await appendSegments(
			writer,
			rows.slice(s * 1000, (s + 1) * 1000).map((_, i) => chunk(s * 1000 + i)),
			rows.slice(s * 1000, (s + 1) * 1000),
		);
	const refs = (await writer.readManifest(true)).doc.segments;
	const unit = normaliseRows(rows, rows.length);
	const cb = trainCodebook(unit.subarray(0, segments * 500 * DIMS), DIMS);
	return { root, writer, rows, refs, unit, cb };
}

/** Every bucket of a tier, decoded: row IDs with their cells, per bucket. */
async function contents(index: EmbeddedIndex, tier: CellTier, cells: number) {
	const out: string[][] = [];
	for (let b = 0; b < tier.buckets; b++) {
		const key = cellBucketKey(index.segmentsPrefix, tier, b);
		const got = await index.storage.get(key);
		assert.ok(got, `bucket ${b} stored`);
		const { segment, cells: rowCells } = decodeCellBucket(key, got.body, tier, b, cells);
		out.push(segment.chunks.map((c, r) => `${c.id}@${rowCells[r]}`).sort());
	}
	return out;
}

describe('cell tiers', () => {
	it('a tier holds every row of its segments once, in its cell’s bucket; a merge of two holds what one built of all does', async () => {
		const { index, rows, refs } = await indexOf(6, 1500);
		const flat = Float32Array.from(rows.slice(0, 4000).flat());
		const cb = trainCodebook(flat, DIMS);
		const cells = cellCount(cb);
		const whole = await buildCellTier(index, cb, refs);
		assert.equal(whole.rows, 9000);
		assert.ok(whole.buckets >= 9000 / BUCKET_ROWS, `${whole.buckets} buckets`);
		const all = await contents(index, whole, cells);
		const ids = all.flat().map((x) => x.split('@')[0]);
		assert.equal(new Set(ids).size, 9000);
		for (const [b, list] of all.entries())
			for (const x of list) {
				const [id, cell] = x.split('@');
				const i = Number(id.slice(1));
				assert.equal(Number(cell), cellOf(cb, Float32Array.from(rows[i])), `${id}'s cell`);
				assert.equal(bucketOfCell(Number(cell), cells, whole.buckets), b);
			}
		const a = await buildCellTier(index, cb, refs.slice(0, 2));
		const b = await buildCellTier(index, cb, refs.slice(2));
		assert.notEqual(a.buckets, b.buckets, 'tiers of different sizes merge');
		const merged = await mergeCellTiers(index, cb, a, b);
		assert.equal(merged.buckets, whole.buckets);
		assert.deepEqual(await contents(index, merged, cells), all);
	});

	it('a bucket lost or damaged stops a merge; a row in the wrong bucket is an error naming it', async () => {
		const { index, rows, refs } = await indexOf(2, 300);
		const cb = trainCodebook(Float32Array.from(rows.flat()), DIMS);
		const cells = cellCount(cb);
		const a = await buildCellTier(index, cb, refs.slice(0, 1));
		const b = await buildCellTier(index, cb, refs.slice(1));
		await index.storage.delete(cellBucketKey(index.segmentsPrefix, b, 0));
		clearVectorCache();
		await assert.rejects(mergeCellTiers(index, cb, a, b), CellTierGone);

		const key = cellBucketKey(index.segmentsPrefix, a, 0);
		const wrong = encodeCellBucket(DIMS, [chunk(0)], Float32Array.from(rows[0]), [cells - 1]);
		const tier = { ...a, buckets: 2 };
		assert.throws(
			() => decodeCellBucket(key, wrong, tier, 0, cells),
			(e: unknown) => e instanceof CorruptDocumentError && (e as Error).message.includes(key),
		);
	});

	it('a search reads only the buckets of the cells nearest its query, and finds the exact best of clustered rows', async () => {
		// 60 topics of 100 rows each, added in an order that mixes them (as conversations interleave).
		const { root, writer, refs, unit, cb } = await clusteredIndex(6, 60, 5);
		const tiers = [
			await buildCellTier(writer, cb, refs.slice(0, 4), 250),
			await buildCellTier(writer, cb, refs.slice(4), 250),
		];
		clearVectorCache();
		const metered = new MeteredStorage(new LocalDiskStorage({ root }));
		const index = new EmbeddedIndex(metered, 'kb', vectorIndexPrefix('kb'));
		let found = 0;
		for (let qi = 0; qi < 20; qi++) {
			const q = unit.subarray(qi * 131 * DIMS, (qi * 131 + 1) * DIMS);
			const exact = await writer.search(Array.from(q), 10);
			clearVectorCache(); // what each search reads, not what an earlier one left in the cache
			const before = metered.counts.get;
			const got = await bestInCells(index, cb, tiers, q, 10, {}, { cells: 4, parents: 2 });
			const expected = bucketsToRead(cb, tiers, probe(cb, q, 4, 2)).length;
			assert.equal(metered.counts.get - before, expected, 'one read per bucket needed');
			assert.ok(expected < tiers.reduce((n, t) => n + t.buckets, 0), 'not every bucket');
			const ids = new Set(got.map((m) => m.chunk.id));
			found += exact.filter((m) => ids.has(m.id)).length;
			// The scores are the rows' exact cosines.
			for (const m of got) {
				const r = Number(m.chunk.id.slice(1));
				const cosine = dot(unit, r * DIMS, q, DIMS);
				assert.ok(Math.abs(m.score - cosine) < 1e-6, `${m.chunk.id}: ${m.score} vs ${cosine}`);
			}
		}
		assert.ok(found / 200 >= 0.9, `recall@10 ${found / 200}`);
	});
});

describe('a search’s buckets, of all tiers together', () => {
	it('are at most PROBE_BUCKETS however many tiers and buckets the probed cells fall in, nearest cells first and whole', async () => {
		const { root, writer, rows, refs, unit, cb } = await clusteredIndex(8, 80, 7);
		// Four tiers of small buckets: the probed cells fall in far more buckets than the budget.
		const tiers: CellTier[] = [];
		for (let t = 0; t < 4; t++)
			tiers.push(await buildCellTier(writer, cb, refs.slice(2 * t, 2 * t + 2), 20));
		clearVectorCache();
		const metered = new MeteredStorage(new LocalDiskStorage({ root }));
		const index = new EmbeddedIndex(metered, 'kb', vectorIndexPrefix('kb'));
		const total = cellCount(cb);
		for (let qi = 0; qi < 10; qi++) {
			const q = unit.subarray(qi * 797 * DIMS, (qi * 797 + 1) * DIMS);
			const cells = probe(cb, q, PROBE_CELLS, PROBE_PARENTS);
			const unbounded = bucketsToRead(cb, tiers, cells, Infinity);
			assert.ok(
				unbounded.length > PROBE_BUCKETS,
				`${unbounded.length} buckets hold the probed cells`,
			);
			const read = bucketsToRead(cb, tiers, cells);
			assert.ok(
				read.length <= PROBE_BUCKETS && read.length >= PROBE_BUCKETS - 8,
				`${read.length} read`,
			);
			// Whole cells, nearest first: every tier's buckets of each cell up to the last one taken.
			const has = (t: CellTier, b: number) => read.some((r) => r.tier === t && r.b === b);
			const covered = cells.map((c) =>
				tiers.every((t) => new TierLayout(t, total).bucketsOfCell(c).every((b) => has(t, b))),
			);
			const firstOut = covered.indexOf(false);
			assert.ok(firstOut > 0, 'the nearest cell is read in every tier');
			assert.ok(covered.slice(0, firstOut).every(Boolean));
			clearVectorCache();
			const before = metered.counts.get;
			const got = await bestInCells(index, cb, tiers, q, 10, {});
			assert.equal(metered.counts.get - before, read.length, 'one read per bucket taken');
			// The best row of the nearest cell is found (that cell's buckets are always read).
			let best = -Infinity;
			for (let r = 0; r < rows.length; r++) {
				const row = unit.subarray(r * DIMS, (r + 1) * DIMS);
				if (cellOf(cb, row) === cells[0]) best = Math.max(best, dot(unit, r * DIMS, q, DIMS));
			}
			assert.ok(got[0].score >= best - 1e-6, `${got[0].score} vs ${best}`);
		}
	});
});

describe('cell tiers of an index kept in tiers', () => {
	const tieredIndex = () => tieredVectorIndex(DIMS, chunk);

	/**
	 * 20 searches through the tiers (each reading fewer objects than `segments`) find at least 90% of
	 * what an exact pass finds, and nothing of conversation `forgotten`.
	 */
	async function assertRecallThroughTiers(
		root: string,
		open: (storage?: MemoryStorage) => EmbeddedIndex,
		writer: EmbeddedIndex,
		rows: number[][],
		segments: number,
		forgotten?: string,
	) {
		let found = 0;
		for (let qi = 0; qi < 20; qi++) {
			const q = rows[qi * 113];
			const exact = await writer.search(q, 10);
			clearVectorCache();
			const metered = new MeteredStorage(new LocalDiskStorage({ root }));
			const ranking = await streamedRanking(open(metered), q, 10, {});
			assert.ok(metered.counts.get < segments, `${metered.counts.get} reads`);
			assert.ok(
				ranking.matches.every((m) => m.session_id !== forgotten),
				'nothing forgotten found',
			);
			const ids = new Set(ranking.matches.map((m) => m.id));
			found += exact.filter((m) => ids.has(m.id)).length;
		}
		assert.ok(found / 200 >= 0.9, `recall@10 ${found / 200}`);
	}

	it('upkeep regroups settled segments into tiers; a search of them finds the exact best, reading fewer objects', async () => {
		const { root, open, writer, rows } = await tieredIndex();
		const doc = (await writer.readManifest(true)).doc;
		const tiers = doc.cells?.tiers ?? [];
		assert.ok(tiers.length >= 1 && tiers.length <= 6, `${tiers.length} tiers`);
		assert.ok(doc.cells?.codebook, 'a codebook listed');
		const inTiers = doc.segments.filter((r) => r.tier).length;
		assert.ok(inTiers >= doc.segments.length - 24, `${inTiers} of ${doc.segments.length} in tiers`);
		await assertRecallThroughTiers(root, open, writer, rows, doc.segments.length);
	});

	it('the cosines of chunks handed over are exact with tiers too, read from their segments', async () => {
		const { open, rows } = await tieredIndex();
		const q = rows[226];
		// Chunks all over the index, most in buckets the query's cells do not reach.
		const picked = Array.from({ length: 20 }, (_, i) => i * 117 + 5);
		const wanted = new Map(picked.map((i) => [`m${i}`, new Set([0])]));
		clearVectorCache();
		const ranking = await streamedRanking(open(), q, 10, {}, Promise.resolve(wanted));
		const sessions = new Set(picked.map((i) => chunk(i).session_id));
		const got = await ranking.similarities(wanted, sessions);
		assert.equal(got.size, picked.length, 'every chunk handed over has its cosine');
		for (const i of picked) {
			const a = rows[i];
			const cosine =
				a.reduce((sum, x, j) => sum + x * q[j], 0) / (Math.hypot(...a) * Math.hypot(...q));
			const [key] = [...got.keys()].filter((k) => k.includes(`\nm${i}\n`));
			assert.ok(key !== undefined && Math.abs(got.get(key)! - cosine) < 1e-5, `m${i}`);
		}
	});

	it('a write’s compaction leaves small segments in tiers as they are: no tier is dropped', async () => {
		const { root, writer } = await tieredIndex();
		const before = (await writer.readManifest(true)).doc;
		const tiered = before.segments.filter((r) => r.tier);
		assert.ok(tiered.length >= 16, `${tiered.length} segments in tiers`);
		// Reopened with room to merge them: small tiered neighbours are what a compaction would take first.
		const roomy = new EmbeddedIndex(
			new LocalDiskStorage({ root }),
			'kb',
			vectorIndexPrefix('kb'),
			12,
			{
				segmentBytes: 4 * 2 ** 20,
				tiers: true,
			},
		);
		const next = seededRandom(5);
		for (let i = 0; i < 3; i++)
			await roomy.add([chunk(5000 + i)], [Array.from({ length: DIMS }, () => next())]);
		const after = (await roomy.readManifest(true)).doc;
		assert.ok(after.segments.length < before.segments.length + 3, 'the writes compacted something');
		const ids = (d: typeof before) => (d.cells?.tiers ?? []).map((t) => t.id);
		assert.deepEqual(ids(after).slice(0, ids(before).length), ids(before), 'every tier kept');
		for (const ref of tiered)
			assert.ok(
				after.segments.some((r) => r.key === ref.key && r.tier?.id === ref.tier!.id),
				`${ref.key} still in its tier`,
			);
	});

	it('a compaction whose run upkeep regrouped into a tier meanwhile gives way: the tier stays whole', async () => {
		const root = tempDir('cell-tiers');
		const rows = randomRows(60 * 40, DIMS, seededRandom(31));
		// Written without tiers and without merges: 60 small segments, none in a tier yet.
		const plain = new EmbeddedIndex(
			new LocalDiskStorage({ root }),
			'kb',
			vectorIndexPrefix('kb'),
			12,
			{
				segmentBytes: 6000,
			},
		);
		for (let s = 0; s < 60; s++)
			await plain.add(
				rows.slice(s * 40, (s + 1) * 40).map((_, i) => chunk(s * 40 + i)),
				rows.slice(s * 40, (s + 1) * 40),
			);
		const options = { segmentBytes: 4 * 2 ** 20, tiers: true };
		const upkeep = new EmbeddedIndex(
			new LocalDiskStorage({ root }),
			'kb',
			vectorIndexPrefix('kb'),
			12,
			options,
		);
		// The compaction's merged segment is written after it chose its run and before its swap: the
		// oldest segments (its run) are regrouped into tiers right then.
		let raced = false;
		const disk = new LocalDiskStorage({ root });
		const hooked = Object.assign(Object.create(disk), {
			put: async (key: string, body: Uint8Array, opts?: object) => {
				if (!raced && key.endsWith('.vec')) {
					raced = true;
					await settleCellTiers(upkeep);
				}
				return disk.put(key, body, opts);
			},
		}) as LocalDiskStorage;
		const compacting = new EmbeddedIndex(hooked, 'kb', vectorIndexPrefix('kb'), 12, options);
		assert.equal(await compacting.compact(), false, 'the compaction gave way');
		assert.ok(raced, 'upkeep ran between the run chosen and the swap');
		const doc = (await upkeep.readManifest(true)).doc;
		const tiers = doc.cells?.tiers ?? [];
		assert.ok(tiers.length >= 1, 'tiers built');
		for (const t of tiers)
			assert.equal(
				doc.segments.filter((r) => r.tier?.id === t.id).length,
				t.segments,
				`tier ${t.id} whole`,
			);
	});

	/** Every tier of the manifest: whole, and its buckets holding exactly its segments' rows. */
	async function assertTiersHoldTheirSegments(index: EmbeddedIndex) {
		const doc = (await index.readManifest(true)).doc;
		for (const t of doc.cells?.tiers ?? []) {
			const refs = doc.segments.filter((r) => r.tier?.id === t.id);
			assert.equal(refs.length, t.segments, `tier ${t.id} whole`);
			assert.deepEqual(
				refs.map((r) => r.tier!.ord),
				refs.map((_, i) => i),
				'its segments numbered in order',
			);
			const own: string[] = [];
			for (const r of refs) own.push(...(await index.readSegment(r))!.chunks.map((c) => c.id));
			const held: string[] = [];
			for (let b = 0; b < t.buckets; b++) {
				const key = cellBucketKey(index.segmentsPrefix, t, b);
				const got = await index.storage.get(key);
				assert.ok(got, `${key} stored`);
				const total = cellCount(await readCodebook(index, t.codebook));
				held.push(...decodeCellBucket(key, got.body, t, b, total).segment.chunks.map((c) => c.id));
			}
			assert.deepEqual(held.sort(), own.sort(), `tier ${t.id} holds its segments' rows`);
			assert.equal(t.rows, own.length, `tier ${t.id} counts its rows`);
		}
		return doc;
	}

	it('Forget keeps the cell tiers: only the buckets holding the conversation are written again, under new keys; nothing of it stays', async () => {
		const { root, open, writer, rows } = await tieredIndex();
		assert.deepEqual(await writer.sweepOrphans(0), []);
		const before = (await writer.readManifest(true)).doc;
		const tiers = before.cells?.tiers ?? [];
		assert.ok(tiers.length >= 1, 'tiers built');
		const removed = await writer.forgetSession('s3');
		assert.equal(removed, rows.filter((_, i) => i % 7 === 3).length);
		const after = await assertTiersHoldTheirSegments(writer);
		assert.deepEqual(
			(after.cells?.tiers ?? []).map((t) => t.id),
			tiers.map((t) => t.id),
			'every tier kept',
		);
		const rewritten = (after.cells?.tiers ?? []).flatMap((t) => Object.keys(t.versions ?? {}));
		assert.ok(rewritten.length > 0, 'some buckets written again');
		const storage = new LocalDiskStorage({ root });
		for (const o of await storage.list(vectorIndexPrefix('kb'))) {
			const got = await storage.get(o.key);
			assert.ok(!got!.body.toString().includes('"s3"'), `${o.key} holds the forgotten session`);
		}
		assert.deepEqual(await writer.sweepOrphans(0), [], 'every stored part listed');
		// A search through the tiers finds what an exact pass over what is left finds, and reads them.
		await assertRecallThroughTiers(root, open, writer, rows, after.segments.length, 's3');
		// Forgotten again, and another conversation: the versions move on, the tiers stay.
		assert.equal(await writer.forgetSession('s3'), 0);
		await writer.forgetSession('s5');
		const again = await assertTiersHoldTheirSegments(writer);
		assert.deepEqual(
			(again.cells?.tiers ?? []).map((t) => t.id),
			tiers.map((t) => t.id),
		);
	});

	it('an index kept in tiers lists no users per segment; a search of one user still finds exactly theirs', async () => {
		const root = tempDir('cell-tiers');
		const open = (tiers: boolean) =>
			new EmbeddedIndex(
				new LocalDiskStorage({ root: `${root}/${tiers}` }),
				'kb',
				vectorIndexPrefix('kb'),
				12,
				{
					segmentBytes: 6000,
					tiers,
				},
			);
		const rows = randomRows(600, DIMS, seededRandom(61));
		const owned = (i: number): IndexedChunk => ({ ...chunk(i), user_id: `u${i % 3}` });
		const [plain, tiered] = [open(false), open(true)];
		for (const index of [plain, tiered])
			for (let s = 0; s < 15; s++)
				await index.add(
					rows.slice(s * 40, (s + 1) * 40).map((_, i) => owned(s * 40 + i)),
					rows.slice(s * 40, (s + 1) * 40),
				);
		const refs = (await tiered.readManifest(true)).doc.segments;
		assert.ok(refs.length > 1 && refs.every((r) => r.users === undefined), 'no users listed');
		assert.ok((await plain.readManifest(true)).doc.segments.every((r) => r.users?.length));
		for (const q of rows.slice(0, 5)) {
			const mine = await tiered.search(q, 10, { userId: 'u1' });
			assert.ok(mine.length === 10 && mine.every((m) => m.user_id === 'u1'));
			assert.deepEqual(
				mine.map((m) => m.id),
				(await plain.search(q, 10, { userId: 'u1' })).map((m) => m.id),
			);
		}
	});

	it('a sweep takes an unlisted segment after the lease, an unlisted tier part (a merge still writing) only after an hour', async () => {
		const { root, writer } = await tieredIndex();
		const prefix = writer.segmentsPrefix;
		const aged = async (key: string, minutes: number) => {
			await writer.storage.put(key, Buffer.from('unlisted'), { ifVersion: null });
			const at = new Date(Date.now() - minutes * 60_000);
			utimesSync(path.join(root, ...key.split('/')), at, at);
		};
		await aged(`${prefix}orphan-a.vec`, 10);
		await aged(`${prefix}cells-0123456789abcdef01-0.vcl`, 10);
		await aged(`${prefix}cells-0123456789abcdef02-0.vcl`, 61);
		assert.deepEqual((await writer.sweepOrphans(120_000)).sort(), [
			`${prefix}cells-0123456789abcdef02-0.vcl`,
			`${prefix}orphan-a.vec`,
		]);
		assert.ok(
			await writer.storage.get(`${prefix}cells-0123456789abcdef01-0.vcl`),
			'the young part kept',
		);
		assert.deepEqual(await writer.sweepOrphans(120_000), []);
	});

	it('a tier left without segments by a Forget goes, with its buckets', async () => {
		const root = tempDir('cell-tiers');
		const index = new EmbeddedIndex(
			new LocalDiskStorage({ root }),
			'kb',
			vectorIndexPrefix('kb'),
			12,
			{
				segmentBytes: 6000,
				tiers: true,
			},
		);
		const rows = randomRows(30 * 40, DIMS, seededRandom(41));
		const one = (i: number): IndexedChunk => ({ ...chunk(i), session_id: 'only' });
		for (let s = 0; s < 30; s++)
			await index.add(
				rows.slice(s * 40, (s + 1) * 40).map((_, i) => one(s * 40 + i)),
				rows.slice(s * 40, (s + 1) * 40),
			);
		await settleCellTiers(index);
		assert.ok(((await index.readManifest(true)).doc.cells?.tiers ?? []).length >= 1, 'tiers built');
		assert.equal(await index.forgetSession('only'), rows.length);
		const doc = (await index.readManifest(true)).doc;
		assert.deepEqual(doc.segments, []);
		assert.deepEqual(doc.cells?.tiers ?? [], []);
		const left = (await new LocalDiskStorage({ root }).list(vectorIndexPrefix('kb'))).map(
			(o) => o.key,
		);
		assert.ok(
			left.every((k) => !k.endsWith('.vcl')),
			`buckets left: ${left.join(', ')}`,
		);
	});

	it('a merge of tiers that read their buckets before a Forget rewrote them is not listed, and leaves nothing of the conversation', async () => {
		const { root, open, writer } = await tieredIndex();
		const disk = () => new LocalDiskStorage({ root });
		// Two more tiers' worth of segments, then upkeep: it merges tiers, and a Forget lands mid-merge.
		const rows = randomRows(40 * 40, DIMS, seededRandom(51));
		const plain = new EmbeddedIndex(disk(), 'kb', vectorIndexPrefix('kb'), 12, {
			segmentBytes: 6000,
		});
		for (let s = 0; s < 40; s++)
			await plain.add(
				rows.slice(s * 40, (s + 1) * 40).map((_, i) => chunk(10_000 + s * 40 + i)),
				rows.slice(s * 40, (s + 1) * 40),
			);
		let forgot = false;
		const local = disk();
		const hooked = Object.assign(Object.create(local), {
			put: async (key: string, body: Uint8Array, opts?: object) => {
				const out = await local.put(key, body, opts);
				// The upkeep's first bucket written: its sources were read; the Forget swaps now.
				if (!forgot && key.endsWith('.vcl')) {
					forgot = true;
					await writer.forgetSession('s3');
				}
				return out;
			},
		}) as LocalDiskStorage;
		await settleCellTiers(open(hooked));
		assert.ok(forgot, 'the Forget ran mid-upkeep');
		await assertTiersHoldTheirSegments(writer);
		for (const o of await local.list(vectorIndexPrefix('kb'))) {
			const got = await local.get(o.key);
			assert.ok(!got!.body.toString().includes('"s3"'), `${o.key} holds the forgotten session`);
		}
	});
});
