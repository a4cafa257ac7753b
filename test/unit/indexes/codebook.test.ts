// The cells of an approximate vector index: a two-level codebook trained on rows, a row's cell, a
// query's probed cells, and the codebook as stored.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { CorruptDocumentError } from '../../../src/internal';
import {
	cellCount,
	cellOf,
	codebookShape,
	decodeCodebook,
	encodeCodebook,
	probe,
	trainCodebook,
} from '../../../src/indexes/vector/codebook';
import { dot } from '../../../src/indexes/vector/vector-segment';
import { seededRandom } from '../../support/embeddings';

/** `blobs` groups of unit rows around random centres (spread `spread`), `per` rows each. */
function blobs(count: number, per: number, dims: number, spread: number, seed = 3) {
	const next = seededRandom(seed);
	const rand = () => next() + 0.5; // (it gives −0.5 … 0.5)
	const gauss = () => Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
	const rows = new Float32Array(count * per * dims);
	for (let b = 0; b < count; b++) {
		const centre = Array.from({ length: dims }, gauss);
		for (let i = 0; i < per; i++) {
			const at = (b * per + i) * dims;
			let norm = 0;
			for (let j = 0; j < dims; j++) {
				rows[at + j] = centre[j] + spread * gauss();
				norm += rows[at + j] ** 2;
			}
			for (let j = 0; j < dims; j++) rows[at + j] /= Math.sqrt(norm);
		}
	}
	return rows;
}

const row = (rows: Float32Array, r: number, dims: number) =>
	rows.subarray(r * dims, (r + 1) * dims);

describe('codebook', () => {
	it("a parent's children are numbered in a chain of neighbours (a probe's cells share buckets)", () => {
		const dims = 16;
		const rows = blobs(64, 40, dims, 0.6, 5);
		const cb = trainCodebook(rows, dims);
		assert.ok(cb.children >= 8, `${cb.children} children`);
		const at = (p: number, c: number) => (cb.parents + p * cb.children + c) * dims;
		const sim = (p: number, a: number, b: number) =>
			dot(cb.centroids, at(p, a), cb.centroids.subarray(at(p, b)), dims);
		let next = 0;
		let any = 0;
		for (let p = 0; p < cb.parents; p++)
			for (let c = 0; c + 1 < cb.children; c++) {
				next += sim(p, c, c + 1);
				for (let o = 0; o < cb.children; o++) if (o !== c) any += sim(p, c, o) / (cb.children - 1);
			}
		// Each child's next is nearer it than the average of its siblings, by a margin.
		assert.ok(next > any + 0.05 * Math.abs(any), `next ${next.toFixed(2)}, any ${any.toFixed(2)}`);
	});

	it('its shape: cells for the sample, fewer for large embeddings, powers of two', () => {
		assert.deepEqual(codebookShape(32_768, 64), { parents: 64, children: 64 });
		assert.deepEqual(codebookShape(800, 64), { parents: 8, children: 8 });
		const big = codebookShape(32_768, 1536);
		assert.ok(big.parents * big.children * 1536 <= 2 ** 22, JSON.stringify(big));
		assert.deepEqual(codebookShape(3, 64), { parents: 1, children: 1 });
	});

	it('probing a few cells finds the exact nearest rows of clustered data; a cell’s high bits are its parent', () => {
		const dims = 32;
		const rows = blobs(40, 100, dims, 0.35);
		const n = rows.length / dims;
		const cb = trainCodebook(rows, dims);
		assert.equal(cellCount(cb), 256);
		const cells = Int32Array.from({ length: n }, (_, r) => cellOf(cb, row(rows, r, dims)));
		for (let r = 0; r < n; r += 97) {
			const parent = Math.floor(cells[r] / cb.children);
			const scores = Array.from({ length: cb.parents }, (_, p) =>
				dot(cb.centroids, p * dims, row(rows, r, dims), dims),
			);
			assert.equal(parent, scores.indexOf(Math.max(...scores)));
		}
		let found = 0;
		let wanted = 0;
		let scanned = 0;
		for (let qi = 0; qi < 40; qi++) {
			const q = row(rows, qi * 101, dims);
			const exact = Array.from({ length: n }, (_, r) => ({ r, s: dot(rows, r * dims, q, dims) }))
				.sort((a, b) => b.s - a.s)
				.slice(0, 10);
			const probed = new Set(probe(cb, q, 16, 4));
			for (let r = 0; r < n; r++) if (probed.has(cells[r])) scanned++;
			found += exact.filter((e) => probed.has(cells[e.r])).length;
			wanted += exact.length;
		}
		assert.ok(found / wanted >= 0.95, `recall@10 ${found / wanted}`);
		assert.ok(scanned / (40 * n) <= 0.1, `rows scanned ${scanned / (40 * n)}`);
	});

	it('is the same for the same rows, and round-trips as stored', () => {
		const dims = 16;
		const rows = blobs(10, 60, dims, 0.5, 9);
		const a = encodeCodebook(trainCodebook(rows, dims));
		assert.ok(a.equals(encodeCodebook(trainCodebook(rows, dims))));
		const back = decodeCodebook('k', a);
		assert.ok(encodeCodebook(back).equals(a));
		assert.deepEqual(
			probe(back, row(rows, 5, dims), 4, 2),
			probe(trainCodebook(rows, dims), row(rows, 5, dims), 4, 2),
		);
	});

	it('a damaged codebook is an error naming its key', () => {
		const dims = 8;
		const good = encodeCodebook(trainCodebook(blobs(4, 40, dims, 0.5), dims));
		const bad = (mutate: (b: Buffer) => Buffer) => () =>
			decodeCodebook('kb/index/segments/cells-x.vcb', mutate(Buffer.from(good)));
		const named = (e: unknown) =>
			e instanceof CorruptDocumentError && /cells-x\.vcb/.test((e as Error).message);
		assert.throws(
			bad((b) => b.subarray(0, b.length - 4)),
			named,
		);
		assert.throws(
			bad((b) => (b.write('XXXX', 0), b)),
			named,
		);
		assert.throws(
			bad((b) => (b.writeUInt32LE(3, 12), b)),
			named,
		);
		assert.throws(
			bad((b) => (b.writeFloatLE(Number.NaN, 40), b)),
			named,
		);
	});
});
