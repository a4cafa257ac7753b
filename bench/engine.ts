/**
 * Engine benchmark (not a test): prints markdown tables.
 *   1. Per-turn cost (load + thread + truncate, append, flush) at 10 / 1,000 / 10,000 / 100,000 stored
 *      messages, on local disk and on Ceph radosgw, rounds interleaved so machine noise hits every cell
 *      alike, with the bytes each turn writes and the ratio 100,000 : 10. Long conversations are stored
 *      as a head plus sealed segments (docs/format.md), built directly with importDocument.
 *      Warm: this process wrote the head last (one n8n serving the conversation), so the load is a
 *      conditional read. Cold: the process-wide cache (heads and sealed segments) is emptied first
 *      (another worker wrote last, or n8n restarted), so the load transfers, parses and validates.
 *      The 10-message conversation is stored afresh before each of its cold turns, so it stays at
 *      10–12 messages; the others grow by two messages a turn (under 0.2% at 100,000).
 *   2. Tokenizer calls per turn.
 *   3. Assembling a 2,000-token history from stored counts, against re-counting after each drop
 *      (printed first).
 * Needs RGW_ENDPOINT (scripts/bench.sh starts radosgw) or starts its own.
 */
import { performance } from 'node:perf_hooks';

import {
	clearDocumentCache,
	importDocument,
	LocalDiskStorage,
	sealedPrefix,
	selectHistory,
	TiktokenCounter,
	TokenBufferMemory,
	tokenizerStats,
	walkThread,
} from '../src/internal';
import type {
	GetOptions,
	ListedObject,
	MemoryStorage,
	NotModified,
	PutOptions,
	StoredMessage,
	StoredObject,
} from '../src/internal';
import { ensureRgw, rgwStorage } from '../test/support/rgw';
import { tempDir } from '../test/support/storages';
import { seedMessages } from './seed';
import { machineLine, median, percentile } from './stats';

const counter = new TiktokenCounter('o200k_base');
const ms = (t0: number) => performance.now() - t0;
const f = (x: number, d = 2) => x.toFixed(d);

/** Deterministic chat-like text of 10–40 words. */
const WORDS =
	'the memory node keeps each turn with its token count so history never needs a second pass over old text while budgets stay exact and bounded per conversation thread'.split(
		' ',
	);
function sentence(i: number): string {
	const n = 10 + ((i * 7919) % 31);
	return Array.from({ length: n }, (_, k) => WORDS[(i * 31 + k * 17) % WORDS.length]).join(' ');
}

/** A linear thread of n messages (n/2 turns) with real token counts. */
const seedThread = (n: number) => seedMessages(n, sentence, counter);

interface Timings {
	total: number[];
	read: number[];
	append: number[];
	flush: number[];
	tokenizerCalls: number[];
	/** Bytes written (every put: head, sealed segments and indexes) per turn. */
	written: number[];
	/** Turns whose flush also sealed segments. */
	sealing: number;
}

/** Counts the bytes and objects a storage writes (the benchmark's view of "bytes written per turn"). */
class CountingStorage implements MemoryStorage {
	bytes = 0;
	objects = 0;
	constructor(readonly inner: MemoryStorage) {}
	describe(): string {
		return this.inner.describe();
	}
	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	get(key: string, options: GetOptions = {}): Promise<StoredObject | NotModified | null> {
		return this.inner.get(key, options);
	}
	async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ version: string }> {
		const out = await this.inner.put(key, body, options);
		this.bytes += body.byteLength;
		this.objects++;
		return out;
	}
	delete(key: string, options?: { ifVersion?: string }): Promise<void> {
		return this.inner.delete(key, options);
	}
	list(prefix: string): Promise<ListedObject[]> {
		return this.inner.list(prefix);
	}
}

interface Cell {
	backend: string;
	storage: CountingStorage;
	size: number;
	conversation: string;
	warm: Timings;
	cold: Timings;
	/** Bytes of the whole conversation as one JSON document. */
	bytes: number;
	/** Re-stored before each cold turn (the 10-message cell), so the size stays put. */
	reseed?: () => Promise<void>;
}

const timings = (): Timings => ({
	total: [],
	read: [],
	append: [],
	flush: [],
	tokenizerCalls: [],
	written: [],
	sealing: 0,
});
const key = (conversation: string) => `conversation_memory/bench/${conversation}.json`;

async function oneTurn(cell: Cell, round: number, cold: boolean) {
	if (cold) {
		await cell.reseed?.();
		clearDocumentCache();
	}
	const out = cold ? cell.cold : cell.warm;
	const bytes0 = cell.storage.bytes;
	const objects0 = cell.storage.objects;
	const t0 = performance.now();
	const m = new TokenBufferMemory('bench', cell.conversation, {
		storage: cell.storage,
		model: 'gpt-4o',
	});
	await m.getHistoryPromptMessages({ maxTokenLimit: 2000 });
	const t1 = performance.now();
	const calls = tokenizerStats.calls;
	await m.addMessages({
		userContent: sentence(round * 2 + 7),
		assistantContent: sentence(round * 2 + 8),
	});
	const t2 = performance.now();
	await m.flush();
	const t3 = performance.now();
	out.read.push(t1 - t0);
	out.append.push(t2 - t1);
	out.flush.push(t3 - t2);
	out.total.push(t3 - t0);
	out.tokenizerCalls.push(tokenizerStats.calls - calls);
	out.written.push(cell.storage.bytes - bytes0);
	if (cell.storage.objects - objects0 > 1) out.sealing++;
}

const SIZES = [10, 1_000, 10_000, 100_000];

async function perTurn(rounds: number) {
	const disk = new CountingStorage(new LocalDiskStorage({ root: tempDir('bench-disk') }));
	const s3 = new CountingStorage(await rgwStorage());
	const cells: Cell[] = [];
	for (const [backend, storage] of [
		['local disk', disk],
		['radosgw (S3)', s3],
	] as const) {
		for (const size of SIZES) {
			const conversation = `c${size}`;
			const messages = seedThread(size);
			const t0 = performance.now();
			await importDocument(storage, key(conversation), { version: 1, messages });
			const objects = 1 + (await storage.list(sealedPrefix(key(conversation)))).length;
			console.error(
				`built ${backend} ${size.toLocaleString('en')} messages: ${objects} objects in ${f(ms(t0) / 1000, 1)} s`,
			);
			const cell: Cell = {
				backend,
				storage,
				size,
				conversation,
				warm: timings(),
				cold: timings(),
				bytes: JSON.stringify({ version: 1, messages }).length,
			};
			if (size <= 10)
				cell.reseed = async () => {
					await storage.delete(key(conversation));
					await importDocument(storage, key(conversation), { version: 1, messages });
				};
			cells.push(cell);
		}
	}
	for (const c of cells) await oneTurn(c, -1, false); // warm-up: encoder, S3 client and probe
	for (const c of cells) [c.warm, c.cold] = [timings(), timings()];
	// Cold first: emptying the cache also empties the other cells' entries, so a cell's warm turn must
	// follow its own cold turn, whose flush left the head cached.
	for (let r = 0; r < rounds; r++)
		for (const c of cells) for (const cold of [true, false]) await oneTurn(c, r, cold);
	const kb = (b: number) =>
		b >= 1024 * 1024 ? `${f(b / 1024 / 1024, 1)} MB` : `${f(b / 1024, 1)} KB`;
	console.log(`\n### Per-turn cost (median of ${rounds} turns each, interleaved; ms)\n`);
	console.log(
		'| storage | stored messages | as one JSON | cache | load+thread+truncate | append (tokenize) | flush (CAS write) | **total median** | total p90 | written per turn (median / max) | sealing turns | tokenizer calls/turn |',
	);
	console.log('|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|');
	for (const c of cells)
		for (const [label, t] of [
			['warm', c.warm],
			['cold', c.cold],
		] as const)
			console.log(
				`| ${c.backend} | ${c.size.toLocaleString('en')} | ${kb(c.bytes)} | ${label} | ${f(median(t.read))} | ${f(median(t.append))} | ${f(median(t.flush))} | **${f(median(t.total))}** | ${f(percentile(t.total, 0.9))} | ${kb(median(t.written))} / ${kb(Math.max(...t.written))} | ${t.sealing} | ${median(t.tokenizerCalls)} |`,
			);
	console.log(
		'\n### 100,000 stored messages against 10 (ratio of the total medians; target ≤ 1.5×)\n',
	);
	console.log(
		'| storage | cache | 10 | 1,000 | 10,000 | 100,000 | **100,000 : 10** | max bytes written by any turn |',
	);
	console.log('|---|---|---:|---:|---:|---:|---:|---:|');
	for (const backend of ['local disk', 'radosgw (S3)'])
		for (const label of ['warm', 'cold'] as const) {
			const row = cells.filter((c) => c.backend === backend);
			const med = (size: number) => median((row.find((c) => c.size === size) as Cell)[label].total);
			const most = Math.max(...row.flatMap((c) => c[label].written));
			console.log(
				`| ${backend} | ${label} | ${SIZES.map((s) => f(med(s))).join(' | ')} | **${f(med(100_000) / med(10))}×** | ${kb(most)} |`,
			);
		}
}

/** Dify/LangChain pattern: count the whole remaining history, drop the oldest turn, count again. */
function recountAfterEachDrop(
	messages: StoredMessage[],
	budget: number,
): { kept: number; counts: number } {
	let start = 0;
	let counts = 0;
	for (;;) {
		let total = 0;
		for (let i = start; i < messages.length; i++) total += counter.count(messages[i].content);
		counts++;
		if (total <= budget || start >= messages.length)
			return { kept: messages.length - start, counts };
		start += 2; // drop the oldest whole turn
	}
}

function assembly() {
	console.log('\n### Assembling a 2,000-token history (ms)\n');
	console.log(
		'| stored messages | from stored counts (median of 201) | re-count after each drop | re-count calls | ratio |',
	);
	console.log('|---:|---:|---:|---:|---:|');
	const fit: Array<[number, number]> = [];
	for (const n of [250, 500, 1_000, 10_000]) {
		const messages = seedThread(n);
		const ours: number[] = [];
		let kept = 0;
		for (let r = 0; r < 201; r++) {
			const t0 = performance.now();
			kept =
				selectHistory(walkThread('bench', messages, messages.length - 1), { maxTokenLimit: 2000 })
					.turns.length * 2;
			ours.push(ms(t0));
		}
		let naive: string;
		let ratio: string;
		let calls = '';
		if (n <= 1_000) {
			const t0 = performance.now();
			const r = recountAfterEachDrop(messages, 2000);
			const t = ms(t0);
			if (r.kept !== kept) throw new Error(`baselines disagree: kept ${r.kept} vs ${kept}`);
			fit.push([n, t]);
			naive = f(t, 0);
			calls = r.counts.toLocaleString('en');
			ratio = `${Math.round(t / median(ours)).toLocaleString('en')}×`;
		} else {
			// Quadratic in n: fitted on the measured sizes (running it would take tens of minutes).
			const a = fit.reduce((s, [x, y]) => s + x * x * y, 0) / fit.reduce((s, [x]) => s + x ** 4, 0);
			const t = a * n * n;
			naive = `≈ ${f(t / 1000, 0)} s (projected)`;
			calls = `≈ ${((n - kept) / 2 + 1).toLocaleString('en')}`;
			ratio = `≈ ${Math.round(t / median(ours)).toLocaleString('en')}×`;
		}
		console.log(
			`| ${n.toLocaleString('en')} | ${f(median(ours), 3)} | ${naive} | ${calls} | ${ratio} |`,
		);
	}
}

(async () => {
	console.log(machineLine());
	const rounds = Number(process.env.BENCH_ROUNDS ?? 41);
	assembly(); // first, on a fresh heap: the per-turn rounds leave garbage and S3 traffic behind
	await perTurn(rounds);
	(await ensureRgw()).stop();
})().catch((e) => {
	console.error(e);
	process.exit(1);
});
