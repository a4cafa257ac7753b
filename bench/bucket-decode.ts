/**
 * One cell bucket read and scored (not a test): prints a markdown table of the time per bucket to
 * decode it and offer its rows to the 50 best, as a search of every conversation does for each bucket
 * it reads, in the stored form written now (the texts its table numbers after the table, its cells as
 * tags) and in the form before (those texts and cells in its JSON header), the same rows and chunks.
 * Buckets of BUCKET_DECODE_ROWS rows (2048,4900: the bench's largest tier at 100,000 users holds about
 * 4,900 per cell) of 64 and 384 dimensions, each row a message of its own conversation and capture time;
 * 8 buckets per round, rounds alternating the forms, the median of BUCKET_DECODE_ROUNDS (10).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';

import type { IndexedChunk } from '../src/internal';
import { BestChunks } from '../src/indexes/vector/best-chunks';
import { decodeCellBucket, encodeCellBucket } from '../src/indexes/vector/cell-tiers';
import type { CellTier } from '../src/indexes/vector/cell-tiers';
import { normaliseRows, rowMask } from '../src/indexes/vector/vector-segment';
import { closeVectors, openVectors } from '../test/support/stored-segments';
import { loadLine, machineLine, median } from './stats';

const SIZES = (process.env.BUCKET_DECODE_ROWS ?? '2048,4900').split(',').map(Number);
const ROUNDS = Number(process.env.BUCKET_DECODE_ROUNDS ?? 10);
const BUCKETS = 8;
const CELLS = 2048;

const chunksOf = (n: number): IndexedChunk[] =>
	Array.from({ length: n }, (_, i) => ({
		id: randomUUID(),
		session_id: `chat-user-${Math.floor(Math.random() * 100_000)}`,
		message_id: randomUUID(),
		seq: i % 100,
		run_id: 'bench',
		chunk_index: 0,
		created_at: new Date(1.7e12 + Math.floor(Math.random() * 1e9) * 1000).toISOString(),
		text: `message ${i} about the pricing plan and what the team said of it`,
	}));

const rowsOf = (n: number, dims: number) =>
	normaliseRows(
		Array.from({ length: n }, () => Array.from({ length: dims }, () => Math.random() - 0.5)),
		n,
		dims,
	);

/** A bucket in the form before: its texts and cells in the header (LLMVEC02), the rest as it is. */
function asBefore(body: Buffer): Buffer {
	const s = openVectors(body);
	const header = { ...s.header, tags: undefined, cells: s.tags };
	return closeVectors({ ...s, tags: undefined, header }, { form: 'LLMVEC02' });
}

/** Milliseconds per bucket to decode and offer every bucket of `bodies` to one search's 50 best. */
function perBucket(bodies: Buffer[], tier: CellTier, q: Float32Array, reps: number): number {
	const t = performance.now();
	for (let i = 0; i < reps; i++) {
		const best = new BestChunks(50);
		for (const body of bodies) {
			const { segment } = decodeCellBucket('bucket', body, tier, 0, CELLS);
			best.offerRows(segment, rowMask(segment, {}), q);
		}
		best.sorted();
	}
	return (performance.now() - t) / (reps * bodies.length);
}

console.log(`\n${machineLine(loadLine())}\n`);
console.log('| rows × dimensions | stored, now | before: ms per bucket | now | now / before |');
console.log('|---|---:|---:|---:|---:|');
for (const rows of SIZES)
	for (const dims of [64, 384]) {
		const tier: CellTier = { id: 't', codebook: 'c', segments: 1, rows, buckets: CELLS, bytes: 0 };
		const now = Array.from({ length: BUCKETS }, () =>
			encodeCellBucket(dims, chunksOf(rows), rowsOf(rows, dims), new Uint16Array(rows)),
		);
		const before = now.map(asBefore);
		const q = rowsOf(1, dims);
		perBucket(now, tier, q, 3);
		perBucket(before, tier, q, 3);
		const a: number[] = [];
		const b: number[] = [];
		for (let r = 0; r < ROUNDS; r++) {
			a.push(perBucket(before, tier, q, 4));
			b.push(perBucket(now, tier, q, 4));
		}
		const mb = (now[0].length / 2 ** 20).toFixed(2);
		console.log(
			`| ${rows} × ${dims} | ${mb} MiB | ${median(a).toFixed(2)} | ${median(b).toFixed(2)} | ${(median(b) / median(a)).toFixed(2)} |`,
		);
	}
