/**
 * Versioned-data benchmark (not a test): prints markdown tables.
 * Save-version and get-current latency with 10, 1,000 and 10,000 versions stored in one conversation,
 * on local disk and on Ceph radosgw, rounds interleaved so machine noise hits every cell alike, with the
 * requests each operation makes and the ratio 10,000 : 10 (constant cost: no listing, no history read).
 * Every history is built with saveVersion itself (the 10,000-version ones take a few minutes on
 * radosgw). The 10-version cell is a fresh conversation of 10 versions for every measured save, so it
 * stays at 10; the others grow by one version per round (under 5%).
 * get-current warm: this process wrote or read the version last (one conditional read of the head).
 * get-current cold: the process cache is emptied first (the head and the version are transferred).
 * Needs RGW_ENDPOINT (scripts/bench.sh starts radosgw) or starts its own.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';

import { clearDocumentCache, LocalDiskStorage, VersionedData } from '../src/internal';
import type {
	GetOptions,
	ListedObject,
	MemoryStorage,
	NotModified,
	PutOptions,
	StoredObject,
} from '../src/internal';
import { ensureRgw, rgwStorage } from '../test/support/rgw';
import { tempDir } from '../test/support/storages';
import { toxicity } from '../test/unit/snapshots/support';
import { machineLine, median, percentile } from './stats';

const ROUNDS = Number(process.env.SNAPSHOT_BENCH_ROUNDS ?? 41);
const SIZES = [10, 1_000, 10_000];
const f = (x: number, d = 2) => x.toFixed(d);

/** Counts requests by kind. */
class CountingStorage implements MemoryStorage {
	calls = { get: 0, put: 0, list: 0 };
	constructor(readonly inner: MemoryStorage) {}
	describe(): string {
		return this.inner.describe();
	}
	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	get(key: string, options: GetOptions = {}): Promise<StoredObject | NotModified | null> {
		this.calls.get++;
		return this.inner.get(key, options);
	}
	put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ version: string }> {
		this.calls.put++;
		return this.inner.put(key, body, options);
	}
	delete(key: string, options?: { ifVersion?: string }): Promise<void> {
		return this.inner.delete(key, options);
	}
	list(prefix: string): Promise<ListedObject[]> {
		this.calls.list++;
		return this.inner.list(prefix);
	}
}

interface Cell {
	backend: string;
	storage: CountingStorage;
	size: number;
	vd: VersionedData;
	save: number[];
	warm: number[];
	cold: number[];
	/** Requests of the last measured save: GET / PUT / LIST. */
	requests: string;
	coldRequests: string;
	fresh: number;
}

async function build(vd: VersionedData, n: number, label?: string) {
	const t0 = performance.now();
	for (let i = 0; i < n; i++) {
		await vd.saveVersion({ data: toxicity(i), summary: `edit ${i}` });
		if (label && (i + 1) % 2000 === 0)
			console.error(`  ${label}: ${i + 1} versions, ${f((performance.now() - t0) / 1000, 1)} s`);
	}
	return performance.now() - t0;
}

const delta = (s: CountingStorage, before: CountingStorage['calls']) =>
	`${s.calls.get - before.get} / ${s.calls.put - before.put} / ${s.calls.list - before.list}`;

async function measure(cell: Cell, round: number) {
	if (cell.size === 10) {
		// A fresh conversation of exactly 10 versions for each measured save.
		cell.vd = new VersionedData({
			storage: cell.storage,
			appId: 'bench',
			conversationId: `c10-${cell.fresh++}`,
		});
		await build(cell.vd, 10);
	}
	const before = { ...cell.storage.calls };
	let t0 = performance.now();
	await cell.vd.saveVersion({ data: toxicity(round + 100_000), summary: `bench round ${round}` });
	cell.save.push(performance.now() - t0);
	cell.requests = delta(cell.storage, before);
	t0 = performance.now();
	await cell.vd.getCurrent();
	cell.warm.push(performance.now() - t0);
	clearDocumentCache();
	const cold = { ...cell.storage.calls };
	t0 = performance.now();
	await cell.vd.getCurrent();
	cell.cold.push(performance.now() - t0);
	cell.coldRequests = delta(cell.storage, cold);
}

async function main() {
	const backends: [string, CountingStorage][] = [
		['local disk', new CountingStorage(new LocalDiskStorage({ root: tempDir('bench-snap') }))],
		['radosgw (S3)', new CountingStorage(await rgwStorage())],
	];
	const cells: Cell[] = [];
	for (const [backend, storage] of backends)
		for (const size of SIZES)
			cells.push({
				backend,
				storage,
				size,
				vd: new VersionedData({ storage, appId: 'bench', conversationId: `c${size}` }),
				save: [],
				warm: [],
				cold: [],
				requests: '',
				coldRequests: '',
				fresh: 0,
			});
	// The long histories are built at the same time (independent conversations), each by saveVersion.
	await Promise.all(
		cells
			.filter((c) => c.size > 10)
			.map(async (c) => {
				const label = `${c.backend} ${c.size.toLocaleString('en')}`;
				const took = await build(c.vd, c.size, label);
				const stored = (await c.storage.list(`${c.vd.prefix}versions/`)).length;
				console.error(`built ${label}: ${stored} versions in ${f(took / 1000, 1)} s`);
			}),
	);
	for (let round = 0; round < ROUNDS; round++) for (const cell of cells) await measure(cell, round);

	console.log(
		`\n### Versioned data: save and get-current (median of ${ROUNDS} rounds, interleaved; ms)\n`,
	);
	console.log(
		'| storage | versions stored | save-version median | save p90 | requests per save (GET / PUT / LIST) | get-current warm | get-current cold | requests cold (GET / PUT / LIST) |',
	);
	console.log('|---|---:|---:|---:|---|---:|---:|---|');
	for (const c of cells)
		console.log(
			`| ${c.backend} | ${c.size.toLocaleString('en')} | **${f(median(c.save))}** | ${f(percentile(c.save, 0.9))} | ${c.requests} | **${f(median(c.warm))}** | **${f(median(c.cold))}** | ${c.coldRequests} |`,
		);
	console.log('\n**10,000 versions against 10** (ratio of the medians):\n');
	console.log('| storage | operation | 10 | 1,000 | 10,000 | **10,000 : 10** |');
	console.log('|---|---|---:|---:|---:|---:|');
	for (const [backend] of backends)
		for (const [op, pick] of [
			['save-version', (c: Cell) => c.save],
			['get-current warm', (c: Cell) => c.warm],
			['get-current cold', (c: Cell) => c.cold],
		] as const) {
			const row = cells.filter((c) => c.backend === backend).map((c) => median(pick(c)));
			console.log(
				`| ${backend} | ${op} | ${row.map((x) => f(x)).join(' | ')} | **${f(row[2] / row[0])}×** |`,
			);
		}
	console.log(`\n${machineLine(`load average ${loadavg()[0].toFixed(1)} at the end`)}`);
}

main()
	.then(async () => (await ensureRgw()).stop())
	.catch((error: unknown) => {
		console.error(error);
		process.exit(1);
	});
