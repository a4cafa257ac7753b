/**
 * Long-term facts benchmark (not a test): prints markdown tables.
 *
 * A scripted conversation of 500 chat-length turns (a question of about 15–40 tokens, an answer of
 * about 100–200) in which the user now and then says something lasting about themselves ("I have a
 * dog named Biscuit", "I moved to Porto", "I sold my car"), run through ChatTurn twice, interleaved
 * turn by turn: with facts (open, save, learn) and without (open, save), on local disk. The extractor
 * is a deterministic stand-in (test/support/fact-extractor.ts) called in-process: it answers at once
 * and by rule, so the figures are the engine's own, not a model's.
 *   1. Extraction calls and tokens per 100 turns (request tokens counted with o200k_base as the
 *      request is sent, the answer's too), at the default threshold (800 tokens) and at 400 and 1,600.
 *   2. Engine time per turn with and without facts (median), and what facts add per turn, amortized.
 *   3. At the last turn: the facts section's tokens against the raw recall that carries the same facts
 *      (a recall section holding each current fact's evidence message), and what a recall search
 *      (recall()'s defaults) brings for questions about facts that changed: the current value, an old
 *      one, or neither.
 * Knobs: FACTS_BENCH_TURNS (default 500).
 */
import { performance } from 'node:perf_hooks';

import {
	ChatTurn,
	ConversationMemory,
	Facts,
	LocalDiskStorage,
	MemoryBase,
	recallSection,
	TiktokenCounter,
} from '../src/internal';
import type { LearnResult, PromptMessage, SearchMatch } from '../src/internal';
import { standInAnswer } from '../test/support/fact-extractor';
import { tempDir } from '../test/support/storages';
import { loadLine, machineLine, median } from './stats';

const TURNS = Number(process.env.FACTS_BENCH_TURNS ?? 500);
const BUDGET = 2000;
const FACTS_BUDGET = 400;
const counter = new TiktokenCounter('o200k_base');
const f = (x: number, d = 2) => x.toFixed(d);

/** A small deterministic generator (mulberry32). */
function rng(seed: number) {
	return () => {
		seed = (seed + 0x6d2b79f5) | 0;
		let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

const CITIES = ['Lisbon', 'Porto', 'Berlin', 'Oslo', 'Kyoto', 'Quito', 'Dakar', 'Perth'];
const JOBS = ['a nurse', 'a baker', 'a pilot', 'a teacher', 'an architect', 'a chemist'];
const THINGS = [
	'a dog named Biscuit',
	'a cat named Tom',
	'a red bicycle',
	'a small boat',
	'a piano',
	'a vegetable garden',
	'two kids',
	'a vintage camera',
];
const LIKES = [
	'jazz records',
	'mountain hikes',
	'spicy food',
	'old films',
	'board games',
	'green tea',
];
const SMALL = [
	'What do you think about the weather this week, is it going to rain a lot?',
	'Can you remind me how long pasta should cook for a nice texture?',
	'Tell me something interesting about octopuses, please.',
	'How do I keep my plants alive while I am away for a week?',
	'Thanks, that was helpful. What else should I know about it?',
	'Could you suggest a good book for a rainy afternoon?',
	'Why is the sky blue in the day and red at sunset?',
];
const SENTENCES = [
	'That is a good question, and there are a few things worth keeping in mind here.',
	'Most people find that a little preparation goes a long way in situations like this.',
	'It depends on your situation, but a simple approach usually works well.',
	'If you want, I can go through the steps one by one with you.',
	'Many experts suggest starting small and adjusting as you go along.',
	'There is no single right answer, though some options are more common than others.',
	'Keep in mind that details can change, so it helps to check again later.',
	'I hope that helps, and feel free to ask me anything else about it.',
];

/** The user's message and the answer of turn `t`: now and then a lasting statement about themselves. */
function script(seed = 7) {
	const r = rng(seed);
	const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
	let owned: string[] = [];
	const turns: Array<{ user: string; answer: string; fact: boolean }> = [];
	for (let t = 0; t < TURNS; t++) {
		let user = pick(SMALL);
		const roll = r();
		let fact = true;
		if (t === 0) user = `Hi! I live in ${pick(CITIES)} and I work as ${pick(JOBS)}.`;
		else if (roll < 0.04) user = `Big news: we moved to ${pick(CITIES)} last month.`;
		else if (roll < 0.07) user = `Oh, and I work as ${pick(JOBS)} now, it is a change.`;
		else if (roll < 0.11) {
			const thing = pick(THINGS);
			owned = [...owned, thing];
			user = `By the way, I have ${thing} at home.`;
		} else if (roll < 0.13 && owned.length > 0) {
			const thing = owned.shift() as string;
			user = `Sadly I sold my ${thing.split(' ').slice(1, 2).join(' ')} last week.`;
		} else if (roll < 0.16) user = `I love ${pick(LIKES)}, I really do.`;
		else fact = false;
		const answer = Array.from({ length: 5 + Math.floor(r() * 5) }, () => pick(SENTENCES)).join(' ');
		turns.push({ user, answer, fact });
	}
	return turns;
}

interface Extraction {
	calls: number;
	requestTokens: number;
	answerTokens: number;
}

function countingExtractor(stats: Extraction) {
	return async (request: PromptMessage[]) => {
		stats.calls++;
		stats.requestTokens += request.reduce((n, m) => n + counter.count(String(m.content)), 0);
		const answer = standInAnswer(request);
		stats.answerTokens += counter.count(answer);
		return answer;
	};
}

async function run(threshold: number | undefined, timed: boolean) {
	const storage = new LocalDiskStorage({ root: tempDir('bench-facts') });
	const on = new ConversationMemory('wf', 'on', { storage, model: 'gpt-4o' });
	const off = new ConversationMemory('wf', 'off', { storage, model: 'gpt-4o' });
	const facts = new Facts({ storage, space: 'wf', subject: { userId: 'u' } });
	const stats: Extraction = { calls: 0, requestTokens: 0, answerTokens: 0 };
	const extract = countingExtractor(stats);
	const ms = { on: [] as number[], off: [] as number[] };
	let last: ChatTurn | undefined;
	for (const [i, t] of script().entries()) {
		const options = { read: { maxTokenLimit: BUDGET }, budget: BUDGET, model: 'gpt-4o' };
		const t0 = performance.now();
		const turn = await ChatTurn.open({
			...options,
			memory: on,
			facts: {
				memory: facts,
				extract,
				tokenBudget: FACTS_BUDGET,
				threshold,
				source: { workflowId: 'wf', conversationId: 'on' },
			},
		});
		const added = await turn.save({ userContent: t.user, assistantContent: t.answer });
		(await turn.learn(added)) as LearnResult;
		const t1 = performance.now();
		if (!timed) continue;
		const plain = await ChatTurn.open({ ...options, memory: off });
		await plain.save({ userContent: t.user, assistantContent: t.answer });
		const t2 = performance.now();
		if (i >= 10) {
			ms.on.push(t1 - t0);
			ms.off.push(t2 - t1);
		}
		last = turn;
	}
	return { stats, ms, facts, last, storage, on };
}

/** The raw recall that carries the current facts: a recall section holding each one's evidence message. */
async function rawRecallOf(
	facts: Awaited<ReturnType<Facts['get']>>['facts'],
	memory: ConversationMemory,
) {
	const said = new Map((await memory.messages()).map((m) => [m.message_id, m.content]));
	const hits = facts.map(
		(x) =>
			({
				text: x.evidence.kind === 'quote' ? said.get(x.evidence.message_id) : x.text,
				capturedAt: x.valid_from,
				role: 'user',
			}) as SearchMatch,
	);
	return recallSection(hits, 1_000_000, counter);
}

/** A Memory Base holding every turn (the user's message and the answer), as long-term capture keeps them. */
async function baseOfEveryTurn(storage: LocalDiskStorage): Promise<MemoryBase> {
	const base = new MemoryBase({ storage, baseId: 'probe' });
	for (const [i, t] of script().entries())
		await base.capture({ sessionId: 's', runId: `t${i}`, texts: [t.user, t.answer] });
	return base;
}

/** What recall() (its defaults) brings for a general question: its tokens, and the evidence it holds. */
async function generalRecall(base: MemoryBase, evidence: string[]) {
	const r = await base.recall({ query: 'What do you know about me and my life?', sessionId: 's' });
	const held = evidence.filter((e) => r.section.includes(e.replace(/\s+/g, ' ').trim())).length;
	return { tokens: r.tokens, held };
}

/** Questions about what changed, asked of a recall over every turn: current value, an old one, or neither. */
async function probes(base: MemoryBase, current: string[]) {
	const out: string[] = [];
	for (const [q, values, re] of [
		['Where do I live now?', CITIES, /Lives in/],
		['What is my job?', JOBS, /Works as/],
	] as const) {
		const now = current.find((c) => re.test(c)) ?? '';
		const recalled = (await base.recall({ query: q, sessionId: 's' })).section;
		const has = values.filter((v) => recalled.includes(v.replace(/^an? /, '')));
		const right = has.some((v) => now.includes(v));
		out.push(
			`| "${q}" | ${now} | ${has.length ? has.join(', ') : 'none'} | ${right ? 'yes' : 'no'}${has.length > 1 ? ' (with older values)' : ''} |`,
		);
	}
	return out;
}

async function main(): Promise<void> {
	const start = loadLine();
	const turns = script();
	const told = turns.filter((t) => t.fact).length;
	const rows: string[] = [];
	for (const threshold of [400, undefined, 1600]) {
		const { stats } = await run(threshold, false);
		const per = 100 / TURNS;
		rows.push(
			`| ${threshold ?? '800 (default)'} | ${f(stats.calls * per, 1)} | ${Math.round(stats.requestTokens * per).toLocaleString('en')} | ${Math.round(stats.answerTokens * per).toLocaleString('en')} | ${f(TURNS / Math.max(1, stats.calls), 1)} |`,
		);
	}
	const timedRun = await run(undefined, true);
	const { ms, facts, storage, on } = timedRun;
	const now = await facts.get();
	const { doc } = await facts.read();
	const section = facts.section(doc, FACTS_BUDGET, counter);
	const raw = await rawRecallOf(now.facts, on);
	const added =
		ms.on.reduce((a, b) => a + b, 0) / ms.on.length -
		ms.off.reduce((a, b) => a + b, 0) / ms.off.length;
	const base = await baseOfEveryTurn(storage);
	const general = await generalRecall(
		base,
		raw.hits.map((h) => h.text),
	);
	const probeRows = await probes(
		base,
		now.facts.map((x) => x.text),
	);
	const all = await facts.get({ all: true });
	console.log(`\n### Long-term facts (bench/facts.ts)\n`);
	console.log(
		`A scripted conversation of ${TURNS} chat-length turns (median user message ${median(turns.map((t) => counter.count(t.user)))} tokens, answer ${median(turns.map((t) => counter.count(t.answer)))}); the user says something lasting in ${told} of them. Deterministic stand-in extractor, in-process.\n`,
	);
	console.log(
		'| threshold (tokens) | extraction calls per 100 turns | request tokens per 100 turns | answer tokens per 100 turns | turns per call |',
	);
	console.log('|---:|---:|---:|---:|---:|');
	for (const r of rows) console.log(r);
	console.log(
		`\n| turn | median ms (local disk) |\n|---|---:|\n| without facts (open, save) | ${f(median(ms.off))} |\n| with facts (open, save, learn) | ${f(median(ms.on))} |\n| **added per turn, amortized (mean difference)** | **${f(added)}** |`,
	);
	console.log(
		`\nAt turn ${TURNS}: ${now.facts.length} current facts (${all.facts.length - now.facts.length} superseded or retired, kept in the document, never shown).\n`,
	);
	console.log('| what carries the current facts | tokens | facts held |\n|---|---:|---:|');
	console.log(
		`| facts section (Facts Token Budget ${FACTS_BUDGET}) | ${section.tokens} | ${section.facts.length} of ${now.facts.length} |`,
	);
	console.log(
		`| raw recall of their evidence messages (all of them, no budget) | ${raw.tokens} | ${raw.hits.length} of ${now.facts.length} |`,
	);
	console.log(
		`| recall() with its defaults (5 entries, 500 tokens) for "What do you know about me and my life?" | ${general.tokens} | ${general.held} of ${now.facts.length} |`,
	);
	console.log(
		'\n| question (recall() defaults over every turn) | current fact | values recalled | current value recalled |\n|---|---|---|---|',
	);
	for (const p of probeRows) console.log(p);
	console.log(`\n${machineLine(`${loadLine()} at the end, ${start} at the start`)}`);
}

if (require.main === module)
	main().catch((e: unknown) => {
		console.error(e);
		process.exit(1);
	});
