// The embedded vector index (exact cosine search over write-once Float32 segments), on local disk.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	clearVectorCache,
	CorruptDocumentError,
	decodeSegment,
	DimensionMismatchError,
	EmbeddedIndex,
	EmbeddingError,
	encodeSegment,
	LocalDiskStorage,
	MAX_SEGMENTS,
	SEGMENT_MAX_VECTORS,
	simdAvailable,
	useSimd,
	vectorIndexPrefix,
	vectorManifestKey,
} from '../../../src/internal';
import type { IndexedChunk } from '../../../src/internal';
import { cosine, randomRows, seededRandom } from '../../support/embeddings';
import { tempDir } from '../../support/storages';

function chunk(i: number, session = 's', id = `c${i}`): IndexedChunk {
	return {
		id,
		session_id: session,
		message_id: `m${i}`,
		seq: i + 1,
		run_id: `r${i}`,
		chunk_index: 0,
		created_at: new Date(0).toISOString(),
		text: `text ${i}`,
	};
}

/** Seeded pseudo-random vectors. */
const makeRows = (n: number, dims: number, seed = 1) => randomRows(n, dims, seededRandom(seed));

function setup() {
	const storage = new LocalDiskStorage({ root: tempDir('vector-index') });
	return { storage, index: new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb')) };
}

describe('embedded vector index', () => {
	for (const kernel of ['WebAssembly SIMD', 'JavaScript'])
		it(`search is exact (${kernel}): the same top K as brute-force cosine, across segments, best first`, async () => {
			useSimd(kernel !== 'JavaScript');
			if (kernel !== 'JavaScript') assert.ok(simdAvailable(), 'Node 20+ has WebAssembly SIMD');
			const { index } = setup();
			const rows = makeRows(2500, 48);
			const chunks = rows.map((_, i) => chunk(i, i % 2 ? 'odd' : 'even'));
			await index.add(chunks.slice(0, 1200), rows.slice(0, 1200));
			await index.add(chunks.slice(1200), rows.slice(1200));
			const [query] = makeRows(1, 48, 99);
			const expected = rows
				.map((r, i) => ({ i, s: cosine(r, query) }))
				.sort((a, b) => b.s - a.s)
				.slice(0, 10);
			clearVectorCache(); // read from storage, not from what add() cached
			const got = await index.search(query, 10);
			assert.deepEqual(
				got.map((g) => g.id),
				expected.map((e) => `c${e.i}`),
			);
			got.forEach((g, k) => assert.ok(Math.abs(g.score - expected[k].s) < 1e-5));
			const odd = await index.search(query, 5, 'odd');
			assert.ok(odd.every((g) => g.session_id === 'odd'));
			assert.deepEqual(
				odd.map((g) => g.id),
				expected
					.filter((e) => e.i % 2)
					.slice(0, 5)
					.map((e) => `c${e.i}`),
			);
			const stats = await index.stats();
			assert.equal(stats.vectors, 2500);
			assert.equal(
				stats.segments,
				Math.ceil(1200 / SEGMENT_MAX_VECTORS) + Math.ceil(1300 / SEGMENT_MAX_VECTORS),
			);
			assert.deepEqual(stats.bySession, { even: 1250, odd: 1250 });
			useSimd(true);
		});

	it('a chunk ID added again supersedes the earlier copy: counted and found once', async () => {
		const { index } = setup();
		const rows = makeRows(3, 8);
		await index.add([chunk(0), chunk(1), chunk(2)], rows);
		await index.add([chunk(1), chunk(2)], rows.slice(1));
		assert.equal((await index.stats()).vectors, 3);
		const hits = await index.search(rows[1], 10);
		assert.deepEqual(hits.map((h) => h.id).sort(), ['c0', 'c1', 'c2']);
	});

	it('past MAX_SEGMENTS, small segments are merged into one; search results stay the same', async () => {
		const { index, storage } = setup();
		const rows = makeRows(MAX_SEGMENTS + 4, 8);
		for (let i = 0; i < rows.length; i++) await index.add([chunk(i)], [rows[i]]);
		await index.add([chunk(0)], [rows[0]]); // a superseded copy, dropped by the merge
		const stats = await index.stats();
		assert.ok(stats.segments <= MAX_SEGMENTS, `${stats.segments} segments`);
		assert.equal(stats.vectors, rows.length);
		assert.equal(stats.missing.length, 0);
		const listed = await storage.list('knowledge_base/kb/index/segments/');
		assert.equal(listed.length, stats.segments, 'the merged segments were deleted');
		clearVectorCache();
		const hits = await index.search(rows[5], 1);
		assert.equal(hits[0].id, 'c5');
	});

	it('vectors are checked: count, one dimension for all, numbers only; another dimension is refused', async () => {
		const { index } = setup();
		await assert.rejects(index.add([chunk(0)], []), EmbeddingError);
		await assert.rejects(index.add([chunk(0), chunk(1)], [[1, 2], [1]]), EmbeddingError);
		await assert.rejects(index.add([chunk(0)], [[1, Number.NaN]]), EmbeddingError);
		await index.add([chunk(0)], [[1, 0, 0]]);
		await assert.rejects(index.add([chunk(1)], [[1, 0]]), DimensionMismatchError);
		await assert.rejects(index.search([1, 0], 1), DimensionMismatchError);
	});

	it('segments round-trip byte for byte and refuse damage', () => {
		const vectors = new Float32Array([1, 0, 0, 0.6, 0.8, 0]);
		const body = encodeSegment(3, [chunk(0), chunk(1)], vectors);
		const decoded = decodeSegment('k', body);
		assert.deepEqual([...decoded.vectors], [...vectors]);
		assert.equal(decoded.chunks[1].id, 'c1');
		// Misaligned bytes (a Buffer from a pool) decode too.
		const shifted = Buffer.alloc(body.length + 1);
		body.copy(shifted, 1);
		assert.deepEqual([...decodeSegment('k', shifted.subarray(1)).vectors], [...vectors]);
		assert.throws(
			() => decodeSegment('k', body.subarray(0, body.length - 4)),
			CorruptDocumentError,
		);
		assert.throws(() => decodeSegment('k', Buffer.from('not a segment')), CorruptDocumentError);
	});

	it('a segment whose rows were altered (not numbers, infinite, not unit length) is refused, naming it', () => {
		// Rows are stored at unit length (or all zeros, for an embedder that gave zeros).
		const good = new Float32Array([1, 0, 0, 0, 0, 0]);
		assert.deepEqual(
			[...decodeSegment('k', encodeSegment(3, [chunk(0), chunk(1)], good)).vectors],
			[...good],
		);
		for (const [name, row] of [
			['not a number', [Number.NaN, 0, 0]],
			['infinite', [Number.POSITIVE_INFINITY, 0, 0]],
			['five times too long', [3, 4, 0]],
			['a little short', [0.9, 0, 0]],
		] as const) {
			const body = encodeSegment(3, [chunk(0), chunk(1)], new Float32Array([1, 0, 0, ...row]));
			assert.throws(
				() => decodeSegment('segments/altered', body),
				(e: unknown) =>
					e instanceof CorruptDocumentError &&
					e.message.includes('segments/altered') &&
					e.message.includes('row 1'),
				name,
			);
		}
	});

	it('a segment whose chunks were altered (a user ID that is a number, no capture time) is refused, naming the field', () => {
		const rows = new Float32Array([1, 0, 0, 0, 1, 0]);
		for (const [field, alter] of [
			['user_id', (c: Record<string, unknown>) => (c.user_id = 42)],
			['created_at', (c: Record<string, unknown>) => delete c.created_at],
			['seq', (c: Record<string, unknown>) => (c.seq = -1)],
		] as const) {
			const altered: Record<string, unknown> = { ...chunk(1) };
			alter(altered);
			const body = encodeSegment(3, [chunk(0), altered as unknown as IndexedChunk], rows);
			assert.throws(
				() => decodeSegment('segments/altered', body),
				(e: unknown) =>
					e instanceof CorruptDocumentError &&
					e.message.includes('segments/altered') &&
					e.message.includes(`chunks.1.${field}`),
				field,
			);
		}
	});

	it('a segment replaced by another valid one of the index is an error naming it, not a ranking', async () => {
		const { index, storage } = setup();
		const rows = makeRows(30, 8);
		await index.add(
			rows.slice(0, 20).map((_, i) => chunk(i)),
			rows.slice(0, 20),
		);
		await index.add(
			rows.slice(20).map((_, i) => chunk(20 + i)),
			rows.slice(20),
		);
		const keys = (await storage.list(vectorIndexPrefix('kb')))
			.map((o) => o.key)
			.filter((k) => k !== vectorManifestKey('kb'));
		assert.equal(keys.length, 2);
		// The other segment's object copied over this one: valid, but not what the manifest lists.
		await storage.put(keys[0], (await storage.get(keys[1]))!.body);
		clearVectorCache();
		await assert.rejects(
			index.search(rows[0], 5),
			(e: unknown) =>
				e instanceof CorruptDocumentError &&
				e.message.includes(keys[0]) &&
				e.message.includes('its manifest lists'),
		);
	});

	it('a search over a segment altered on storage (a row of NaN) is an error naming it, not a ranking', async () => {
		const { index, storage } = setup();
		const rows = makeRows(40, 8);
		await index.add(
			rows.map((_, i) => chunk(i)),
			rows,
		);
		const keys = (await storage.list(vectorIndexPrefix('kb')))
			.map((o) => o.key)
			.filter((k) => k !== vectorManifestKey('kb'));
		assert.equal(keys.length, 1);
		const body = Buffer.from((await storage.get(keys[0]))!.body);
		body.writeFloatLE(Number.NaN, body.length - 4 * 8);
		await storage.put(keys[0], body);
		clearVectorCache();
		await assert.rejects(
			index.search(rows[0], 5),
			(e: unknown) => e instanceof CorruptDocumentError && e.message.includes(keys[0]),
		);
	});

	it('clear() deletes the manifest first, then every segment', async () => {
		const { index, storage } = setup();
		await index.add([chunk(0)], [[1, 0]]);
		const deleted = await index.clear();
		assert.equal(deleted[0], vectorManifestKey('kb'));
		assert.deepEqual(await storage.list('knowledge_base/kb/index/'), []);
		assert.deepEqual(await index.search([1, 0], 1), []);
	});
});
