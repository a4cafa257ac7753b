/**
 * Capture benchmark (not a test): prints a markdown table. The cost of one Memory Base capture (one
 * chat turn's stride of one output, below the threshold) on local disk and on radosgw, with 0, 100 and
 * 1,000 messages already pending in the conversation, and the ratio to 0 pending. A capture writes a
 * bounded log whatever is pending, so the ratio should stay near 1.
 * Each measured capture goes to one of SESSIONS conversations seeded with the pending count, round
 * robin, so the count grows by at most TURNS / SESSIONS during the measurement. The rows of one
 * storage are measured interleaved (one capture of each pending count in turn, in rotating order), so
 * a shared machine's load changes weigh on every row alike and the ratio compares like with like.
 * CAPTURE_BENCH_TURNS (default 200) captures per row; needs RGW_ENDPOINT or starts its own radosgw.
 */
import { performance } from 'node:perf_hooks';

import { LocalDiskStorage, MemoryBase } from '../src/internal';
import type { MemoryStorage } from '../src/internal';
import { ensureRgw, rgwStorage } from '../test/support/rgw';
import { tempDir } from '../test/support/storages';
import { loadLine, machineLine, median, percentile } from './stats';

const TURNS = Number(process.env.CAPTURE_BENCH_TURNS ?? 200);
const SESSIONS = 10;
const PENDING = [0, 100, 1000];
const f = (x: number, d = 2) => x.toFixed(d);

/** Counts a storage's requests (of the last capture). */
export function countRequests(inner: MemoryStorage) {
	const calls = { get: 0, put: 0, list: 0 };
	const storage: MemoryStorage = {
		describe: () => inner.describe(),
		identity: () => inner.identity?.() ?? inner.describe(),
		get: ((key: string, options?: object) => {
			calls.get++;
			return inner.get(key, options ?? {});
		}) as MemoryStorage['get'],
		put: (key, body, options) => {
			calls.put++;
			return inner.put(key, body, options);
		},
		delete: (key, options) => inner.delete(key, options),
		list: (prefix) => {
			calls.list++;
			return inner.list(prefix);
		},
	};
	return {
		storage,
		reset: () => Object.assign(calls, { get: 0, put: 0, list: 0 }),
		summary: () => `${calls.get} GET, ${calls.put} PUT${calls.list ? `, ${calls.list} LIST` : ''}`,
	};
}

/** A conversation with `pending` captured outputs waiting (strides of 10, as a busy workflow makes). */
async function seed(base: MemoryBase, sessionId: string, pending: number): Promise<void> {
	for (let i = 0; i < pending; i += 10) {
		const texts = Array.from({ length: Math.min(10, pending - i) }, (_, j) => `pending ${i + j}`);
		await base.capture({ sessionId, runId: `seed-${i}`, texts });
	}
}

/** A base on its own storage whose SESSIONS conversations each have `pending` outputs waiting. */
async function seeded(storage: MemoryStorage, pending: number) {
	const counted = countRequests(storage);
	const base = new MemoryBase({ storage: counted.storage, baseId: 'bench', autoCapture: false });
	for (let s = 0; s < SESSIONS; s++) await seed(base, `p${pending}-s${s}`, pending);
	return { pending, base, counted, times: [] as number[], requests: '' };
}

/** The rows of one storage, measured interleaved: turn i captures once into each, in rotating order. */
async function rows(make: () => Promise<MemoryStorage>) {
	const all = [];
	for (const pending of PENDING) all.push(await seeded(await make(), pending));
	for (let i = 0; i < TURNS; i++)
		for (let j = 0; j < all.length; j++) {
			const r = all[(i + j) % all.length];
			const sessionId = `p${r.pending}-s${i % SESSIONS}`;
			r.counted.reset();
			const t0 = performance.now();
			await r.base.capture({ sessionId, runId: `turn-${i}`, texts: [`the answer of turn ${i}`] });
			r.times.push(performance.now() - t0);
			if (i === TURNS - 1) r.requests = r.counted.summary();
		}
	return all.map((r) => ({
		pending: r.pending,
		p50: median(r.times),
		p95: percentile(r.times, 0.95),
		requests: r.requests,
	}));
}

export async function captureTable(): Promise<string[]> {
	const { endpoint } = await ensureRgw();
	const lines = [
		'| storage | pending before | capture p50 | p95 | ratio to 0 pending (p50) | requests per capture |',
		'|---|---:|---:|---:|---:|---|',
	];
	for (const b of [
		{ name: 'local disk', make: async () => new LocalDiskStorage({ root: tempDir('cap-bench') }) },
		{ name: 'radosgw', make: async () => rgwStorage() },
	]) {
		const measured = await rows(b.make);
		const zero = measured[0].p50;
		for (const r of measured) {
			const pending = r.pending;
			lines.push(
				`| ${b.name} | ${pending.toLocaleString('en')} | ${f(r.p50)} ms | ${f(r.p95)} ms | ${f(r.p50 / zero)}× | ${r.requests} |`,
			);
			console.error(
				`  capture on ${b.name} (${pending} pending): p50 ${f(r.p50)} ms (${endpoint})`,
			);
		}
	}
	return lines;
}

if (require.main === module)
	(async () => {
		console.error('Capture benchmark…');
		const table = await captureTable();
		console.log('\n### Memory Base: capture cost per chat turn (below the threshold)\n');
		console.log(table.join('\n'));
		console.log(`\n${machineLine(loadLine())}`);
		(await ensureRgw()).stop();
	})().catch((e: unknown) => {
		console.error(e);
		process.exit(1);
	});
