// A Forget's rewrites of stored vector segments and cell buckets, a block of chunks at a time: the
// same bytes as an encoding of the rows kept, and never every chunk of a bucket decoded at once (a
// bucket of a large base is megabytes stored and several times that decoded), on local disk.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	clearAllCaches,
	decodeSegment,
	EmbeddedIndex,
	encodeSegment,
	encodeWholeSegment,
	LocalDiskStorage,
	settleTiers,
	vectorIndexPrefix,
} from '../../../src/internal';
import type { GetOptions, IndexedChunk, StoredObject } from '../../../src/internal';
import { BLOCK, ChunkBlocks, gzJson } from '../../../src/indexes/chunks/blocks';
import { rewriteBuckets } from '../../../src/indexes/vector/cell-forget';
import {
	buildCellTier,
	cellBucketKey,
	decodeCellBucket,
} from '../../../src/indexes/vector/cell-tiers';
import { cellCount, trainCodebook } from '../../../src/indexes/vector/codebook';
import { encodeRows, keptRows, writeSegmentRows } from '../../../src/indexes/vector/segment-writer';
import { normaliseRows } from '../../../src/indexes/vector/vector-segment';
import { randomRows, seededRandom } from '../../support/embeddings';
import { gc } from '../../support/held';
import { tempDir } from '../../support/storages';
import { appendSegments, tieredVectorIndex, vectorChunk } from '../../support/vector-segments';
import { MeteredStorage } from '../../support/wide-base';
import { docs as termDocs, indexOn as termIndexOn } from '../../support/term-tiers';

const DIMS = 16;

/** `n` chunks of `textBytes` characters each (a repeated word: small gzipped, large decoded). */
const chunksOf = (n: number, textBytes = 40): IndexedChunk[] =>
	Array.from({ length: n }, (_, i) => ({
		...vectorChunk(i, `s${i % 5}`),
		text: `${'word '.repeat(Math.ceil(textBytes / 5)).slice(0, textBytes - 6)} ${String(i).padStart(5, '0')}`,
	}));

const unitRows = (n: number, seed = 3) => normaliseRows(randomRows(n, DIMS, seededRandom(seed)), n);

describe('rewrites a block at a time', () => {
	it('the rows a segment keeps, taken one at a time, store the same bytes as those rows encoded at once', () => {
		for (const n of [1, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 5]) {
			const chunks = chunksOf(n);
			const vectors = unitRows(n);
			const tags = Array.from({ length: n }, (_, r) => r % 9);
			const keep = (c: IndexedChunk) => c.session_id !== 's1';
			const rows = [...chunks.keys()].filter((r) => keep(chunks[r]));
			const expected = {
				chunks: rows.map((r) => chunks[r]),
				vectors: Float32Array.from(
					rows.flatMap((r) => [...vectors.subarray(r * DIMS, (r + 1) * DIMS)]),
				),
			};
			for (const stored of [
				encodeSegment(DIMS, chunks, vectors, { kind: 'x' }, tags),
				encodeWholeSegment(DIMS, chunks, vectors),
			]) {
				const seg = decodeSegment('seg', stored);
				const tagged = stored[7] === 0x33; // LLMVEC03: blocks and tags
				const got = encodeRows(
					DIMS,
					keptRows(seg, keep, tagged ? tags : undefined),
					n,
					tagged ? { kind: 'x' } : {},
					tagged,
				);
				const want = encodeSegment(
					DIMS,
					expected.chunks,
					expected.vectors,
					tagged ? { kind: 'x' } : {},
					tagged ? rows.map((r) => tags[r]) : undefined,
				);
				assert.ok(
					got.equals(want),
					`${n} rows (${tagged ? 'in blocks' : 'whole'}): the same bytes`,
				);
				const back = decodeSegment('back', got);
				assert.deepEqual(back.chunks, expected.chunks);
				assert.deepEqual([...back.vectors], [...expected.vectors]);
			}
		}
	});

	it('a block read for one pass is not kept; one asked for by a reader is, and served from there', () => {
		const chunks = chunksOf(BLOCK * 2);
		const stored = [gzJson(chunks.slice(0, BLOCK)), gzJson(chunks.slice(BLOCK))];
		let reads = 0;
		const blocks = new ChunkBlocks({
			count: chunks.length,
			block: (b) => (reads++, stored[b]),
			listed: () => true,
			field: 'chunks',
			fail: (d) => assert.fail(d),
		});
		assert.deepEqual(blocks.read(0), chunks.slice(0, BLOCK));
		assert.deepEqual(blocks.read(0), chunks.slice(0, BLOCK));
		assert.equal(reads, 2, 'decoded each time, not kept');
		assert.deepEqual(blocks.at(BLOCK + 1), chunks[BLOCK + 1]);
		blocks.read(1);
		blocks.at(BLOCK);
		assert.equal(reads, 3, 'a block kept by at() is read from there');
	});

	it('more rows than said is an error; no row writes no segment', async () => {
		const chunks = chunksOf(3).map((c, i) => ({ ...c, user_id: `u${i % 2}` }));
		const rows = chunks.map((chunk, r) => ({ chunk, vectors: unitRows(3), row: r }));
		assert.throws(() => encodeRows(DIMS, rows, 2), RangeError);
		const storage = new MeteredStorage(new LocalDiskStorage({ root: tempDir('rewrites') }));
		const target = { storage, segmentsPrefix: 'vectors/segments/', tiered: false };
		assert.equal(await writeSegmentRows(target, DIMS, [], 10), null);
		assert.equal(storage.counts.put, 0, 'nothing written');
		const ref = await writeSegmentRows(target, DIMS, rows, 3);
		assert.deepEqual(
			[ref?.count, ref?.sessions, ref?.users],
			[3, ['s0', 's1', 's2'], ['u0', 'u1']],
		);
		assert.equal(storage.counts.put, 1);
		const tiered = await writeSegmentRows({ ...target, tiered: true }, DIMS, rows, 3);
		assert.equal(tiered?.users, undefined, 'a tiered index lists no users');
	});

	it('a Forget’s rewrite of a cell bucket holds a block of its chunks decoded, not the bucket’s', async () => {
		const root = tempDir('rewrites');
		const index = new EmbeddedIndex(new LocalDiskStorage({ root }), 'kb', vectorIndexPrefix('kb'));
		// 1,500 rows of 4 KB texts: about 6 MB decoded, a few hundred KB stored (the texts repeat).
		const n = 1500;
		const chunks = chunksOf(n, 4096);
		const vectors = unitRows(n);
		await appendSegments(
			index,
			chunks,
			Array.from({ length: n }, (_, r) => [...vectors.subarray(r * DIMS, (r + 1) * DIMS)]),
		);
		const refs = (await index.readManifest(true)).doc.segments;
		const cb = trainCodebook(vectors, DIMS);
		const tier = await buildCellTier(index, cb, refs);
		assert.equal(tier.buckets, 1, 'one bucket holds every row');
		const stored = (await index.storage.get(cellBucketKey(index.segmentsPrefix, tier, 0)))!.body
			.byteLength;
		gc();
		const before = process.memoryUsage().heapUsed;
		let most = 0;
		let seen = 0;
		const drop = (c: IndexedChunk) => {
			// Measured while the rewrite runs: it is synchronous from the first chunk to the last.
			if (seen++ % BLOCK === 0) {
				gc();
				most = Math.max(most, process.memoryUsage().heapUsed - before);
			}
			return c.session_id === 's1';
		};
		const out = await rewriteBuckets(index, cb, tier, [0], drop);
		assert.equal(seen, n, 'every row was looked at');
		assert.equal(out.removed, n / 5);
		const decoded = n * 4096;
		assert.ok(
			most < decoded / 4,
			`held ${(most / 2 ** 20).toFixed(1)} MiB of ${(decoded / 2 ** 20).toFixed(1)} MiB decoded (${(stored / 2 ** 10).toFixed(0)} KiB stored)`,
		);
		const key = cellBucketKey(index.segmentsPrefix, out.tier, 0);
		const { segment } = decodeCellBucket(
			key,
			(await index.storage.get(key))!.body,
			out.tier,
			0,
			cellCount(cb),
		);
		assert.equal(segment.chunks.length, n - n / 5);
		assert.ok(segment.chunks.every((c) => c.session_id !== 's1'));
	});
});

/** A storage that notes the most reads of keys `watch` picks under way at once. */
class ReadsAtOnce extends MeteredStorage {
	now = 0;
	most = 0;

	constructor(
		inner: LocalDiskStorage,
		private readonly watch: (key: string) => boolean,
	) {
		super(inner);
	}

	override async get(key: string, options: GetOptions = {}): Promise<StoredObject | null> {
		if (!this.watch(key)) return (await super.get(key, options)) as StoredObject | null;
		this.most = Math.max(this.most, ++this.now);
		try {
			return (await super.get(key, options)) as StoredObject | null;
		} finally {
			this.now--;
		}
	}
}

describe('a Forget’s rewrite of term tiers', () => {
	/** A word index with term tiers where one conversation is spread over every segment, its tiers' bytes scaled. */
	async function forgetWith(scale: number) {
		const storage = new ReadsAtOnce(new LocalDiskStorage({ root: tempDir('term-rewrites') }), (k) =>
			k.endsWith('.trm'),
		);
		const index = termIndexOn(storage);
		const all = termDocs(2000, 3).map((d, i) =>
			i % 20 === 0 ? { ...d, session_id: 'gone-session' } : d,
		);
		await index.addOlder(all);
		await settleTiers(index);
		await index.update((cur) => ({
			...cur.doc,
			terms: cur.doc.terms?.map((t) => ({ ...t, bytes: t.bytes * scale })),
		}));
		// Read from storage, not from what the writes left in this process's caches.
		clearAllCaches();
		storage.most = 0;
		assert.equal(await index.forgetSession('gone-session'), 100);
		return storage.most;
	}

	it('rewrites as many buckets at once as fit its bytes: one at a time when each is megabytes', async () => {
		const small = await forgetWith(1);
		assert.ok(small > 1, `${small} buckets read at once where they are small`);
		// Each bucket then weighs more than the whole window: one at a time.
		assert.equal(await forgetWith(1e5), 1);
	});
});

describe('a Forget’s rewrite of cell tiers', () => {
	/** A tiered vector index, its cell tiers' bytes scaled; the most bucket reads at once while it forgets one conversation. */
	async function forgetWith(scale: number) {
		// Small buckets, so that the conversation is in many of a tier.
		const { root, open } = await tieredVectorIndex(DIMS, (i) => vectorChunk(i, `s${i % 7}`), {
			bucketBytes: 4096,
		});
		const storage = new ReadsAtOnce(new LocalDiskStorage({ root }), (k) => k.endsWith('.vcl'));
		const index = open(storage);
		await index.updateManifest((cur) => ({
			...cur.doc,
			cells: {
				...cur.doc.cells,
				tiers: (cur.doc.cells?.tiers ?? []).map((t) => ({ ...t, bytes: t.bytes * scale })),
			},
		}));
		clearAllCaches();
		storage.most = 0;
		assert.ok((await index.forgetSession('s3')) > 0);
		return storage.most;
	}

	it('rewrites as many buckets at once as fit its bytes: one at a time when each is megabytes', async () => {
		const small = await forgetWith(1);
		assert.ok(small > 1, `${small} buckets read at once where they are small`);
		assert.equal(await forgetWith(1e5), 1);
	});
});
