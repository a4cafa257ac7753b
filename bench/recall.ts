/**
 * Recall benchmark (not a test): prints markdown tables.
 * 1. Quality: the generated conversations of recall-data.ts (several users, dozens of sessions each,
 *    thousands of turns, planted facts with paraphrased questions) are captured into a Memory Base on
 *    local disk, turn pair by turn pair, as automatic capture does (user and assistant message in one
 *    stride, with role, user ID and the chat message ID as metadata), then synced into the embedded
 *    vector index. Each question is searched in its user's scope (userId, as automatic recall does),
 *    top 10, three ways: lexical only, vector only, and hybrid with recall()'s recency half-life
 *    (RECALL_HALF_LIFE_DAYS, "now" = when the questions are asked); hybrid without a half-life is shown
 *    too. Recall@k: the evidence turn is among the first k. Two deterministic embeddings, each in a
 *    base of its own: the stand-in of the tests and e2e runs (fakeEmbedding of demo/model-server.ts:
 *    hashed word features, 256 dimensions), which matches words, not meanings, and pre-trained GloVe
 *    word vectors averaged per text (word-vectors.ts), which know that "home" and "live" are close:
 *    a small stand-in for a real embedding model, used when scripts/bench.sh has installed them.
 *    Time: capture() stamps each message with the clock, so the clock is set to each turn's time
 *    while it is captured (node:test's MockTimers, Date only: timers and performance.now stay real).
 *    Everything else is the production path: capture(), the lexical index updated at capture, sync(),
 *    search() and recall(). The clock is restored before the sync and the searches.
 * 2. Tokens: what recall() puts before a model call (5 entries at most, budget 500 tokens) against the
 *    whole history of the user, both counted with TiktokenCounter (o200k_base).
 * 3. Latency (recall-latency.ts): hybrid, lexical and vector search at 1,000 / 10,000 / 100,000 chunks.
 * Knobs: RECALL_BENCH_USERS (8), RECALL_BENCH_SESSIONS (sessions per user, 40), RECALL_BENCH_SEED,
 * RECALL_BENCH_SIZES (1000,10000,100000; empty: no latency table), RECALL_BENCH_QUERIES (100).
 */
import { rmSync } from 'node:fs';
import { mock } from 'node:test';

import {
	LocalDiskStorage,
	MemoryBase,
	RECALL_HALF_LIFE_DAYS,
	TiktokenCounter,
} from '../src/internal';
import type { Embedder, SearchMatch, SearchOptions } from '../src/internal';
import { TestEmbedder } from '../test/support/embeddings';
import { tempDir } from '../test/support/storages';
import { generate } from './recall-data';
import type { Dataset, Question } from './recall-data';
import { latencyTables } from './recall-latency';
import { loadLine, machineLine, median, percentile } from './stats';
import { WordVectorEmbedder, wordVectorsHome } from './word-vectors';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const K = 10;
/** Candidates each ranking hands to the fusion for a top 10 (search.ts). */
const CANDIDATES = 50;
const counter = new TiktokenCounter('o200k_base');
const f = (x: number, d = 1) => x.toFixed(d);
const pct = (n: number, of: number) => (of === 0 ? '–' : `${f((100 * n) / of)} %`);

/** Captures the dataset turn pair by turn pair, each at its own time, then syncs. */
export async function buildBase(
	data: Dataset,
	embedder: Embedder = new TestEmbedder(),
): Promise<{ base: MemoryBase; root: string; ms: number }> {
	const root = tempDir('recall-bench');
	const base = new MemoryBase({
		storage: new LocalDiskStorage({ root }),
		baseId: 'recall',
		embedder,
		autoCapture: false,
		embeddingBatchSize: 256,
	});
	const strides = data.sessions.flatMap((s) =>
		s.turns.flatMap((t, i) => (i % 2 === 0 ? [{ s, pair: s.turns.slice(i, i + 2) }] : [])),
	);
	strides.sort((a, b) => a.pair[1].at.getTime() - b.pair[1].at.getTime());
	const t0 = performance.now();
	mock.timers.enable({ apis: ['Date'], now: strides[0].pair[1].at.getTime() });
	try {
		for (const { s, pair } of strides) {
			mock.timers.setTime(pair[1].at.getTime());
			await base.capture({
				sessionId: s.id,
				userId: s.userId,
				runId: `run-${pair[0].id.replace('/', '-')}`,
				messages: pair.map((t) => ({ text: t.text, role: t.role, metadata: { messageId: t.id } })),
			});
		}
	} finally {
		mock.timers.reset();
	}
	await base.sync();
	return { base, root, ms: performance.now() - t0 };
}

interface Ranking {
	name: string;
	options: SearchOptions;
	/** The base searched (one per embedding model); recall() and the candidates use the first. */
	base: MemoryBase;
}

/** Where a turn is in the results (1 = first); Infinity when absent. */
function rankOf(hits: SearchMatch[], turnId: string | undefined): number {
	const i = hits.findIndex((h) => h.metadata?.messageId === turnId);
	return i < 0 ? Infinity : i + 1;
}

interface Outcome {
	q: Question;
	/** Rank of the evidence and of the older statement, per ranking. */
	ranks: Map<string, { evidence: number; older: number }>;
	recallTokens: number;
	recallHasEvidence: boolean;
	/** The evidence was among the candidates either ranking hands to the fusion (top 50). */
	candidate: boolean;
}

async function measure(data: Dataset, rankings: Ranking[]): Promise<Outcome[]> {
	const base = rankings[0].base;
	const out: Outcome[] = [];
	for (const q of data.questions) {
		const ranks = new Map<string, { evidence: number; older: number }>();
		for (const r of rankings) {
			const hits = await r.base.search(q.text, { ...r.options, k: K, userId: q.userId });
			ranks.set(r.name, { evidence: rankOf(hits, q.evidence), older: rankOf(hits, q.older) });
		}
		const recalled = await base.recall({ query: q.text, userId: q.userId, now: data.end, counter });
		const deep = { k: CANDIDATES, userId: q.userId };
		const [lexical, vector] = await Promise.all([
			base.search(q.text, { ...deep, mode: 'lexical' }),
			base.search(q.text, { ...deep, mode: 'vector' }),
		]);
		out.push({
			q,
			ranks,
			recallTokens: recalled.tokens,
			recallHasEvidence: recalled.hits.some((h) => h.metadata?.messageId === q.evidence),
			candidate:
				rankOf(lexical, q.evidence) <= CANDIDATES || rankOf(vector, q.evidence) <= CANDIDATES,
		});
	}
	return out;
}

function recallTable(outcomes: Outcome[], rankings: Ranking[]): string[] {
	const lines = [
		'| questions | n | ranking | Recall@1 | Recall@5 | Recall@10 |',
		'|---|---:|---|---:|---:|---:|',
	];
	const subsets: Array<[string, (o: Outcome) => boolean]> = [
		['all', () => true],
		['no word shared with the evidence', (o) => o.q.lowOverlap],
		['updated facts (newer statement)', (o) => o.q.older !== undefined],
	];
	const ceiling: string[] = [];
	for (const [label, keep] of subsets) {
		const set = outcomes.filter(keep);
		ceiling.push(`${pct(set.filter((o) => o.candidate).length, set.length)} (${label})`);
		for (const r of rankings) {
			const at = (k: number) =>
				pct(set.filter((o) => o.ranks.get(r.name)!.evidence <= k).length, set.length);
			lines.push(`| ${label} | ${set.length} | ${r.name} | ${at(1)} | ${at(5)} | ${at(10)} |`);
		}
	}
	lines.push(
		'',
		`Evidence among the ${CANDIDATES} candidates of either ranking (what any fusion of the two could reach at most): ${ceiling.join(', ')}.`,
	);
	return lines;
}

/** The search returned the fact: the newer or the older statement is in the top K. */
const recalled = (x: { evidence: number; older: number }) => x.evidence <= K || x.older <= K;

function updatedTable(outcomes: Outcome[], rankings: Ranking[]): string[] {
	const set = outcomes.filter((o) => o.q.older !== undefined);
	const lines = [
		'| ranking | newer above the older (all) | newer above the older, where either is in the top 10 | newer first | older first | older in top 10, newer not |',
		'|---|---:|---:|---:|---:|---:|',
	];
	for (const r of rankings) {
		const ranks = set.map((o) => o.ranks.get(r.name)!);
		const count = (p: (x: { evidence: number; older: number }) => boolean) =>
			pct(ranks.filter(p).length, set.length);
		const found = ranks.filter(recalled);
		const ordered = pct(found.filter((x) => x.evidence < x.older).length, found.length);
		lines.push(
			`| ${r.name} | ${count((x) => x.evidence < x.older)} | ${ordered} (of ${found.length}) | ${count((x) => x.evidence === 1)} | ${count((x) => x.older === 1)} | ${count((x) => x.older <= K && x.evidence > K)} |`,
		);
	}
	return lines;
}

function tokenTable(outcomes: Outcome[], data: Dataset): string[] {
	const full = data.users.map((u) =>
		counter.count(
			data.sessions
				.filter((s) => s.userId === u)
				.flatMap((s) => s.turns.map((t) => `${t.role}: ${t.text}`))
				.join('\n'),
		),
	);
	const recall = outcomes.map((o) => o.recallTokens);
	const held = outcomes.filter((o) => o.recallHasEvidence).length;
	return [
		'| what goes into the prompt | median tokens | p95 | min – max |',
		'|---|---:|---:|---:|',
		`| recall() section (5 entries at most, budget 500) | ${median(recall)} | ${percentile(recall, 0.95)} | ${Math.min(...recall)} – ${Math.max(...recall)} |`,
		`| full context: every turn of the user | ${median(full).toLocaleString('en')} | ${percentile(full, 0.95).toLocaleString('en')} | ${Math.min(...full).toLocaleString('en')} – ${Math.max(...full).toLocaleString('en')} |`,
		'',
		`The recall section held the evidence turn for ${pct(held, outcomes.length)} of the questions, at ${f((100 * median(recall)) / median(full), 2)} % of the full context's tokens (medians).`,
	];
}

/** The recall targets, met or not, for each embedding model's hybrid ranking (with the half-life). */
function targets(outcomes: Outcome[], models: Model[]): string[] {
	const at10 = (name: string) =>
		(100 * outcomes.filter((o) => o.ranks.get(name)!.evidence <= K).length) / outcomes.length;
	const updated = outcomes.filter((o) => o.q.older !== undefined);
	const share = (
		name: string,
		p: (x: { evidence: number; older: number }) => boolean,
		of = (_: { evidence: number; older: number }) => true,
	) => {
		const set = updated.map((o) => o.ranks.get(name)!).filter(of);
		return (100 * set.filter(p).length) / set.length;
	};
	const verdict = (ok: boolean) => (ok ? '**met**' : '**not met**');
	return models.flatMap((m) => {
		const hybrid = `hybrid, half-life ${RECALL_HALF_LIFE_DAYS} d (${m.label})`;
		const best = Math.max(at10(LEXICAL), at10(`vector only (${m.label})`));
		const ordered = share(hybrid, (x) => x.evidence < x.older, recalled);
		const above = share(hybrid, (x) => x.evidence < x.older);
		const first = share(hybrid, (x) => x.evidence === 1);
		return [
			`- ${m.label}: hybrid Recall@10 ≥ the better single ranking + 5 points: ${f(at10(hybrid))} % against ${f(best)} % + 5: ${verdict(at10(hybrid) >= best + 5)}.`,
			`- ${m.label}: updated facts, the newer statement above the older in ≥ 90 % of the questions whose fact is in the top 10: ${f(ordered)} %: ${verdict(ordered >= 90)}. Over all updated-fact questions, misses counted as failures: ${f(above)} %; the newer statement first of all results: ${f(first)} %.`,
		];
	});
}

function describe(data: Dataset, ms: number): string {
	const turns = data.sessions.reduce((n, s) => n + s.turns.length, 0);
	const hist = new Map<string, number>();
	for (const q of data.questions) {
		const key = q.overlap >= 2 ? '2+' : String(q.overlap);
		hist.set(key, (hist.get(key) ?? 0) + 1);
	}
	const shares = ['0', '1', '2+'].map((k) => `${hist.get(k) ?? 0} share ${k}`).join(', ');
	return (
		`${data.users.length} users, ${data.sessions.length} sessions, ${turns.toLocaleString('en')} turns over ten months; ` +
		`${data.questions.length} questions (content words shared with the evidence: ${shares}); ` +
		`captured pair by pair and synced in ${f(ms / 1000)} s. Search: top ${K}, one user's scope.`
	);
}

const LEXICAL = 'lexical only';

/** An embedding model the benchmark builds a base with. */
interface Model {
	label: string;
	embedder: Embedder;
}

/** Word vectors when installed (scripts/bench.sh does), and always the tests' hashed word features. */
function models(): Model[] {
	const home = wordVectorsHome();
	const hashed = { label: 'hashed words', embedder: new TestEmbedder() };
	if (!home) {
		console.error(
			'Recall benchmark: word vectors not installed (LLM_MEMORY_WORD_VECTORS); hashed words only.',
		);
		return [hashed];
	}
	return [{ label: 'word vectors', embedder: new WordVectorEmbedder(home) }, hashed];
}

async function qualityTables(): Promise<string[]> {
	const data = generate({
		seed: env('RECALL_BENCH_SEED', 20250106),
		users: env('RECALL_BENCH_USERS', 8),
		sessionsPerUser: env('RECALL_BENCH_SESSIONS', 40),
	});
	const halfLife = { halfLifeDays: RECALL_HALF_LIFE_DAYS, now: data.end };
	const rankings: Ranking[] = [];
	const roots: string[] = [];
	let ms = 0;
	const used = models();
	for (const m of used) {
		const built = await buildBase(data, m.embedder);
		roots.push(built.root);
		ms ||= built.ms;
		const base = built.base;
		if (rankings.length === 0) rankings.push({ name: LEXICAL, options: { mode: 'lexical' }, base });
		rankings.push(
			{ name: `vector only (${m.label})`, options: { mode: 'vector' }, base },
			{
				name: `hybrid, half-life ${RECALL_HALF_LIFE_DAYS} d (${m.label})`,
				options: { mode: 'hybrid', ...halfLife },
				base,
			},
			{ name: `hybrid, no half-life (${m.label})`, options: { mode: 'hybrid' }, base },
		);
	}
	const outcomes = await measure(data, rankings);
	for (const root of roots) rmSync(root, { recursive: true, force: true });
	return [
		'\n### Memory Base recall: evidence turn found (generated conversations)\n',
		describe(data, ms),
		'',
		...recallTable(outcomes, rankings),
		'\n### Memory Base recall: updated facts (the newer statement should rank first)\n',
		...updatedTable(outcomes, rankings),
		'\n### Memory Base recall: prompt tokens, recall against full context\n',
		...tokenTable(outcomes, data),
		'\nTargets:\n',
		...targets(outcomes, used),
	];
}

if (require.main === module)
	(async () => {
		const startLoad = loadLine().replace('load ', '');
		console.error('Recall benchmark: quality…');
		const quality = await qualityTables();
		console.error('Recall benchmark: latency…');
		const latency = await latencyTables();
		console.log([...quality, ...latency].join('\n'));
		console.log(`\n${machineLine(`${loadLine()} at the end, ${startLoad} at the start`)}`);
	})().catch((e: unknown) => {
		console.error(e);
		process.exit(1);
	});
