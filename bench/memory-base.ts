/**
 * Memory Base benchmark (not a test): prints markdown tables.
 * 1. Search latency of the embedded index at 1,000, 10,000 and 100,000 vectors of 1,536 dimensions
 *    (exact cosine, top 5): the first search of a process (segments read from local disk and decoded)
 *    and warm searches (segments in memory; one conditional read of the manifest each), unfiltered and
 *    filtered to one of 10 conversations, and what the decoded segments hold in memory (Float32 rows,
 *    int8 rows, chunks). The query vector is given: embedding time is not counted.
 *    100,000 vectors need LLM_MEMORY_VECTOR_CACHE_MB=1536 (scripts/bench.sh sets it).
 * 2. Ingestion throughput (Sync Now of 2,000 captured messages into the embedded index) on local disk
 *    and on radosgw, with an instant embedder (pre-computed vectors): embedding time excluded.
 * (Capture cost: bench/capture.ts.)
 * MB_BENCH_SIZES=1000,10000 limits the index sizes; needs RGW_ENDPOINT or starts its own radosgw.
 */
import { performance } from 'node:perf_hooks';

import {
	cacheStats,
	clearVectorCache,
	EmbeddedIndex,
	LocalDiskStorage,
	MemoryBase,
	SEGMENT_MAX_VECTORS,
	vectorIndexPrefix,
} from '../src/internal';
import type { Embedder, IndexedChunk, MemoryStorage } from '../src/internal';
import { randomRows, seededRandom } from '../test/support/embeddings';
import { ensureRgw, rgwStorage } from '../test/support/rgw';
import { tempDir } from '../test/support/storages';
import { loadLine, machineLine, median, percentile } from './stats';

const DIMS = 1536;
const SIZES = (process.env.MB_BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const QUERIES = Number(process.env.MB_BENCH_QUERIES ?? 60);
const f = (x: number, d = 2) => x.toFixed(d);

const rows = (n: number, rand: () => number) => randomRows(n, DIMS, rand);

function chunks(from: number, n: number): IndexedChunk[] {
	return Array.from({ length: n }, (_, k) => {
		const i = from + k;
		return {
			id: `c${i}`,
			session_id: `s${i % 10}`,
			message_id: `m${i}`,
			seq: Math.floor(i / 10) + 1,
			run_id: `r${i}`,
			chunk_index: 0,
			created_at: new Date(0).toISOString(),
			text: `captured output number ${i}`,
		};
	});
}

async function searchTable(): Promise<string[]> {
	const lines = [
		'| vectors (1,536 dims) | index on disk | in memory | build | first search (load) | warm search p50 | warm p95 | one conversation of 10, p50 |',
		'|---:|---:|---:|---:|---:|---:|---:|---:|',
	];
	for (const size of SIZES) {
		const storage = new LocalDiskStorage({ root: tempDir('mb-bench-index') });
		const index = new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb'));
		const rand = seededRandom(size);
		const t0 = performance.now();
		for (let from = 0; from < size; from += SEGMENT_MAX_VECTORS) {
			const n = Math.min(SEGMENT_MAX_VECTORS, size - from);
			await index.add(chunks(from, n), rows(n, rand));
		}
		const build = performance.now() - t0;
		const bytes = (await storage.list('knowledge_base/kb/index/')).reduce((n, o) => n + o.size, 0);
		const queries = rows(QUERIES, seededRandom(size + 1));
		clearVectorCache();
		const c0 = performance.now();
		await index.search(queries[0], 5);
		const first = performance.now() - c0;
		const warm: number[] = [];
		const filtered: number[] = [];
		for (const q of queries) {
			const w0 = performance.now();
			await index.search(q, 5);
			warm.push(performance.now() - w0);
			const s0 = performance.now();
			await index.search(q, 5, 's3');
			filtered.push(performance.now() - s0);
		}
		const held = cacheStats().find((c) => c.name === 'vector segments')?.weight ?? 0;
		if (held < bytes)
			console.error('  the segment cache is too small: set LLM_MEMORY_VECTOR_CACHE_MB');
		lines.push(
			`| ${size.toLocaleString('en')} | ${f(bytes / 2 ** 20, 0)} MiB | ${f(held / 2 ** 20, 0)} MiB | ${f(build / 1000, 1)} s | ${f(first, 0)} ms | ${f(median(warm))} ms | ${f(percentile(warm, 0.95))} ms | ${f(median(filtered))} ms |`,
		);
		console.error(`  search at ${size}: p50 ${f(median(warm))} ms`);
		clearVectorCache();
	}
	return lines;
}

/** Vectors handed out instantly (a pool computed beforehand), and the time spent handing them out. */
class InstantEmbedder implements Embedder {
	spentMs = 0;
	private readonly pool = rows(256, seededRandom(7));
	async embedDocuments(texts: string[]): Promise<number[][]> {
		const t0 = performance.now();
		const out = texts.map((_, i) => this.pool[i % this.pool.length]);
		this.spentMs += performance.now() - t0;
		return out;
	}
	async embedQuery(): Promise<number[]> {
		return this.pool[0];
	}
}

async function backends(): Promise<Array<{ name: string; make: () => Promise<MemoryStorage> }>> {
	await ensureRgw();
	return [
		{ name: 'local disk', make: async () => new LocalDiskStorage({ root: tempDir('mb-bench') }) },
		{ name: 'radosgw', make: async () => rgwStorage() },
	];
}

async function ingestionTable(): Promise<string[]> {
	const MESSAGES = Number(process.env.MB_BENCH_INGEST ?? 2000);
	const lines = [
		`| storage | messages | sync (embedding excluded) | messages/s | segments written |`,
		'|---|---:|---:|---:|---:|',
	];
	for (const b of await backends()) {
		const storage = await b.make();
		const embedder = new InstantEmbedder();
		const base = new MemoryBase({
			storage,
			baseId: 'bench',
			embedder,
			autoCapture: false,
			embeddingBatchSize: 256,
		});
		for (let i = 0; i < MESSAGES; i++)
			await base.capture({
				sessionId: 's',
				runId: `r${i}`,
				texts: [`output number ${i} of the bench`],
			});
		const t0 = performance.now();
		const result = await base.sync({ sessionId: 's' });
		const ms = performance.now() - t0 - embedder.spentMs;
		const status = await base.status();
		lines.push(
			`| ${b.name} | ${result.messages.toLocaleString('en')} | ${f(ms / 1000, 2)} s | ${f(result.messages / (ms / 1000), 0)} | ${status.index?.segments} |`,
		);
		console.error(`  ingestion on ${b.name}: ${f(result.messages / (ms / 1000), 0)} messages/s`);
	}
	return lines;
}

(async () => {
	console.error('Memory Base benchmark…');
	const search = await searchTable();
	const ingest = await ingestionTable();
	console.log('\n### Memory Base: search latency (embedded index, exact cosine, top 5)\n');
	console.log(search.join('\n'));
	console.log('\n### Memory Base: ingestion throughput (Sync Now, embedding excluded)\n');
	console.log(ingest.join('\n'));
	console.log(`\n${machineLine(loadLine())}`);
	(await ensureRgw()).stop();
})().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
