// The int8 first pass of vector search (WebAssembly SIMD) and the exact rerank after it: the kernel's
// sums are exact integers within the stated error bound, and searches return exactly what a plain
// Float32 pass over every row returns (same chunks, same order on ties, same scores), on random rows,
// duplicates, near-duplicates, skewed rows, filters and superseded chunks; with SIMD on and off.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import {
	cacheStats,
	chunkOrder,
	clearVectorCache,
	EmbeddedIndex,
	LocalDiskStorage,
	SEGMENT_MAX_VECTORS,
	simdAvailable,
	useSimd,
	vectorIndexPrefix,
} from '../../../src/internal';
import type { ChunkFilter, IndexedChunk, VectorMatch } from '../../../src/internal';
import { QuantizedRows, quantizeQuery, strideOf } from '../../../src/indexes/vector/simd';
import { randomRows, seededRandom } from '../../support/embeddings';
import { tempDir } from '../../support/storages';
import { appendSegments } from '../../support/vector-segments';

/** Normalises rows into one Float32Array, computed as the index computes it (normaliseRows). */
function normalised(rows: number[][]): Float32Array {
	const dims = rows[0].length;
	const out = new Float32Array(rows.length * dims);
	rows.forEach((row, r) => {
		let norm = 0;
		for (const x of row) norm += x * x;
		const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
		row.forEach((x, j) => (out[r * dims + j] = x * scale));
	});
	return out;
}

function chunk(i: number, extra: Partial<IndexedChunk> = {}): IndexedChunk {
	return {
		id: `c${i}`,
		session_id: `s${i % 3}`,
		user_id: `u${i % 2}`,
		message_id: `m${i}`,
		seq: i + 1,
		run_id: `r${i}`,
		chunk_index: 0,
		created_at: new Date(Date.UTC(2025, 0, 1 + (i % 28))).toISOString(),
		text: `text ${i}`,
		...extra,
	};
}

/** Every search of `index` with SIMD on and with it off (a plain exact pass), for comparison. */
async function bothWays(
	index: EmbeddedIndex,
	query: number[],
	k: number,
	scope?: ChunkFilter,
): Promise<{ fast: VectorMatch[]; plain: VectorMatch[] }> {
	useSimd(true);
	clearVectorCache();
	const fast = await index.search(query, k, scope, { withVectors: true });
	useSimd(false);
	clearVectorCache();
	const plain = await index.search(query, k, scope, { withVectors: true });
	useSimd(true);
	return { fast, plain };
}

/** Cosine of each indexed row with the query in Float64, best first, ties by insertion order. */
function bruteForce(rows: number[][], ids: string[], query: number[], k: number) {
	const q = normalised([query]);
	const all = normalised(rows);
	const dims = query.length;
	return ids
		.map((id, i) => {
			let s = 0;
			for (let j = 0; j < dims; j++) s += all[i * dims + j] * q[j];
			return { id, s, i };
		})
		.sort((a, b) => b.s - a.s || chunkOrder(chunk(a.i), chunk(b.i)))
		.slice(0, k);
}

function setup(): EmbeddedIndex {
	const storage = new LocalDiskStorage({ root: tempDir('vector-kernel') });
	return new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb'));
}

/** A new index holding `rows` as chunks c0, c1, … */
async function indexOf(rows: number[][]): Promise<EmbeddedIndex> {
	const index = setup();
	await index.add(
		rows.map((_, i) => chunk(i)),
		rows,
	);
	return index;
}

afterEach(() => useSimd(true));

describe('int8 kernel (WebAssembly SIMD)', () => {
	it('is available, and its sums lie within the bound of the Float32 dot product, at any width', () => {
		assert.ok(simdAvailable(), 'Node 20+ has WebAssembly SIMD');
		for (const dims of [1, 7, 31, 32, 33, 100, 1536, 3072, 8192]) {
			const rand = seededRandom(dims);
			const rows = normalised(randomRows(40, dims, rand));
			const q = normalised(randomRows(1, dims, rand));
			const quant = new QuantizedRows(rows, 40, dims);
			const query = quantizeQuery(q);
			const ints = quant.dots(query);
			for (let r = 0; r < 40; r++) {
				assert.ok(Number.isInteger(ints[r]));
				let exact = 0;
				for (let j = 0; j < dims; j++) exact += rows[r * dims + j] * q[j];
				const approx = ints[r] * quant.scale[r] * query.scale;
				const bound = quant.error[r] * query.norm + quant.reach[r] * query.error;
				assert.ok(Math.abs(approx - exact) <= bound + 1e-12, `${dims} dims, row ${r}`);
			}
		}
	});

	it('does not overflow: a row and a query of equal values at 8,192 dimensions give 1', () => {
		const dims = 8192;
		const rows = new Float32Array(2 * dims).fill(1 / Math.sqrt(dims));
		rows.fill(-1 / Math.sqrt(dims), dims);
		const quant = new QuantizedRows(rows, 2, dims);
		const query = quantizeQuery(rows.subarray(0, dims));
		const ints = quant.dots(query);
		const exact = dims * rows[0] * rows[0]; // 1, give or take the Float32 rounding of each value
		assert.equal(ints[0], 127 * Math.floor(0x7fffffff / (127 * dims)) * dims, 'no wrap-around');
		assert.ok(Math.abs(ints[0] * quant.scale[0] * query.scale - exact) < 1e-12);
		assert.ok(Math.abs(ints[1] * quant.scale[1] * query.scale + exact) < 1e-12);
	});

	it('a decoded segment weighs its stored bytes plus its int8 rows in the segment cache', async () => {
		const index = await indexOf(randomRows(100, 100, seededRandom(2)));
		clearVectorCache();
		await index.search(new Array(100).fill(1), 1);
		const [stored] = await index.storage.list('knowledge_base/kb/index/segments/');
		const weight = cacheStats().find((c) => c.name === 'vector segments')?.weight ?? 0;
		assert.ok(weight >= stored.size + 100 * strideOf(100), `${weight} bytes`);
		assert.ok(weight < stored.size + 100 * strideOf(100) + 2 * 65536, `${weight} bytes`);
	});

	it('a sparse mask: the marked rows get the sums a full pass gives, run by run', () => {
		const dims = 200;
		const rows = normalised(randomRows(300, dims, seededRandom(31)));
		const quant = new QuantizedRows(rows, 300, dims);
		const query = quantizeQuery(normalised(randomRows(1, dims, seededRandom(32))));
		const full = Int32Array.from(quant.dots(query));
		// Runs of 1, 2, … rows apart, the last one ending with the rows: a tenth of them marked.
		const mask = new Uint8Array(300);
		for (let r = 0, len = 1; r < 300; r += len * 10, len = (len % 5) + 1)
			mask.fill(1, r, Math.min(300, r + len));
		mask.fill(1, 297);
		quant.dots(query, new Uint8Array(300)); // nothing marked: computes nothing
		const sparse = quant.dots(query, mask);
		for (let r = 0; r < 300; r++) if (mask[r]) assert.equal(sparse[r], full[r], `row ${r}`);
	});

	it('a zero row scores 0 with a zero bound', () => {
		const quant = new QuantizedRows(new Float32Array(64), 1, 64);
		const query = quantizeQuery(normalised(randomRows(1, 64, seededRandom(3))));
		assert.equal(quant.dots(query)[0], 0);
		assert.equal(quant.error[0], 0);
		assert.equal(quant.reach[0], 0);
	});
});

describe('vector search: int8 first pass, exact rerank', () => {
	for (const k of [1, 5, 64, 2000])
		it(`random rows, top ${k}: the same chunks, order and scores as an exact pass, SIMD on and off`, async () => {
			const index = setup();
			const rows = randomRows(1500, 96, seededRandom(k));
			const ids = rows.map((_, i) => `c${i}`);
			await index.add(
				rows.slice(0, 700).map((_, i) => chunk(i)),
				rows.slice(0, 700),
			);
			await index.add(
				rows.slice(700).map((_, i) => chunk(700 + i)),
				rows.slice(700),
			);
			for (const seed of [1, 2, 3]) {
				const [query] = randomRows(1, 96, seededRandom(1000 + seed));
				const { fast, plain } = await bothWays(index, query, k);
				assert.deepEqual(fast, plain);
				const expected = bruteForce(rows, ids, query, Math.min(k, 1000));
				assert.deepEqual(
					fast.map((h) => h.id),
					expected.map((e) => e.id),
				);
				fast.forEach((h, i) => assert.ok(Math.abs(h.score - expected[i].s) < 1e-12));
			}
		});

	it('dense rows (cosines 0.90–0.99), 3 to 16 dimensions, more rows than a segment holds: top 30 exactly as brute force', async () => {
		for (const dims of [3, 8, 16]) {
			const rand = seededRandom(dims * 7);
			const centre = Array.from({ length: dims }, () => 0.5 + rand());
			// Rows and queries near one direction: the similarities crowd together, as real ones do.
			const near = () => centre.map((x) => x + 0.25 * rand());
			const rows = Array.from({ length: SEGMENT_MAX_VECTORS + 76 }, near);
			const index = setup();
			// Two segments, as written (an add would merge the small second one into the first).
			await appendSegments(
				index,
				rows.map((_, i) => chunk(i)),
				rows,
			);
			assert.ok((await index.stats()).segments >= 2, 'spans segments');
			const ids = rows.map((_, i) => `c${i}`);
			for (let q = 0; q < 20; q++) {
				const query = near();
				const { fast, plain } = await bothWays(index, query, 30);
				assert.deepEqual(fast, plain);
				const expected = bruteForce(rows, ids, query, 30);
				assert.ok(expected[29].s > 0.9, `dense: the 30th is ${expected[29].s}`);
				assert.deepEqual(
					fast.map((h) => h.id),
					expected.map((e) => e.id),
					`${dims} dims, query ${q}`,
				);
				fast.forEach((h, i) => assert.ok(Math.abs(h.score - expected[i].s) < 1e-12));
			}
		}
	});

	it('exact duplicates tie: by the chunks (said first), not by where they are stored; near-duplicates below the int8 step are told apart', async () => {
		const rand = seededRandom(5);
		const [base] = randomRows(1, 256, rand);
		const rows: number[][] = [];
		// Interleaved: copies of the base row, copies nudged by less than the int8 step, random rows.
		for (let i = 0; i < 600; i++) {
			if (i % 3 === 0) rows.push([...base]);
			else if (i % 3 === 1) rows.push(base.map((x, j) => x + (j === i % 256 ? 1e-5 * (i % 7) : 0)));
			else rows.push(randomRows(1, 256, rand)[0]);
		}
		const index = await indexOf(rows);
		const ids = rows.map((_, i) => `c${i}`);
		for (const query of [base, base.map((x, j) => x + (j % 5 === 0 ? 2e-4 : 0))])
			for (const k of [1, 10, 300]) {
				const { fast, plain } = await bothWays(index, query, k);
				assert.deepEqual(fast, plain);
				const expected = bruteForce(rows, ids, query, k);
				assert.deepEqual(
					fast.map((h) => h.id),
					expected.map((e) => e.id),
				);
			}
	});

	it('skewed rows (one large coordinate, a coarse int8 step) and filters, superseded chunks included', async () => {
		const index = setup();
		const rand = seededRandom(9);
		const rows = randomRows(900, 128, rand).map((row, i) => {
			row[i % 128] += 40; // most of the length in one coordinate: the rest falls below the step
			return row;
		});
		const chunks = rows.map((_, i) => chunk(i));
		await index.add(chunks.slice(0, 500), rows.slice(0, 500));
		// Chunks 400–499 again with other rows: only these later copies may be found.
		const later = rows.slice(400).map((row, i) => (i < 100 ? randomRows(1, 128, rand)[0] : row));
		await index.add(chunks.slice(400), later);
		const [query] = randomRows(1, 128, seededRandom(10));
		query[3] += 20;
		const filters: ChunkFilter[] = [
			{},
			{ sessionId: 's1' },
			{ userId: 'u0' },
			{ since: '2025-01-10T00:00:00.000Z', until: '2025-01-20T00:00:00.000Z' },
		];
		for (const filter of filters) {
			const { fast, plain } = await bothWays(index, query, 20, filter);
			assert.deepEqual(fast, plain, JSON.stringify(filter));
			assert.equal(new Set(fast.map((h) => h.id)).size, fast.length, 'each chunk once');
		}
	});

	it('one user of ten, in runs of 1 to 40 rows up to the segment’s end: the same hits as an exact pass', async () => {
		const index = setup();
		const rand = seededRandom(21);
		const rows = randomRows(1000, 96, rand);
		// Users own consecutive runs of rows (as a sync writes one conversation after another).
		const owners: string[] = [];
		for (let u = 0; owners.length < rows.length; u++) {
			const run = 1 + Math.floor((rand() + 0.5) * 40);
			for (let i = 0; i < run && owners.length < rows.length; i++) owners.push(`u${u % 10}`);
		}
		owners[rows.length - 1] = 'u3'; // a run that ends with the segment
		await index.add(
			rows.map((_, i) => chunk(i, { user_id: owners[i] })),
			rows,
		);
		const [query] = randomRows(1, 96, seededRandom(22));
		const { fast, plain } = await bothWays(index, query, 15, { userId: 'u3' });
		assert.deepEqual(fast, plain);
		const mine = owners.flatMap((o, i) => (o === 'u3' ? [i] : []));
		const exact = bruteForce(
			mine.map((i) => rows[i]),
			mine.map((i) => `c${i}`),
			query,
			15,
		);
		assert.deepEqual(
			fast.map((h) => h.id),
			exact.map((e) => e.id),
		);
	});

	it('withVectors returns each hit’s normalised Float32 row', async () => {
		const rows = randomRows(50, 40, seededRandom(12));
		const index = await indexOf(rows);
		const [hit] = await index.search(rows[7], 1, undefined, { withVectors: true });
		assert.equal(hit.id, 'c7');
		assert.deepEqual([...(hit.vector as Float32Array)], [...normalised([rows[7]])]);
		assert.ok(Math.abs(hit.score - 1) < 1e-6);
	});

	it('segments cached while SIMD was off are searched exactly once it is on, and the reverse', async () => {
		const rows = randomRows(300, 64, seededRandom(14));
		const index = await indexOf(rows);
		const [query] = randomRows(1, 64, seededRandom(15));
		const { plain } = await bothWays(index, query, 8);
		useSimd(false);
		clearVectorCache();
		await index.stats(); // loads every segment without int8 rows
		useSimd(true);
		assert.deepEqual(await index.search(query, 8, undefined, { withVectors: true }), plain);
		clearVectorCache();
		await index.stats(); // with int8 rows
		useSimd(false);
		assert.deepEqual(await index.search(query, 8, undefined, { withVectors: true }), plain);
	});
});
