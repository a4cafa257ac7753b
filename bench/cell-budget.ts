/**
 * How many cell buckets a search of every conversation reads, and what it finds (not a test): prints a
 * markdown table. On a base `bench/scale.ts` kept (SCALE_BENCH_KEEP=1 prints its folder), given as
 * CELL_BUDGET_ROOT `users=folder` (local disk), the base-wide vector index's cell tiers are searched for
 * CELL_BUDGET_QUERIES (30) queries of random users, reading at most 4 … 48 buckets or every bucket
 * holding a probed cell, and recall@50 is the share of each answer's 50 rows at least as near as the
 * 50th nearest of every row of those tiers by exact cosine (rows of one text tie; median, mean,
 * lowest). Twice: the tiers as the build left them, then the
 * same rows as one tier of one cell per bucket (the layout of a base of millions of messages, where a
 * bucket holds about 2,048 rows; written to a folder of its own and removed after).
 */
import { rm } from 'node:fs/promises';

import { LocalDiskStorage } from '../src/internal';
import type { Segment } from '../src/indexes/vector/vector-segment';
import { tiersOf } from '../src/indexes/chunks/tiering';
import { buildCellTier } from '../src/indexes/vector/cell-tiers';
import type { CellFiles, CellTier } from '../src/indexes/vector/cell-tiers';
import {
	bestInCells,
	bucketsToRead,
	PROBE_BUCKETS,
	PROBE_CELLS,
	PROBE_PARENTS,
} from '../src/indexes/vector/cell-search';
import { cellTiers, readCodebook } from '../src/indexes/vector/cell-upkeep';
import { cellCount, probe } from '../src/indexes/vector/codebook';
import type { Codebook } from '../src/indexes/vector/codebook';
import { dot, normaliseRows } from '../src/indexes/vector/vector-segment';
import type { EmbeddedIndex } from '../src/indexes/vector/vector-index';
import { BaseIndexes } from '../src/knowledge/base-indexes';
import { BaseParts } from '../src/knowledge/parts';
import { fakeEmbedding } from '../demo/model-server';
import { tempDir } from '../test/support/storages';
import { BASE_ID, f, HashEmbedder, n, queryOf } from './scale';
import { lcg, loadLine, machineLine, median } from './stats';

const QUERIES = Number(process.env.CELL_BUDGET_QUERIES ?? 30);
const BUDGETS = [4, 8, 16, 24, 32, 48, Infinity];
const K = 50;

/** Every row of the tiers' segments (unit length), one after another. */
async function tieredRows(
	index: EmbeddedIndex,
	refs: Parameters<EmbeddedIndex['readSegment']>[0][],
) {
	const parts: Segment[] = [];
	for (const ref of refs) {
		const seg = await index.readSegment(ref, { quantize: false });
		if (!seg) throw new Error(`segment ${ref.key} is not held`);
		parts.push(seg);
	}
	const dims = parts[0]?.dimensions ?? 0;
	const count = parts.reduce((sum, seg) => sum + seg.chunks.length, 0);
	const rows = new Float32Array(count * dims);
	let at = 0;
	for (const seg of parts) {
		rows.set(seg.vectors.subarray(0, seg.chunks.length * dims), at);
		at += seg.chunks.length * dims;
	}
	return { count, rows, dims };
}

/** The k-th best exact cosine with q of every row (rows of the same text tie: recall counts scores). */
function exactKth(all: { count: number; rows: Float32Array; dims: number }, q: Float32Array) {
	const scores = Float64Array.from({ length: all.count }, (_, r) =>
		dot(all.rows, r * all.dims, q, all.dims),
	);
	return scores.sort().at(-Math.min(K, all.count))!;
}

interface Row {
	layout: string;
	budget: number;
	reads: number[];
	recall: number[];
}

async function measure(
	layout: string,
	files: CellFiles,
	cb: Codebook,
	tiers: CellTier[],
	queries: Float32Array[],
	kth: number[],
): Promise<Row[]> {
	const out: Row[] = BUDGETS.map((budget) => ({ layout, budget, reads: [], recall: [] }));
	for (const [i, q] of queries.entries()) {
		const cells = probe(cb, q, PROBE_CELLS, PROBE_PARENTS);
		for (const row of out) {
			const got = await bestInCells(files, cb, tiers, q, K, {}, { buckets: row.budget });
			row.recall.push(got.filter((g) => g.score >= kth[i] - 1e-6).length / K);
			row.reads.push(bucketsToRead(cb, tiers, cells, row.budget).length);
		}
	}
	return out;
}

/** The tiers' rows as one tier of one cell per bucket, written to a folder of its own. */
async function oneCellPerBucket(
	wide: EmbeddedIndex,
	cb: Codebook,
	refs: Parameters<typeof buildCellTier>[2],
	rows: number,
) {
	const root = tempDir('cell-budget');
	const storage = new LocalDiskStorage({ root });
	const files: CellFiles = {
		storage,
		segmentsPrefix: wide.segmentsPrefix,
		kbId: wide.kbId,
		readSegment: (ref, options) => wide.readSegment(ref, options),
		readCellBucket: async (key, decode) => {
			const got = await storage.get(key);
			return got ? decode(got.body) : null;
		},
	};
	const tier = await buildCellTier(files, cb, refs, Math.ceil(rows / cellCount(cb)));
	return { files, tier, done: () => rm(root, { recursive: true, force: true }) };
}

async function main(): Promise<void> {
	const [users, root] = (process.env.CELL_BUDGET_ROOT ?? '').split('=');
	if (!root) throw new Error('CELL_BUDGET_ROOT: users=folder (a base bench/scale.ts kept)');
	const p = new BaseParts({
		storage: new LocalDiskStorage({ root }),
		baseId: BASE_ID,
		embedder: new HashEmbedder(),
	});
	const wide = (await BaseIndexes.open(p)).wideVectors();
	const doc = (await wide.readManifest(true)).doc;
	const { usable } = tiersOf(cellTiers, doc);
	if (usable.length === 0 || !doc.cells?.codebook) throw new Error('the base has no cell tiers');
	const cb = await readCodebook(wide, doc.cells.codebook);
	const refs = usable.flatMap((u) => u.refs);
	const all = await tieredRows(wide, refs);
	const rand = lcg(777);
	const queries = Array.from({ length: QUERIES }, () =>
		normaliseRows(
			[fakeEmbedding(queryOf(Math.floor(rand() * Number(users)), rand).text, all.dims)],
			1,
		),
	);
	const kth = queries.map((q) => exactKth(all, q));
	const built = usable.map((u) => u.tier);
	const rows = await measure(
		`as built (${built.map((t) => `${n(t.rows)} rows in ${n(t.buckets)} buckets`).join(', ')})`,
		wide,
		cb,
		built,
		queries,
		kth,
	);
	const one = await oneCellPerBucket(wide, cb, refs, all.count);
	try {
		rows.push(
			...(await measure(
				`one cell per bucket (${n(one.tier.buckets)} buckets)`,
				one.files,
				cb,
				[one.tier],
				queries,
				kth,
			)),
		);
	} finally {
		await one.done();
	}
	console.log(`\n${machineLine(loadLine())}\n`);
	console.log(
		`${n(Number(users))} users: ${n(all.count)} rows in cell tiers, ${all.dims} dimensions, codebook of ${n(cellCount(cb))} cells; ${QUERIES} queries, ${PROBE_CELLS} cells probed; the default reads at most ${PROBE_BUCKETS} buckets.\n`,
	);
	console.log(
		'| layout | buckets read at most | buckets read (mean, most) | recall@50 (median, mean, lowest) |',
	);
	console.log('|---|---:|---:|---:|');
	const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
	for (const r of rows)
		console.log(
			`| ${r.layout} | ${r.budget === Infinity ? 'every bucket of a probed cell' : r.budget} | ${f(mean(r.reads), 1)}, ${Math.max(...r.reads)} | ${f(median(r.recall))}, ${f(mean(r.recall), 3)}, ${f(Math.min(...r.recall))} |`,
		);
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
