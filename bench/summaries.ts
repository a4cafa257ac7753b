/**
 * Summarize Older Turns benchmark (not a test): prints markdown tables.
 *   1. A scripted conversation of 500 turns with a budget of 1,000 tokens and facts planted at turns 3,
 *      50 and 300: tokens sent per turn (history plus summary) with full context, drop-oldest and
 *      summarize; summarization calls per 100 turns; which facts reach the model at turn 500; the
 *      engine's time per turn and what summarizing adds to it, amortized. The summarizer is the demo
 *      model's extractive one, called in-process (a stand-in that answers at once), so the times are
 *      the engine's own.
 *   2. The turn cost with Summarize Older Turns at 10 and 100,000 stored messages (local disk, warm),
 *      and their ratio.
 * Local disk only: storage latency is what the engine benchmark measures.
 */
import { performance } from 'node:perf_hooks';

import { extractiveSummary } from '../demo/summaries';
import type { ChatMessage } from '../demo/messages';
import {
	importDocument,
	LocalDiskStorage,
	TiktokenCounter,
	TokenBufferMemory,
} from '../src/internal';
import type { History, Summarizer } from '../src/internal';
import { tempDir } from '../test/support/storages';
import { seedMessages } from './seed';
import { loadLine, machineLine, median, percentile } from './stats';

const TURNS = 500;
const BUDGET = 1000;
const FACTS: Record<number, { text: string; probe: RegExp }> = {
	3: { text: 'My name is Ada Lovelace and I work in Manchester.', probe: /Ada Lovelace/ },
	50: { text: 'My order number is 48213, it was placed on May 4.', probe: /48213/ },
	300: { text: 'I moved to Lisbon last spring.', probe: /Lisbon/ },
};
const FILLERS = [
	'Just chatting about the weather again, nothing new to say here today.',
	'could you remind me how long tea should steep, roughly speaking?',
	'that makes sense, thanks for the quick answer as always.',
	'what would be a good way to spend a quiet afternoon indoors?',
];
const ANSWER = 'Sure, happy to help with that. Let me know if there is anything else.';
const f = (x: number, d = 2) => x.toFixed(d);

type Strategy = 'full context' | 'drop oldest' | 'summarize';

interface Run {
	strategy: Strategy;
	sent: number[];
	ms: number[];
	calls: number;
	last?: History;
}

function stubSummarizer(run: Run): Summarizer {
	return async (request) => {
		run.calls++;
		return extractiveSummary(request as unknown as ChatMessage[]);
	};
}

const userText = (t: number) => FACTS[t]?.text ?? FILLERS[t % FILLERS.length];
const seen = (h: History) =>
	[h.summary?.section ?? '', ...h.messages.map((m) => String(m.content))].join('\n');

async function scripted(strategy: Strategy): Promise<Run> {
	const run: Run = { strategy, sent: [], ms: [], calls: 0 };
	const storage = new LocalDiskStorage({ root: tempDir('bench-summaries') });
	const memory = new TokenBufferMemory('bench', 'scripted', { storage, model: 'gpt-4o' });
	const summarize = stubSummarizer(run);
	for (let t = 1; t <= TURNS; t++) {
		const t0 = performance.now();
		const h = await memory.getHistoryPromptMessages({
			maxTokenLimit: strategy === 'full context' ? 10_000_000 : BUDGET,
			...(strategy === 'summarize' ? { summary: { summarize } } : {}),
		});
		await memory.addMessages({ userContent: userText(t), assistantContent: ANSWER });
		await memory.flush();
		run.ms.push(performance.now() - t0);
		run.sent.push(h.tokens + (h.summary?.tokens ?? 0));
		if (t === TURNS) run.last = h;
	}
	return run;
}

async function scriptedTable() {
	const runs: Run[] = [];
	for (const s of ['full context', 'drop oldest', 'summarize'] as const)
		runs.push(await scripted(s));
	const drop = median((runs[1] as Run).ms);
	console.log(
		`\n### ${TURNS} scripted turns, budget ${BUDGET.toLocaleString('en')} tokens, facts at turns 3, 50 and 300\n`,
	);
	console.log(
		'| strategy | tokens sent per turn (median / p95 / max) | total tokens over 500 turns | summary calls per 100 turns | facts seen at turn 500 (3 / 50 / 300) | engine ms per turn (median) | added per turn, amortized (mean − drop oldest mean) |',
	);
	console.log('|---|---:|---:|---:|---|---:|---:|');
	const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
	const dropMean = mean((runs[1] as Run).ms);
	for (const r of runs) {
		const facts = Object.values(FACTS)
			.map((fact) => (r.last && fact.probe.test(seen(r.last)) ? 'yes' : 'no'))
			.join(' / ');
		const added = r.strategy === 'drop oldest' ? '–' : `${f(mean(r.ms) - dropMean)} ms`;
		console.log(
			`| ${r.strategy} | ${median(r.sent)} / ${percentile(r.sent, 0.95)} / ${Math.max(...r.sent)} | ${r.sent.reduce((a, b) => a + b, 0).toLocaleString('en')} | ${r.strategy === 'summarize' ? f((r.calls / TURNS) * 100, 1) : '–'} | ${facts} | ${f(median(r.ms))} | ${added} |`,
		);
	}
	console.log(`\n(drop-oldest median per turn: ${f(drop)} ms)`);
}

async function flatness(rounds: number) {
	const counter = new TiktokenCounter('o200k_base');
	const storage = new LocalDiskStorage({ root: tempDir('bench-summaries-flat') });
	const sizes = [10, 100_000];
	const times = new Map<number, number[]>(sizes.map((s) => [s, []]));
	const run: Run = { strategy: 'summarize', sent: [], ms: [], calls: 0 };
	const summarize = stubSummarizer(run);
	const key = (size: number) => `conversation_memory/bench/flat${size}.json`;
	for (const size of sizes)
		await importDocument(storage, key(size), {
			version: 1,
			messages: seedMessages(size, (i) => (i % 2 ? ANSWER : userText(i / 2 + 1)), counter),
		});
	const turn = async (size: number, r: number) => {
		const t0 = performance.now();
		const memory = new TokenBufferMemory('bench', `flat${size}`, { storage, model: 'gpt-4o' });
		await memory.getHistoryPromptMessages({ maxTokenLimit: BUDGET, summary: { summarize } });
		await memory.addMessages({ userContent: userText(r), assistantContent: ANSWER });
		await memory.flush();
		return performance.now() - t0;
	};
	for (let r = 0; r < 5; r++) for (const s of sizes) await turn(s, r); // warm-up, first summary
	for (let r = 0; r < rounds; r++)
		for (const s of sizes) (times.get(s) as number[]).push(await turn(s, r + 5));
	const med = (s: number) => median(times.get(s) as number[]);
	console.log(
		`\n### Turn cost with Summarize Older Turns (local disk, warm; median of ${rounds} interleaved turns, stand-in summarizer)\n`,
	);
	console.log('| 10 messages | 100,000 messages | **100,000 : 10** | summary calls |');
	console.log('|---:|---:|---:|---:|');
	console.log(
		`| ${f(med(10))} ms | ${f(med(100_000))} ms | **${f(med(100_000) / med(10))}×** | ${run.calls} in ${2 * (rounds + 5)} turns |`,
	);
}

async function main() {
	console.log('## Summarize Older Turns');
	console.log(machineLine(loadLine()));
	await scriptedTable();
	await flatness(Number(process.env.SUMMARY_BENCH_ROUNDS ?? 60));
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
