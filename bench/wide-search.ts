/**
 * How long a search of every conversation takes on kept bases (not a test): bases `bench/scale.ts`
 * keeps (SCALE_BENCH_KEEP=1 prints their folders), given as WIDE_SEARCH_ROOTS, comma-separated
 * `users=folder` (local disk). For each base, WIDE_SEARCH_SEARCHES (20) hybrid searches for three words
 * of random filler users' messages, MemoryBase.search(query, { allUsers: true, k: 5 }), the same queries
 * for every base and run: warm (after two searches, the caches at their defaults or as
 * LLM_MEMORY_*_CACHE_MB set them), cold (every cache emptied before each search), and again (each query
 * searched right before it is timed, as an agent asking the same on its next turn). Prints p50 and p95
 * and a digest of what the searches returned (two trees that return the same print the same digest);
 * warm, also the most bytes any of three more searches held beyond the caches (heldDuring, scale.ts).
 * WIDE_SEARCH_DELAY_MS (0): a wait before every request, as a remote store's round trip (a stand-in
 * for the network: the objects are still read from local disk); the rows then also give the requests
 * per search (median) and the most under way at once. Each row also gives the longest the event loop
 * was held during a timed search (monitorEventLoopDelay's most, the median over the searches: in n8n's
 * one process, other executions wait that long). WIDE_SEARCH_MODES (warm,cold,again): the rows run.
 * WIDE_SEARCH_SCOPE=user: each search is of the query's user only, MemoryBase.search(query, { userId,
 * k: 5 }) (that user's partition and open logs), instead of every conversation; with
 * WIDE_SEARCH_OPEN=1, the user's conversation has a message captured first (untimed, the same one on
 * every run), so its log is open, as in a chat going on.
 * bench/before-after.ts runs it in two trees (BEFORE_AFTER_BENCHES=bench/wide-search.ts; with a delay,
 * BEFORE_AFTER_SAME_BENCHES=1, so that the earlier tree runs this copy).
 */
import { createHash } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { clearAllCaches, LimitedStorage, LocalDiskStorage, MemoryBase } from '../src/internal';
import type { MemoryStorage } from '../src/internal';
import {
	BASE_ID,
	Counted,
	HashEmbedder,
	heldDuring,
	n,
	queryOf,
	requests as requestsOf,
} from './scale';
import { lcg, loadLine, machineLine, median, percentile } from './stats';

const SEARCHES = Number(process.env.WIDE_SEARCH_SEARCHES ?? 20);
const DELAY_MS = Number(process.env.WIDE_SEARCH_DELAY_MS ?? 0);
const MODES = (process.env.WIDE_SEARCH_MODES ?? 'warm,cold,again').split(',') as Mode[];
const ONE_USER = process.env.WIDE_SEARCH_SCOPE === 'user';
const OPEN_LOG = ONE_USER && process.env.WIDE_SEARCH_OPEN === '1';

/** `inner` with a wait of DELAY_MS before each request (a page of a listing: none). */
function delayed(inner: MemoryStorage): MemoryStorage {
	const waits = new Set(['get', 'put', 'delete', 'list', 'listFolders']);
	return new Proxy(inner, {
		get(target, prop, receiver) {
			const value: unknown = Reflect.get(target, prop, receiver);
			if (typeof value !== 'function') return value;
			const fn = value as (...args: unknown[]) => unknown;
			if (!waits.has(String(prop))) return fn.bind(target);
			return async (...args: unknown[]) => {
				await new Promise((r) => setTimeout(r, DELAY_MS));
				return fn.apply(target, args);
			};
		},
	});
}

// heldDuring collects garbage before each sample.
if (!(globalThis as { gc?: unknown }).gc) {
	setFlagsFromString('--expose-gc');
	(globalThis as { gc?: unknown }).gc = runInNewContext('gc');
}

/** Warm, cold (every cache emptied first), or again (each query right after the same one). */
type Mode = 'warm' | 'cold' | 'again';

async function measure(root: string, users: number, mode: Mode) {
	const cold = mode === 'cold';
	const disk = new LocalDiskStorage({ root });
	// Limited to nothing: it notes the most requests under way at once.
	const atOnce = new LimitedStorage(DELAY_MS > 0 ? delayed(disk) : disk, Infinity);
	const storage = new Counted(atOnce);
	const base = new MemoryBase({
		storage,
		baseId: BASE_ID,
		embedder: new HashEmbedder(),
	});
	const rand = lcg(12_345);
	// A query and its search's scope: every conversation, or (WIDE_SEARCH_SCOPE=user) its user's.
	const query = () => {
		const u = Math.floor(rand() * users);
		const scope = ONE_USER ? { userId: `user-${u}` } : { allUsers: true };
		return { u, text: queryOf(u, rand).text, options: { ...scope, k: 5 } };
	};
	// The same capture on every run: captured again, it changes nothing.
	const open = async (u: number) => {
		if (OPEN_LOG)
			await base.capture({
				sessionId: `chat-user-${u}`,
				userId: `user-${u}`,
				runId: 'wide-search-open',
				texts: ['a message of the chat going on'],
			});
	};
	for (let i = 0; i < 2; i++) {
		const q = query();
		await open(q.u);
		await base.search(q.text, q.options);
	}
	const times: number[] = [];
	const requests: number[] = [];
	let most = 0;
	const digest = createHash('sha256');
	const stalls = monitorEventLoopDelay({ resolution: 5 });
	const worst: number[] = [];
	for (let i = 0; i < SEARCHES; i++) {
		const { u, text, options } = query();
		await open(u);
		if (cold) clearAllCaches();
		if (mode === 'again') await base.search(text, options);
		storage.take();
		atOnce.peak = 0;
		stalls.enable();
		const t0 = performance.now();
		const found = await base.search(text, options);
		times.push(performance.now() - t0);
		stalls.disable();
		worst.push(stalls.max / 1e6);
		stalls.reset();
		requests.push(requestsOf(storage.take()));
		most = Math.max(most, atOnce.peak);
		digest.update(found.map((m) => `${m.messageId}:${m.chunkIndex}:${m.score}`).join(',') + '\n');
	}
	let held = 0;
	if (mode === 'warm')
		for (let i = 0; i < 3; i++) {
			const { u, text, options } = query();
			await open(u);
			held = Math.max(held, (await heldDuring(() => base.search(text, options))).held);
		}
	return {
		times,
		stall: median(worst),
		held,
		requests: median(requests),
		most,
		digest: digest.digest('hex').slice(0, 12),
	};
}

async function main(): Promise<void> {
	const roots = (process.env.WIDE_SEARCH_ROOTS ?? '').split(',').filter(Boolean);
	if (roots.length === 0)
		throw new Error('WIDE_SEARCH_ROOTS: users=folder,… (bases bench/scale.ts kept)');
	const rows: string[] = [];
	for (const entry of roots) {
		const [users, root] = entry.split('=');
		for (const mode of MODES) {
			const { times, stall, held, requests, most, digest } = await measure(
				root,
				Number(users),
				mode,
			);
			const ms = (x: number) => `${x.toFixed(1)} ms`;
			rows.push(
				`| ${n(Number(users))} users ${mode} | ${ms(median(times))} | ${ms(percentile(times, 0.95))} | ${mode === 'warm' ? `${(held / 2 ** 20).toFixed(1)} MiB` : ''} | ${requests}, ${most} | ${ms(stall)} | ${digest} |`,
			);
		}
	}
	console.log(`\n${machineLine(loadLine())}\n`);
	const delay = DELAY_MS > 0 ? `, ${DELAY_MS} ms before each request` : '';
	const what = ONE_USER
		? `One user's search${OPEN_LOG ? ', their conversation open' : ''}`
		: 'A search of every conversation';
	console.log(`### ${what} on kept bases${delay}\n`);
	console.log(
		'| base | p50 | p95 | held outside the caches | requests (median), most at once | event loop held, longest (median of searches) | what the searches returned (digest) |',
	);
	console.log('|---|---:|---:|---:|---:|---:|---|');
	for (const row of rows) console.log(row);
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
