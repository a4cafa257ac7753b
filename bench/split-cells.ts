/**
 * Cells of large vectors split among buckets (not a test): prints a markdown table. A search of cell
 * tiers reads each probed cell's buckets; on a large base a cell holds thousands of rows (about 4,900 in
 * the largest tier of bench/scale.ts at 100,000 users), so a bucket of one cell of 1,536-dimension rows
 * is about 30 MB. The same rows, as one tier of whole cells and as one split to BUCKET_BYTES a bucket:
 * per search, the time, the requests, the largest bucket, and the most bytes of buckets alive at once (each
 * body watched weakly, in a search of its own with a full garbage collection before each read; no
 * cache), and whether the answers match.
 * SPLIT_BENCH_ROWS (20000) rows of SPLIT_BENCH_DIMS (1536) dimensions around 8 topics, placed by a
 * codebook of 8 cells (trained on 64 rows, so each cell holds thousands), SPLIT_BENCH_QUERIES (10)
 * queries each probing its 2 nearest cells, local disk.
 */
import { performance } from 'node:perf_hooks';

import {
	clearAllCaches,
	EmbeddedIndex,
	LocalDiskStorage,
	vectorIndexPrefix,
} from '../src/internal';
import type { GetOptions, IndexedChunk, NotModified, StoredObject } from '../src/internal';
import { BUCKET_BYTES, buildCellTier } from '../src/indexes/vector/cell-tiers';
import type { CellTier } from '../src/indexes/vector/cell-tiers';
import { bestInCells } from '../src/indexes/vector/cell-search';
import { trainCodebook } from '../src/indexes/vector/codebook';
import type { Codebook } from '../src/indexes/vector/codebook';
import { seededRandom } from '../test/support/embeddings';
import { tempDir } from '../test/support/storages';
import { collect } from '../test/support/held';
import { vectorChunk } from '../test/support/vector-segments';
import { MeteredStorage } from '../test/support/wide-base';
import { loadLine, machineLine, median } from './stats';

const ROWS = Number(process.env.SPLIT_BENCH_ROWS ?? 20_000);
const DIMS = Number(process.env.SPLIT_BENCH_DIMS ?? 1536);
const QUERIES = Number(process.env.SPLIT_BENCH_QUERIES ?? 10);
const PER_SEGMENT = 1000;

const chunkOf = (i: number): IndexedChunk =>
	vectorChunk(i, `s${i % 997}`, {
		run_id: 'bench',
		created_at: new Date(1.7e12 + i * 1000).toISOString(),
		text: `message ${i} about the pricing plan and what the team said of it`,
	});

/** Unit rows around 8 random centres, in place (no number[][] of 30 million floats). */
function rowsOf(count: number, next: () => number): Float32Array {
	const centres = Array.from({ length: 8 }, () =>
		Float32Array.from({ length: DIMS }, () => next() - 0.5),
	);
	const out = new Float32Array(count * DIMS);
	for (let i = 0; i < count; i++) {
		const row = out.subarray(i * DIMS, (i + 1) * DIMS);
		const c = centres[i % 8];
		let norm = 0;
		for (let d = 0; d < DIMS; d++) norm += (row[d] = c[d] + 0.6 * (next() - 0.5)) ** 2;
		for (let d = 0; d < DIMS; d++) row[d] /= Math.sqrt(norm);
	}
	return out;
}

/**
 * Counts requests, and at each read of a bucket notes the bytes of the buckets read before and still
 * alive (after a full collection) plus its own: the most bucket bytes a search held at once.
 */
class HeldBytes extends MeteredStorage {
	private readonly bodies: Array<{ bytes: number; ref: WeakRef<ArrayBuffer> }> = [];
	most = 0;

	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	async get(key: string, options: GetOptions = {}): Promise<StoredObject | NotModified | null> {
		if (!key.endsWith('.vcl')) return super.get(key, options);
		await collect();
		const got = await super.get(key, options);
		if (!got || !('body' in got)) return got;
		const own = new Uint8Array(new ArrayBuffer(got.body.byteLength));
		own.set(got.body);
		const alive = this.bodies.filter((b) => b.ref.deref() !== undefined);
		this.most = Math.max(this.most, own.byteLength + alive.reduce((n, b) => n + b.bytes, 0));
		this.bodies.push({ bytes: own.byteLength, ref: new WeakRef(own.buffer) });
		return { ...got, body: own };
	}
}

/** Time and requests of each search (plain reads), then what it held (every body watched). */
async function measure(root: string, cb: Codebook, tier: CellTier, queries: Float32Array[]) {
	const ms: number[] = [];
	const reqs: number[] = [];
	const held: number[] = [];
	const answers: string[] = [];
	const search = (storage: MeteredStorage, q: Float32Array) => {
		clearAllCaches();
		const index = new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb'), 12, { cacheBytes: 0 });
		return bestInCells(index, cb, [tier], q, 50, {}, { cells: 2, parents: 1 });
	};
	for (const q of queries) {
		const storage = new MeteredStorage(new LocalDiskStorage({ root }));
		const t = performance.now();
		const out = await search(storage, q);
		ms.push(performance.now() - t);
		reqs.push(storage.counts.get);
		answers.push(out.map((m) => `${m.chunk.id}:${m.score.toFixed(6)}`).join(','));
		const watched = new HeldBytes(new LocalDiskStorage({ root }));
		await search(watched, q);
		held.push(watched.most);
	}
	return { ms: median(ms), requests: median(reqs), held: Math.max(...held), answers };
}

/** How a tier split its ranges: "8 a range" alike, or each range's split. */
const splitsOf = (tier: CellTier) =>
	tier.parts
		? `ranges split in ${tier.parts.map(([, s]) => s).join(', ')} of ${tier.ranges}`
		: `${tier.split ?? 1} a range`;

async function main() {
	const root = tempDir('split-cells-bench');
	const writer = new EmbeddedIndex(new LocalDiskStorage({ root }), 'kb', vectorIndexPrefix('kb'));
	const next = seededRandom(17);
	const refs = [];
	for (let from = 0; from < ROWS; from += PER_SEGMENT) {
		const n = Math.min(PER_SEGMENT, ROWS - from);
		const chunks = Array.from({ length: n }, (_, i) => chunkOf(from + i));
		refs.push((await writer.writeSegment(DIMS, chunks, rowsOf(n, next))).ref);
	}
	const cb = trainCodebook(rowsOf(64, next), DIMS);
	const whole = await buildCellTier(
		new EmbeddedIndex(writer.storage, 'kb', vectorIndexPrefix('kb'), 12, { bucketBytes: Infinity }),
		cb,
		refs,
	);
	const split = await buildCellTier(writer, cb, refs);
	const queries = Array.from({ length: QUERIES }, () => rowsOf(1, next));
	const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
	console.log(`\n${machineLine(loadLine())}\n`);
	console.log(
		`${ROWS} rows of ${DIMS} dimensions, largest cell ${whole.largest} rows; a search of its 2 nearest cells, no cache, ${QUERIES} queries (medians; held: the most of any search)\n`,
	);
	console.log(
		'| layout | buckets | largest bucket | search p50 | requests | bucket bytes held at once, most |',
	);
	console.log('|---|---:|---:|---:|---:|---:|');
	const rows: Array<[string, CellTier]> = [
		['whole cells', whole],
		[`split to ${mib(BUCKET_BYTES)} (${splitsOf(split)})`, split],
	];
	const got: Array<Awaited<ReturnType<typeof measure>>> = [];
	for (const [name, tier] of rows) {
		const m = await measure(root, cb, tier, queries);
		got.push(m);
		const largest = await largestBucket(writer, tier);
		console.log(
			`| ${name} | ${tier.buckets} | ${mib(largest)} | ${m.ms.toFixed(1)} ms | ${m.requests} | ${mib(m.held)} |`,
		);
	}
	const same = got[0].answers.every((a, i) => a === got[1].answers[i]);
	console.log(`\nThe same 50 best for every query: ${same ? 'yes' : 'NO'}`);
	if (!same) process.exitCode = 1;
}

/** Bytes of the tier's largest stored bucket. */
async function largestBucket(index: EmbeddedIndex, tier: CellTier): Promise<number> {
	const objects = await index.storage.list(`${index.segmentsPrefix}cells-${tier.id}`);
	return Math.max(...objects.map((o) => o.size));
}

void main();
