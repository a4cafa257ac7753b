// A codebook of cells for an approximate vector index: two levels of spherical k-means (parents, then
// children among each parent's rows), trained once on a sample of rows and stored write-once. A row's
// cell is its nearest parent's nearest child; a query probes the cells nearest it among the children of
// its nearest parents. A cell's number is parent · children + child, so its high bits name its parent:
// buckets of cells split and merge in order, as term buckets do by a word's hash.
import { CorruptDocumentError } from '../../errors';
import { isPowerOfTwo } from '../../common/power-of-two';
import { seeded } from '../../common/seeded';
import { dot } from './vector-segment';

export interface Codebook {
	dimensions: number;
	/** Parents, and children per parent: powers of two. */
	parents: number;
	children: number;
	/** Unit rows: the parents' centroids, then each parent's children's (parent after parent). */
	centroids: Float32Array;
}

export const cellCount = (cb: Codebook) => cb.parents * cb.children;

/** At most this many cells, and no more floats of centroids than this (large embeddings get fewer cells). */
export const MAX_CELLS = 4096;
const MAX_FLOATS = 2 ** 22;
/** Rows a cell of the sample should get at least, for its centroid to mean something. */
const ROWS_PER_CELL = 8;
const ITERATIONS = 8;

const floorPow2 = (x: number) => 2 ** Math.max(0, Math.floor(Math.log2(Math.max(1, x))));

/** Parents and children for a sample of `rows` rows of `dims` dimensions. */
export function codebookShape(rows: number, dims: number): { parents: number; children: number } {
	const cells = floorPow2(Math.min(MAX_CELLS, MAX_FLOATS / dims, rows / ROWS_PER_CELL));
	const parents = floorPow2(Math.sqrt(cells));
	return { parents, children: cells / parents };
}

/** The centroid nearest a unit row among `count` centroids from `from` (ties: the first). */
function nearest(
	centroids: Float32Array,
	from: number,
	count: number,
	row: Float32Array,
	dims: number,
): { at: number; score: number } {
	let at = 0;
	let score = -Infinity;
	for (let c = 0; c < count; c++) {
		const s = dot(centroids, (from + c) * dims, row, dims);
		if (s > score) [at, score] = [c, s];
	}
	return { at, score };
}

/** `k` of `xs`, picked by a seeded partial Fisher–Yates shuffle (the same for the same seed). */
function pick(xs: readonly number[], k: number, seed: number): number[] {
	const rand = seeded(seed);
	const out = [...xs];
	for (let i = 0; i < Math.min(k, out.length); i++) {
		const j = i + Math.floor(rand() * (out.length - i));
		[out[i], out[j]] = [out[j], out[i]];
	}
	return out.slice(0, k);
}

/**
 * `k` unit centroids of the rows `members` (row numbers into `rows`) by spherical k-means, seeded; a
 * centroid left without rows takes the row farthest from its own. Fewer members than k: each member
 * is a centroid, the last repeated.
 */
function kmeans(rows: Float32Array, dims: number, members: number[], k: number, seed: number) {
	const out = new Float32Array(k * dims);
	const put = (c: number, r: number) => out.set(rows.subarray(r * dims, (r + 1) * dims), c * dims);
	if (members.length === 0) return out;
	const picked = pick(members, k, seed);
	for (let c = 0; c < k; c++) put(c, picked[Math.min(c, picked.length - 1)]);
	if (members.length <= k) return out;
	const sums = new Float64Array(k * dims);
	const counts = new Int32Array(k);
	for (let it = 0; it < ITERATIONS; it++) {
		sums.fill(0);
		counts.fill(0);
		let worst = { row: members[0], score: Infinity };
		for (const r of members) {
			const row = rows.subarray(r * dims, (r + 1) * dims);
			const { at, score } = nearest(out, 0, k, row, dims);
			counts[at]++;
			for (let j = 0; j < dims; j++) sums[at * dims + j] += rows[r * dims + j];
			if (score < worst.score) worst = { row: r, score };
		}
		for (let c = 0; c < k; c++) {
			if (counts[c] === 0) {
				put(c, worst.row);
				continue;
			}
			let norm = 0;
			for (let j = 0; j < dims; j++) norm += sums[c * dims + j] ** 2;
			const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
			for (let j = 0; j < dims; j++) out[c * dims + j] = sums[c * dims + j] * scale;
		}
	}
	return out;
}

/**
 * The centroids reordered so that neighbours in the order are near each other: a greedy chain from the
 * centroid least like the rest, each next the nearest left. Buckets hold runs of cells, and a query's
 * nearest children of one parent then fall in fewer buckets (about a quarter fewer on text embeddings).
 */
function chained(centroids: Float32Array, dims: number): Float32Array {
	const k = centroids.length / dims;
	const sim = (a: number, b: number) =>
		dot(centroids, a * dims, centroids.subarray(b * dims), dims);
	const left = new Set(Array.from({ length: k }, (_, c) => c));
	let at = 0;
	let lowest = Infinity;
	for (const c of left) {
		let total = 0;
		for (const o of left) total += sim(c, o);
		if (total < lowest) [at, lowest] = [c, total];
	}
	const out = new Float32Array(centroids.length);
	for (let i = 0; i < k; i++) {
		out.set(centroids.subarray(at * dims, (at + 1) * dims), i * dims);
		left.delete(at);
		const from = at;
		let best = -Infinity;
		for (const o of left) if (sim(from, o) > best) [best, at] = [sim(from, o), o];
	}
	return out;
}

/** A codebook trained on `rows` (unit rows, count × dims), the same for the same rows and seed. */
export function trainCodebook(rows: Float32Array, dims: number, seed = 1): Codebook {
	const count = rows.length / dims;
	const { parents, children } = codebookShape(count, dims);
	const all = Array.from({ length: count }, (_, r) => r);
	const top = kmeans(rows, dims, all, parents, seed);
	const groups: number[][] = Array.from({ length: parents }, () => []);
	for (const r of all)
		groups[nearest(top, 0, parents, rows.subarray(r * dims, (r + 1) * dims), dims).at].push(r);
	const centroids = new Float32Array((parents + parents * children) * dims);
	centroids.set(top);
	groups.forEach((members, p) => {
		// A parent without rows keeps its own centroid for each child.
		const own =
			members.length > 0
				? chained(kmeans(rows, dims, members, children, seed + p + 1), dims)
				: undefined;
		for (let c = 0; c < children; c++)
			centroids.set(
				own ? own.subarray(c * dims, (c + 1) * dims) : top.subarray(p * dims, (p + 1) * dims),
				(parents + p * children + c) * dims,
			);
	});
	return { dimensions: dims, parents, children, centroids };
}

/** The cell of a unit row. */
export function cellOf(cb: Codebook, row: Float32Array): number {
	const d = cb.dimensions;
	const parent = nearest(cb.centroids, 0, cb.parents, row, d).at;
	const from = cb.parents + parent * cb.children;
	return parent * cb.children + nearest(cb.centroids, from, cb.children, row, d).at;
}

/** The `cells` cells nearest a unit query among the children of its `parents` nearest parents, best first. */
export function probe(cb: Codebook, q: Float32Array, cells: number, parents: number): number[] {
	const d = cb.dimensions;
	const score = (c: number) => dot(cb.centroids, c * d, q, d);
	const byScore = (xs: number[], at: (x: number) => number) =>
		xs
			.map((x) => ({ x, s: at(x) }))
			.sort((a, b) => b.s - a.s || a.x - b.x)
			.map((e) => e.x);
	const near = byScore(
		Array.from({ length: cb.parents }, (_, p) => p),
		score,
	).slice(0, Math.max(1, parents));
	const candidates = near.flatMap((p) =>
		Array.from({ length: cb.children }, (_, c) => p * cb.children + c),
	);
	return byScore(candidates, (cell) => score(cb.parents + cell)).slice(0, Math.max(1, cells));
}

const MAGIC = Buffer.from('LLMCELL1', 'latin1');

/** Magic, dimensions, parents, children (u32 LE each), then the centroids (f32 LE). */
export function encodeCodebook(cb: Codebook): Buffer {
	const out = Buffer.alloc(MAGIC.length + 12 + cb.centroids.length * 4);
	MAGIC.copy(out, 0);
	out.writeUInt32LE(cb.dimensions, 8);
	out.writeUInt32LE(cb.parents, 12);
	out.writeUInt32LE(cb.children, 16);
	cb.centroids.forEach((x, i) => out.writeFloatLE(x, 20 + 4 * i));
	return out;
}

/** A stored codebook, checked; anything else is a CorruptDocumentError naming its key. */
export function decodeCodebook(key: string, bytes: Uint8Array): Codebook {
	const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	const fail = (detail: string): never => {
		throw new CorruptDocumentError(key, detail);
	};
	if (buf.length < 20 || !buf.subarray(0, 8).equals(MAGIC)) fail('not a codebook');
	const [dimensions, parents, children] = [8, 12, 16].map((at) => buf.readUInt32LE(at));
	if (
		dimensions < 1 ||
		!isPowerOfTwo(parents) ||
		!isPowerOfTwo(children) ||
		parents * children > MAX_CELLS
	)
		fail('bad shape');
	const floats = (parents + parents * children) * dimensions;
	if (buf.length !== 20 + floats * 4)
		fail(`${buf.length - 20} bytes of centroids, expected ${floats * 4}`);
	const centroids = new Float32Array(floats);
	for (let i = 0; i < floats; i++) {
		centroids[i] = buf.readFloatLE(20 + 4 * i);
		if (!Number.isFinite(centroids[i])) fail(`centroid value ${i} is not a finite number`);
	}
	return { dimensions, parents, children, centroids };
}
