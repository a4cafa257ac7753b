// The recall benchmark's latency tables (see recall.ts): hybrid, lexical and vector search at 1,000,
// 10,000 and 100,000 chunks on local disk, warm (indexes loaded), in one user's scope and across all
// users. The base is built the way a busy deployment fills it, only in larger strides: one capture per
// conversation (every message of it at once), then one sync(). Texts are the generated chat of
// recall-data.ts (10 users, 20 conversations each), reused in turn past its length, so the vocabulary
// is realistic; vectors are hashed word features of 1,536 dimensions (fakeEmbedding), since latency
// does not depend on what vectors mean. Queries are the generated questions; their vectors are
// computed beforehand, so embedding time is not counted.
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

import { fakeEmbedding } from '../demo/model-server';
import { clearLexicalCache, clearVectorCache, LocalDiskStorage, MemoryBase } from '../src/internal';
import type { Embedder, SearchMode, SearchOptions } from '../src/internal';
import { tempDir } from '../test/support/storages';
import { generate } from './recall-data';
import type { Turn } from './recall-data';
import { median, percentile } from './stats';

const DIMS = 1536;
const USERS = 10;
const SESSIONS_PER_USER = 20;
const K = 10;
const SIZES = (process.env.RECALL_BENCH_SIZES ?? '1000,10000,100000')
	.split(',')
	.filter((s) => s.trim() !== '')
	.map(Number);
const QUERIES = Number(process.env.RECALL_BENCH_QUERIES ?? 100);
const f = (x: number, d = 2) => x.toFixed(d);

/** Hashed word features of 1,536 dimensions; query vectors come from a table made beforehand. */
class HashedEmbedder implements Embedder {
	private readonly queries = new Map<string, number[]>();
	prepare(texts: string[]): void {
		for (const t of texts) this.queries.set(t, fakeEmbedding(t, DIMS));
	}
	async embedDocuments(texts: string[]): Promise<number[][]> {
		return texts.map((t) => fakeEmbedding(t, DIMS));
	}
	async embedQuery(text: string): Promise<number[]> {
		return this.queries.get(text) ?? fakeEmbedding(text, DIMS);
	}
}

/** Local disk, counting reads of index segments (none should happen while the indexes are warm). */
function countingSegmentReads(root: string) {
	const inner = new LocalDiskStorage({ root });
	const counter = { reads: 0 };
	const storage = new Proxy(inner, {
		get(target, prop) {
			if (prop === 'get')
				return (key: string, options?: object) => {
					if (key.includes('/segments/')) counter.reads++;
					return target.get(key, options ?? {});
				};
			const value: unknown = Reflect.get(target, prop);
			return typeof value === 'function' ? value.bind(target) : value;
		},
	});
	return { storage, counter };
}

async function bytesUnder(storage: LocalDiskStorage, prefix: string): Promise<number> {
	return (await storage.list(prefix)).reduce((n, o) => n + o.size, 0);
}

/** Builds a base of `size` chunks: one capture per conversation, then one sync. */
async function build(size: number, turns: Turn[], embedder: HashedEmbedder) {
	const root = tempDir('recall-latency');
	const { storage, counter } = countingSegmentReads(root);
	const base = new MemoryBase({
		storage,
		baseId: 'latency',
		embedder,
		autoCapture: false,
		embeddingBatchSize: 1024,
	});
	const sessions = USERS * SESSIONS_PER_USER;
	const t0 = performance.now();
	for (let s = 0; s < sessions; s++) {
		const from = Math.floor((s * size) / sessions);
		const to = Math.floor(((s + 1) * size) / sessions);
		const messages = Array.from({ length: to - from }, (_, i) => {
			const t = turns[(from + i) % turns.length];
			return { text: t.text, role: t.role };
		});
		await base.capture({
			sessionId: `c${s}`,
			userId: `user-${(s % USERS) + 1}`,
			runId: 'bulk',
			messages,
		});
	}
	const captureMs = performance.now() - t0;
	const t1 = performance.now();
	await base.sync();
	const syncMs = performance.now() - t1;
	const status = await base.status();
	const vectorBytes = await bytesUnder(storage, 'knowledge_base/');
	const lexicalBytes = await bytesUnder(storage, 'memory_base/latency/lexical/');
	return {
		root,
		base,
		counter,
		captureMs,
		syncMs,
		status,
		vectorBytes,
		lexicalBytes,
		perCapture: size / sessions,
	};
}

const MODES: SearchMode[] = ['hybrid', 'lexical', 'vector'];
const SCOPES: Array<{ name: string; options: SearchOptions }> = [
	{ name: 'one user (of 10)', options: { userId: 'user-3' } },
	{ name: 'all users', options: { allUsers: true } },
];

/** Warm search times per scope and mode: one untimed search of each first, then the queries interleaved. */
async function time(base: MemoryBase, queries: string[]) {
	const times = new Map<string, number[]>();
	for (const scope of SCOPES)
		for (const mode of MODES) await base.search(queries[0], { ...scope.options, mode, k: K });
	for (const q of queries)
		for (const scope of SCOPES)
			for (const mode of MODES) {
				const t0 = performance.now();
				await base.search(q, { ...scope.options, mode, k: K });
				const key = `${scope.name}\n${mode}`;
				times.set(key, [...(times.get(key) ?? []), performance.now() - t0]);
			}
	return times;
}

const mib = (bytes: number) => `${f(bytes / 2 ** 20, 0)} MiB`;

/** One size: builds the base, times the searches; returns its rows and the hybrid p95 per scope. */
async function measureSize(
	size: number,
	turns: Turn[],
	embedder: HashedEmbedder,
	queries: string[],
) {
	clearVectorCache();
	clearLexicalCache();
	const b = await build(size, turns, embedder);
	console.error(`  built ${size} chunks in ${f((b.captureMs + b.syncMs) / 1000, 1)} s`);
	b.counter.reads = 0;
	const times = await time(b.base, queries);
	const n = size.toLocaleString('en');
	const buildRow = `| ${n} | ${USERS * SESSIONS_PER_USER} (${f(b.perCapture, 0)}) | ${f(b.captureMs / 1000, 1)} s | ${f(b.syncMs / 1000, 1)} s | ${mib(b.vectorBytes)} | ${mib(b.lexicalBytes)} | ${b.status.index?.segments} / ${b.status.lexical?.segments} | ${b.counter.reads} |`;
	const of = (scope: string, mode: SearchMode) => times.get(`${scope}\n${mode}`) ?? [];
	const search = SCOPES.map((scope) => {
		const cells = MODES.map((mode) => {
			const xs = of(scope.name, mode);
			return `${f(median(xs))} ms | ${f(percentile(xs, 0.95))} ms`;
		});
		return `| ${n} | ${scope.name} | ${cells.join(' | ')} |`;
	});
	const hybridP95 = SCOPES.map((scope) => percentile(of(scope.name, 'hybrid'), 0.95));
	rmSync(b.root, { recursive: true, force: true });
	return { build: buildRow, search, hybridP95 };
}

export async function latencyTables(): Promise<string[]> {
	if (SIZES.length === 0) return [];
	const data = generate({ users: USERS, sessionsPerUser: 40 });
	const turns = data.sessions.flatMap((s) => s.turns);
	const queries = Array.from(
		{ length: QUERIES },
		(_, i) => data.questions[i % data.questions.length].text,
	);
	const embedder = new HashedEmbedder();
	embedder.prepare(queries);
	const search = [
		'| chunks | scope | hybrid p50 | hybrid p95 | lexical p50 | lexical p95 | vector p50 | vector p95 |',
		'|---:|---|---:|---:|---:|---:|---:|---:|',
	];
	const builds = [
		'| chunks | captures (messages each) | capture | sync (embed + index) | vector index | lexical index | segments (vector / lexical) | segment reads while timed |',
		'|---:|---:|---:|---:|---:|---:|---:|---:|',
	];
	let last: number[] = [];
	for (const size of SIZES) {
		const m = await measureSize(size, turns, embedder, queries);
		builds.push(m.build);
		search.push(...m.search);
		last = m.hybridP95;
		console.error(`  searched ${size} chunks`);
	}
	const at = SIZES[SIZES.length - 1].toLocaleString('en');
	const verdict = Math.max(...last) <= 20 ? '**met**' : '**not met**';
	return [
		`\n### Memory Base recall: search latency on local disk (warm, top ${K}, ${DIMS.toLocaleString('en')} dimensions, ${QUERIES} queries)\n`,
		...search,
		'',
		`Target: hybrid p95 ≤ 20 ms at ${at} chunks: ${f(last[0])} ms (${SCOPES[0].name}), ${f(last[1])} ms (${SCOPES[1].name}): ${verdict}.`,
		'\n### Memory Base recall: building the latency indexes (one capture per conversation, then one sync)\n',
		...builds,
	];
}
