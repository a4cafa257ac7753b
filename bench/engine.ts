/**
 * Engine benchmark (not a test): prints markdown tables.
 *   1. Per-turn cost (load + thread + truncate, append, flush) at 10 / 1,000 / 10,000 stored messages,
 *      on local disk and on Ceph radosgw, rounds interleaved so machine noise hits every cell alike.
 *      Warm: this process wrote the document last (one n8n serving the conversation), so the load is a
 *      conditional read. Cold: the decoded-document cache is emptied first (another worker wrote last,
 *      or n8n restarted), so the load transfers, parses and validates the whole document.
 *   2. Tokenizer calls per turn.
 *   3. Assembling a 2,000-token history from stored counts, against re-counting after each drop
 *      (printed first).
 * Needs RGW_ENDPOINT (scripts/bench.sh starts radosgw) or starts its own.
 */
import { performance } from 'node:perf_hooks';

import {
	clearDocumentCache,
	encodeDocument,
	LocalDiskStorage,
	selectHistory,
	TiktokenCounter,
	TokenBufferMemory,
	tokenizerStats,
	walkThread,
} from '../src';
import type { MemoryStorage, StoredMessage } from '../src';
import { ensureRgw, rgwStorage } from '../test/support/rgw';
import { tempDir } from '../test/support/storages';
import { machineLine, median, percentile } from './stats';

const counter = new TiktokenCounter('o200k_base');
const ms = (t0: number) => performance.now() - t0;
const f = (x: number, d = 2) => x.toFixed(d);

/** Deterministic chat-like text of 10–40 words. */
const WORDS = 'the memory node keeps each turn with its token count so history never needs a second pass over old text while budgets stay exact and bounded per conversation thread'.split(' ');
function sentence(i: number): string {
	const n = 10 + ((i * 7919) % 31);
	return Array.from({ length: n }, (_, k) => WORDS[(i * 31 + k * 17) % WORDS.length]).join(' ');
}

/** A linear thread of n messages (n/2 turns) with real token counts. */
function seedMessages(n: number): StoredMessage[] {
	const out: StoredMessage[] = [];
	let parent: string | null = null;
	for (let i = 0; i < n; i += 2) {
		const q = sentence(i);
		const a = sentence(i + 1);
		const created_at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
		out.push({ message_id: `t${i}:user`, parent_message_id: parent, role: 'user', content: q, files: [], token_count: counter.count(q), created_at });
		out.push({ message_id: `t${i}`, parent_message_id: `t${i}:user`, role: 'assistant', content: a, files: [], token_count: counter.count(a), created_at });
		parent = `t${i}`;
	}
	return out;
}

interface Timings {
	total: number[];
	read: number[];
	append: number[];
	flush: number[];
	tokenizerCalls: number[];
}

interface Cell {
	backend: string;
	storage: MemoryStorage;
	size: number;
	conversation: string;
	warm: Timings;
	cold: Timings;
	bytes: number;
}

const timings = (): Timings => ({ total: [], read: [], append: [], flush: [], tokenizerCalls: [] });

async function oneTurn(cell: Cell, round: number, cold: boolean) {
	if (cold) clearDocumentCache();
	const out = cold ? cell.cold : cell.warm;
	const t0 = performance.now();
	const m = new TokenBufferMemory('bench', cell.conversation, { storage: cell.storage, model: 'gpt-4o' });
	await m.getHistoryPromptMessages({ maxTokenLimit: 2000 });
	const t1 = performance.now();
	const calls = tokenizerStats.calls;
	await m.addMessages({ userContent: sentence(round * 2 + 7), assistantContent: sentence(round * 2 + 8) });
	const t2 = performance.now();
	await m.flush();
	const t3 = performance.now();
	out.read.push(t1 - t0);
	out.append.push(t2 - t1);
	out.flush.push(t3 - t2);
	out.total.push(t3 - t0);
	out.tokenizerCalls.push(tokenizerStats.calls - calls);
}

async function perTurn(rounds: number) {
	const disk = new LocalDiskStorage({ root: tempDir('bench-disk') });
	const s3 = await rgwStorage();
	const cells: Cell[] = [];
	for (const [backend, storage] of [['local disk', disk], ['radosgw (S3)', s3]] as const) {
		for (const size of [10, 1_000, 10_000]) {
			const conversation = `c${size}`;
			const body = encodeDocument({ version: 1, messages: seedMessages(size) });
			await storage.put(`conversation_memory/bench/${conversation}.json`, body);
			cells.push({ backend, storage, size, conversation, warm: timings(), cold: timings(), bytes: body.length });
		}
	}
	for (const c of cells) await oneTurn(c, -1, false); // warm-up: encoder, S3 client and probe
	for (const c of cells) [c.warm, c.cold] = [timings(), timings()];
	// Cold first: emptying the cache also empties the other cells' entries, so a cell's warm turn must
	// follow its own cold turn, whose flush left the document cached.
	for (let r = 0; r < rounds; r++) for (const c of cells) for (const cold of [true, false]) await oneTurn(c, r, cold);
	console.log(`\n### Per-turn cost (median of ${rounds} turns each, interleaved; ms)\n`);
	console.log('| storage | stored messages | document | cache | load+thread+truncate | append (tokenize) | flush (CAS write) | **total median** | total p90 | tokenizer calls/turn |');
	console.log('|---|---:|---:|---|---:|---:|---:|---:|---:|---:|');
	for (const c of cells)
		for (const [label, t] of [['warm', c.warm], ['cold', c.cold]] as const)
			console.log(
				`| ${c.backend} | ${c.size.toLocaleString('en')} | ${f(c.bytes / 1024, 0)} KB | ${label} | ${f(median(t.read))} | ${f(median(t.append))} | ${f(median(t.flush))} | **${f(median(t.total))}** | ${f(percentile(t.total, 0.9))} | ${median(t.tokenizerCalls)} |`,
			);
}

/** Dify/LangChain pattern: count the whole remaining history, drop the oldest turn, count again. */
function recountAfterEachDrop(messages: StoredMessage[], budget: number): { kept: number; counts: number } {
	let start = 0;
	let counts = 0;
	for (;;) {
		let total = 0;
		for (let i = start; i < messages.length; i++) total += counter.count(messages[i].content);
		counts++;
		if (total <= budget || start >= messages.length) return { kept: messages.length - start, counts };
		start += 2; // drop the oldest whole turn
	}
}

function assembly() {
	console.log('\n### Assembling a 2,000-token history (ms)\n');
	console.log('| stored messages | from stored counts (median of 201) | re-count after each drop | re-count calls | ratio |');
	console.log('|---:|---:|---:|---:|---:|');
	const fit: Array<[number, number]> = [];
	for (const n of [250, 500, 1_000, 10_000]) {
		const messages = seedMessages(n);
		const ours: number[] = [];
		let kept = 0;
		for (let r = 0; r < 201; r++) {
			const t0 = performance.now();
			kept = selectHistory(walkThread('bench', messages, messages.length - 1), { maxTokenLimit: 2000 }).turns.length * 2;
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
		console.log(`| ${n.toLocaleString('en')} | ${f(median(ours), 3)} | ${naive} | ${calls} | ${ratio} |`);
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
