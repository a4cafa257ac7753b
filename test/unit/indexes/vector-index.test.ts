// The embedded vector index (exact cosine search over write-once Float32 segments), on local disk.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	clearAllCaches,
	clearVectorCache,
	CorruptDocumentError,
	chunkAt,
	decodeSegment,
	DimensionMismatchError,
	EmbeddedIndex,
	EmbeddingError,
	encodeSegment,
	encodeWholeSegment,
	LocalDiskStorage,
	COMPACT_BELOW,
	MAX_SEGMENTS,
	partsOf,
	rowCount,
	SEGMENT_MAX_VECTORS,
	simdAvailable,
	smallRun,
	TAIL_FLOOR_BYTES,
	tailRun,
	streamedRanking,
	useSimd,
	vectorIndexPrefix,
	vectorManifestKey,
} from '../../../src/internal';
import type { IndexedChunk } from '../../../src/internal';
import { WINDOW } from '../../../src/indexes/chunks/search-reads';
import { cosine, randomRows, seededRandom } from '../../support/embeddings';
import { closeVectors, openVectors } from '../../support/stored-segments';
import { tempDir } from '../../support/storages';
import { appendSegments, vectorChunk } from '../../support/vector-segments';
import { MeteredStorage } from '../../support/wide-base';

const chunk = (i: number, session = 's', id = `c${i}`): IndexedChunk =>
	vectorChunk(i, session, { id, text: `text ${i}` });

/** Seeded pseudo-random vectors. */
const makeRows = (n: number, dims: number, seed = 1) => randomRows(n, dims, seededRandom(seed));

function setup() {
	const storage = new LocalDiskStorage({ root: tempDir('vector-index') });
	return { storage, index: new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb')) };
}

/** Counts the bytes written to segments (`.vec`). */
class WrittenBytes extends LocalDiskStorage {
	segmentBytes = 0;

	override put(key: string, body: Uint8Array, options?: Parameters<LocalDiskStorage['put']>[2]) {
		if (key.endsWith('.vec')) this.segmentBytes += body.byteLength;
		return super.put(key, body, options);
	}
}

describe('embedded vector index', () => {
	for (const kernel of ['WebAssembly SIMD', 'JavaScript'])
		it(`search is exact (${kernel}): the same top K as brute-force cosine, across segments, best first`, async () => {
			useSimd(kernel !== 'JavaScript');
			if (kernel !== 'JavaScript') assert.ok(simdAvailable(), 'Node 20+ has WebAssembly SIMD');
			const { index } = setup();
			const rows = makeRows(2500, 48);
			const chunks = rows.map((_, i) => chunk(i, i % 2 ? 'odd' : 'even'));
			// Laid out as four segments, unmerged: the search must be exact across them.
			await appendSegments(index, chunks.slice(0, 1200), rows.slice(0, 1200));
			await appendSegments(index, chunks.slice(1200), rows.slice(1200));
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

	it('a lone small segment between large ones does not stop later merges (a Forget made it small)', async () => {
		const { index } = setup();
		const dims = 4;
		// Large segments, as merges leave them.
		const big = 6 * COMPACT_BELOW;
		const forgotten = COMPACT_BELOW + 1000;
		const rows = makeRows(big + 40, dims, 5);
		const chunks = rows.map((_, i) => chunk(i, i < forgotten ? 'forgotten' : 'kept'));
		await appendSegments(index, chunks.slice(0, big), rows.slice(0, big), COMPACT_BELOW);
		await index.forgetSession('forgotten');
		const after = (await index.readManifest(true)).doc.segments.map((r) => r.count);
		assert.ok(after[0] < COMPACT_BELOW && after[1] >= COMPACT_BELOW, `segments ${after.join(' ')}`);
		// Forty single-vector adds: they must merge among themselves, behind the lone small segment.
		for (let i = big; i < big + 40; i++) await index.add([chunks[i]], [rows[i]]);
		const stats = await index.stats();
		assert.ok(stats.segments <= MAX_SEGMENTS + 1, `${stats.segments} segments`);
		assert.equal(stats.vectors, big + 40 - forgotten);
		clearVectorCache();
		const hits = await index.search(rows[big + 7], 1);
		assert.equal(hits[0].id, `c${big + 7}`);
	});

	it('an index with a byte cap keeps every segment under it, as it adds and as it merges', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('vector-index') });
		const cap = 256 * 1024;
		const index = new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb'), 12, {
			segmentBytes: cap,
		});
		const dims = 512; // 2 KiB of floats a row: about 120 rows a segment
		const rows = makeRows(1500, dims, 9);
		const chunks = rows.map((_, i) => chunk(i, `s${i % 7}`));
		await index.add(chunks.slice(0, 700), rows.slice(0, 700));
		for (let i = 700; i < 1500; i += 20)
			await index.add(chunks.slice(i, i + 20), rows.slice(i, i + 20));
		const refs = (await index.readManifest(true)).doc.segments;
		const row = 4 * dims + 400;
		assert.ok(
			refs.every((r) => r.bytes <= cap + row),
			refs.map((r) => r.bytes).join(' '),
		);
		// Still merged: 46 adds, about 15 segments' worth of bytes.
		const full = Math.ceil(refs.reduce((n, r) => n + r.bytes, 0) / cap);
		assert.ok(refs.length <= Math.max(MAX_SEGMENTS, 2 * full), `${refs.length} segments`);
		assert.equal((await index.stats()).vectors, 1500);
		clearVectorCache();
		const hits = await index.search(rows[1234], 1);
		assert.equal(hits[0].id, 'c1234');
	});

	it('partsOf: rows per segment by count, and by bytes when capped', () => {
		const chunks = Array.from({ length: 3000 }, (_, i) => chunk(i));
		assert.deepEqual(partsOf(chunks, 8, Infinity), [1024, 2048, 3000]);
		// Rows of one size (IDs of three digits).
		const same = chunks.slice(100, 150);
		const one = 4 * 100 + Buffer.byteLength(JSON.stringify(same[0]));
		const ends = partsOf(same, 100, 10 * one + 20);
		assert.deepEqual(ends, [10, 20, 30, 40, 50]);
		// A row larger than the cap is a segment of its own.
		assert.deepEqual(partsOf(chunks.slice(0, 3), 100, 10), [1, 2, 3]);
	});

	it('a search read one segment after another reads large segments one at a time, small ones a window at a time', async () => {
		const peakOf = async (dims: number, rowsPer: number, segments: number) => {
			const root = tempDir('vector-index');
			const writer = new EmbeddedIndex(
				new LocalDiskStorage({ root }),
				'kb',
				vectorIndexPrefix('kb'),
			);
			const rows = makeRows(segments * rowsPer, dims, 4);
			for (let s = 0; s < segments; s++)
				await appendSegments(
					writer,
					rows.slice(s * rowsPer, (s + 1) * rowsPer).map((_, i) => chunk(s * rowsPer + i)),
					rows.slice(s * rowsPer, (s + 1) * rowsPer),
				);
			clearVectorCache();
			const metered = new MeteredStorage(new LocalDiskStorage({ root }));
			const index = new EmbeddedIndex(metered, 'kb', vectorIndexPrefix('kb'));
			const ranking = await streamedRanking(index, rows[rowsPer + 3], 3, {});
			assert.equal(ranking.matches[0].id, `c${rowsPer + 3}`);
			return metered.peak;
		};
		// Four segments of about 5 MB (800 rows of 1,536 dimensions): two would hold 10 MB at once.
		assert.equal(await peakOf(1536, 800, 4), 1);
		// Small ones: as many as the window takes, never more, however many there are.
		assert.equal(await peakOf(8, 800, WINDOW + 2), WINDOW);
	});

	it('a search read one segment after another scores the chunks it is handed on its pass: the same cosines, nothing read again', async () => {
		const root = tempDir('vector-index');
		const writer = new EmbeddedIndex(new LocalDiskStorage({ root }), 'kb', vectorIndexPrefix('kb'));
		const rows = makeRows(120, 16, 6);
		for (let s = 0; s < 4; s++)
			await writer.add(
				rows.slice(s * 30, (s + 1) * 30).map((_, i) => chunk(s * 30 + i, `s${s}`)),
				rows.slice(s * 30, (s + 1) * 30),
			);
		const query = rows[7];
		// The word ranking's chunks: some in every segment, one the index does not hold (no vector).
		const wanted = new Map(['m3', 'm40', 'm75', 'm119', 'm500'].map((m) => [m, new Set([0])]));
		const sessions = new Set(['s0', 's1', 's2', 's3', 'nowhere']);
		const exact = await writer.ranking(query, 5, {});
		const expected = await exact.similarities(wanted, sessions);
		assert.equal(expected.size, 4);

		clearVectorCache();
		const metered = new MeteredStorage(new LocalDiskStorage({ root }));
		const index = new EmbeddedIndex(metered, 'kb', vectorIndexPrefix('kb'));
		const ranking = await streamedRanking(index, query, 5, {}, Promise.resolve(wanted));
		assert.deepEqual(
			ranking.matches.map((m) => m.id),
			exact.matches.map((m) => m.id),
		);
		clearVectorCache();
		const before = metered.counts.get;
		const got = await ranking.similarities(wanted, sessions);
		assert.equal(metered.counts.get, before, 'similarities of the chunks handed over read nothing');
		assert.deepEqual(
			[...wanted].flatMap(([m]) => [...got].filter(([k]) => k.includes(`\n${m}\n`))).sort(),
			[...expected].sort(),
		);
		// Chunks it was not handed: their conversations' segments are read, and scored alike.
		const other = new Map([['m60', new Set([0])]]);
		const more = await ranking.similarities(other, new Set(['s2']));
		assert.ok(metered.counts.get > before, 'chunks not handed over are read');
		assert.deepEqual([...more], [...(await exact.similarities(other, new Set(['s2'])))]);
	});

	it('smallRun: the first run of two or more small neighbours, wherever it is', () => {
		const refs = (...counts: number[]) => counts.map((count) => ({ count, bytes: 10 * count }));
		const small = COMPACT_BELOW - 1;
		assert.equal(smallRun(refs(5000, 10, 5000, 6000)), null);
		assert.deepEqual(
			smallRun(refs(10, 5000, 10, 20, 5000, 30, 40))?.map((r) => r.count),
			[10, 20],
		);
		assert.deepEqual(
			smallRun(refs(5000, 30, 40))?.map((r) => r.count),
			[30, 40],
		);
		// At most about twice COMPACT_BELOW together: the rest is left for the next merge.
		assert.deepEqual(smallRun(refs(small, small, small, small))?.length, 3);
		// And no more bytes than the index's cap, one segment at least.
		assert.deepEqual(
			smallRun(refs(30, 40, 50, 60), 10 * 100)?.map((r) => r.count),
			[30, 40],
		);
		assert.equal(smallRun(refs(300, 400, 500), 10 * 100), null);
		// Never a segment in a cell tier: a run stops at one, and starts after it.
		const tier = { id: 't', ord: 0 };
		const mixed = [
			{ count: 10, bytes: 100, tier },
			{ count: 20, bytes: 200, tier },
			{ count: 30, bytes: 300 },
			{ count: 40, bytes: 400, tier },
			{ count: 50, bytes: 500 },
			{ count: 60, bytes: 600 },
		];
		assert.deepEqual(
			smallRun(mixed)?.map((r) => r.count),
			[50, 60],
		);
		assert.equal(smallRun(mixed.slice(0, 4)), null);
	});

	it('tailRun: the newest segment with each one before it no larger than all after it, or under the floor', () => {
		const KB = 1024;
		const refs = (...kib: number[]) => kib.map((k) => ({ count: k, bytes: k * KB }));
		// Each one larger than all newer ones together: nothing to merge.
		assert.equal(tailRun(refs(3000, 1000, 300)), null);
		// The newest has grown as large as the one before: both, and the one before them too.
		assert.deepEqual(
			tailRun(refs(3000, 600, 300, 300))?.map((r) => r.bytes / KB),
			[600, 300, 300],
		);
		// Under the floor, merged whatever the sizes (a few rows a sync).
		const floor = TAIL_FLOOR_BYTES / KB;
		assert.deepEqual(
			tailRun(refs(3000, floor - 1, 4))?.map((r) => r.bytes / KB),
			[floor - 1, 4],
		);
		assert.equal(tailRun(refs(3000, floor, 4)), null);
		// Never past the byte cap, nor a full segment, nor one in a cell tier, nor more than twice
		// COMPACT_BELOW vectors.
		assert.deepEqual(
			tailRun(refs(100, 100, 100), 250 * KB)?.map((r) => r.bytes / KB),
			[100, 100],
		);
		assert.equal(
			tailRun([
				{ count: COMPACT_BELOW, bytes: 10 },
				{ count: 1, bytes: 10 },
			]),
			null,
		);
		assert.equal(
			tailRun([
				{ count: 5, bytes: 10, tier: { id: 't' } },
				{ count: 1, bytes: 10 },
			]),
			null,
		);
		const half = { count: COMPACT_BELOW - 1, bytes: 10 };
		assert.deepEqual(tailRun([half, half, { count: 3, bytes: 10 }])?.length, 2);
		assert.equal(tailRun(refs(5)), null);
	});

	it('many small adds keep a handful of segments, each larger than all newer ones; a row is rewritten a few times, not with every sixteen adds', async () => {
		const storage = new WrittenBytes({ root: tempDir('vector-index') });
		const index = new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb'), 12, {
			segmentBytes: 4 * 2 ** 20,
		});
		const dims = 512; // 2 KiB a row: a sync of 4 rows is 8 KiB, the floor 8 syncs
		const rows = makeRows(1600, dims, 21);
		const chunks = rows.map((_, i) => chunk(i, `s${Math.floor(i / 4) % 50}`));
		let most = 0;
		for (let i = 0; i < rows.length; i += 4) {
			await index.add(chunks.slice(i, i + 4), rows.slice(i, i + 4));
			const refs = (await index.readManifest(true)).doc.segments;
			most = Math.max(most, refs.length);
			// Each segment is larger than every newer one together, but for the newest under the floor.
			refs.forEach((r, j) => {
				const newer = refs.slice(j + 1).reduce((n, x) => n + x.bytes, 0);
				assert.ok(
					r.bytes > newer || newer < TAIL_FLOOR_BYTES,
					`after ${i / 4 + 1} adds: ${refs.map((x) => x.bytes).join(' ')}`,
				);
			});
		}
		const refs = (await index.readManifest(true)).doc.segments;
		const stored = refs.reduce((n, r) => n + r.bytes, 0);
		assert.ok(most <= 6, `${most} segments at most`);
		// A few rewrites each: 400 adds of 8 KiB to 3.3 MiB. Merging only past MAX_SEGMENTS kept 16
		// segments and wrote 13 times what it stored (the growing first one rewritten every 16 adds).
		const written = storage.segmentBytes / stored;
		assert.ok(written <= 10, `${written.toFixed(1)} times the bytes stored written`);
		assert.equal((await index.stats()).vectors, rows.length);
		clearVectorCache();
		const hits = await index.search(rows[777], 1);
		assert.equal(hits[0].id, 'c777');
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

	it('segments round-trip byte for byte and refuse damage (in blocks, and written whole before)', () => {
		const vectors = new Float32Array([1, 0, 0, 0.6, 0.8, 0]);
		for (const encode of [encodeSegment, encodeWholeSegment]) {
			const body = encode(3, [chunk(0), chunk(1)], vectors);
			const decoded = decodeSegment('k', body);
			assert.deepEqual([...decoded.vectors], [...vectors]);
			assert.equal(decoded.chunks[1].id, 'c1');
			assert.equal(chunkAt(decoded, 1).id, 'c1');
			assert.equal(rowCount(decoded), 2);
			// Misaligned bytes (a Buffer from a pool) decode too.
			const shifted = Buffer.alloc(body.length + 1);
			body.copy(shifted, 1);
			assert.deepEqual([...decodeSegment('k', shifted.subarray(1)).vectors], [...vectors]);
			assert.throws(
				() => decodeSegment('k', body.subarray(0, body.length - 4)),
				CorruptDocumentError,
			);
		}
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
			const both = [chunk(0), altered as unknown as IndexedChunk];
			const named = (e: unknown) =>
				e instanceof CorruptDocumentError &&
				e.message.includes('segments/altered') &&
				e.message.includes(`chunks.1.${field}`);
			// Written whole (before blocks): refused as it is decoded.
			assert.throws(
				() => decodeSegment('segments/altered', encodeWholeSegment(3, both, rows)),
				named,
				field,
			);
			// In blocks, altered on storage: refused whenever a chunk of its block is asked for, every
			// time, never empty.
			const opened = openVectors(encodeSegment(3, [chunk(0), chunk(1)], rows));
			alter(opened.blocks[0][1]);
			const seg = decodeSegment('segments/altered', closeVectors(opened));
			for (let i = 0; i < 2; i++) {
				assert.throws(() => chunkAt(seg, 1), named, field);
				assert.throws(() => chunkAt(seg, 0), named, field);
				assert.throws(() => seg.chunks, named, field);
			}
		}
	});

	it('a segment replaced by another valid one of the index is an error naming it, not a ranking', async () => {
		const { index, storage } = setup();
		const rows = makeRows(30, 8);
		await appendSegments(
			index,
			rows.slice(0, 20).map((_, i) => chunk(i)),
			rows.slice(0, 20),
		);
		await appendSegments(
			index,
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

	it('a manifest whose lists of conversations or users were altered on storage is refused, naming the field, and left as it was', async () => {
		for (const [field, alter] of [
			['sessions', (s: Record<string, unknown>) => (s.sessions = ['s', ''])],
			['sessions', (s: Record<string, unknown>) => (s.sessions = ['s', 42])],
			['sessions', (s: Record<string, unknown>) => (s.sessions = 's')],
			['sessions', (s: Record<string, unknown>) => delete s.sessions],
			['users', (s: Record<string, unknown>) => (s.users = [''])],
			['users', (s: Record<string, unknown>) => (s.users = { u: 1 })],
		] as const) {
			const { index, storage } = setup();
			await index.add(
				[chunk(0, 's'), chunk(1, 't')],
				[
					[1, 0],
					[0, 1],
				],
			);
			const key = vectorManifestKey('kb');
			const doc = JSON.parse(Buffer.from((await storage.get(key))!.body).toString());
			assert.deepEqual(doc.segments[0].sessions, ['s', 't']);
			alter(doc.segments[0]);
			const altered = Buffer.from(JSON.stringify(doc));
			await storage.put(key, altered);
			clearAllCaches();
			await assert.rejects(
				index.search([1, 0], 1),
				(e: unknown) =>
					e instanceof CorruptDocumentError &&
					e.message.includes(key) &&
					e.message.includes(`segments.0.${field}`),
				JSON.stringify(doc.segments[0][field]),
			);
			// Never treated as empty, never rewritten: a write refuses it too.
			await assert.rejects(index.add([chunk(2, 'u')], [[1, 0]]), CorruptDocumentError);
			assert.deepEqual(Buffer.from((await storage.get(key))!.body), altered);
		}
	});

	it('clear() deletes the manifest first, then every segment', async () => {
		const { index, storage } = setup();
		await index.add([chunk(0)], [[1, 0]]);
		const stored = (await storage.list('knowledge_base/kb/index/')).map((o) => o.key).sort();
		const deleted: string[] = [];
		const count = await index.clear((key) => deleted.push(key));
		assert.equal(deleted[0], vectorManifestKey('kb'));
		assert.deepEqual([...deleted].sort(), stored);
		assert.equal(count, stored.length);
		assert.deepEqual(await storage.list('knowledge_base/kb/index/'), []);
		assert.deepEqual(await index.search([1, 0], 1), []);
	});
});
