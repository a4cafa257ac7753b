/**
 * Recall benchmark on real long conversations (not a test): prints markdown tables.
 *
 * What: how often Memory Base search finds the turns a question's answer rests on, in the LoCoMo
 * conversations (Maharana et al., ACL 2024: two people chatting over 19–32 sessions, 369–680 turns,
 * with questions whose evidence turns are marked), against plain baselines on the same texts.
 *
 * Data: LOCOMO_DATA (default ../shared/data/locomo-dev/locomo-dev.json next to the repository: the
 * development half, 5 of the 10 conversations). Licence CC BY-NC 4.0: it is read from there and never
 * copied into the repository or the package. Questions of categories 1–4 (multi-hop, temporal,
 * open-domain, single-hop); category 5 (adversarial: no answer in the conversation) is not asked.
 * Evidence IDs are split on ";", "," and white space, "D:11:26" is read as "D11:26", IDs naming no
 * turn are dropped, and a question left without evidence is skipped (all counted below the tables).
 *
 * Method: one Memory Base per conversation and embedding, on local disk. Each turn is captured as one
 * message "<speaker> (<session date>): <text>", in session order, with its dia_id as run ID (the
 * ":" in "D3:13" is a valid ID character, so it is kept) and as metadata; the conversation is one
 * session; then one sync. Each question is searched in its conversation, top 10: default mode
 * (hybrid, since an embedder is set), hybrid named, lexical and vector. Baselines on the same texts,
 * outside the package's index: BM25 (k1 1.2, b 0.75, the conversation's statistics) with the
 * package's tokenizer, BM25 on plain lower-cased words, and exact cosine (Float64 brute force over
 * the embedder's own vectors). Metrics: Recall@k (share of the question's evidence turns in the top
 * k, averaged), hit@10 (any evidence turn in the top 10), MRR (first evidence turn within the top 10),
 * Recall@10 per category, and the median o200k_base tokens of the 10 texts returned. Vector search
 * against exact cosine: the share of identical top-10 lists, strictly and up to swaps of entries whose
 * exact cosines differ by < 1e-6 (the hashed features tie often: then the order is arbitrary).
 *
 * Embedding models, each with its own bases, from weak to strong (recall-locomo-models.ts): the tests'
 * hashed word features, GloVe word vectors when LLM_MEMORY_WORD_VECTORS names them, and "linked"
 * stand-ins whose vector ranking is made stronger step by step (linked-vectors.ts: they know the
 * answers, so they stand in for a good model's strength, not for its behaviour). Per model: the default
 * search's fusion weights (median vector weight) and the bars of recall-locomo-bars.ts.
 * Knobs: LOCOMO_CONVERSATIONS (sample IDs, comma-separated; default all), LOCOMO_EMBEDDINGS
 * (hash,glove,linked), LOCOMO_STRENGTHS (linked strengths, e.g. 0.2,0.3,hash:0.7).
 */
import { rmSync } from 'node:fs';
import { relative, resolve } from 'node:path';

import { LocalDiskStorage, MemoryBase, TiktokenCounter, tokenize } from '../src/internal';
import type { Embedder, SearchMode } from '../src/internal';
import { tempDir } from '../test/support/storages';
import { Bm25, exactCosine, plainWords, sameUpToTies } from './baselines';
import { autoRecall, emptyAutoRecall } from './recall-locomo-auto';
import type { AutoRecall, SmallTalkTally } from './recall-locomo-auto';
import { autoBars, bars } from './recall-locomo-bars';
import { BM25, K, mean, score } from './recall-locomo-score';
import type { Asked } from './recall-locomo-score';
import { models } from './recall-locomo-models';
import type { Model } from './recall-locomo-models';
import { CATEGORIES, DEFAULT_LOCOMO_DATA, loadLocomo, turnText } from './locomo-data';
import type { Cleaning, Conversation } from './locomo-data';
import { loadLine, machineLine, median } from './stats';

const counter = new TiktokenCounter('o200k_base');
const f = (x: number, d = 3) => (Number.isNaN(x) ? '–' : x.toFixed(d));
const list = (name: string) =>
	(process.env[name] ?? '')
		.split(',')
		.map((s) => s.trim())
		.filter((s) => s !== '');

/** The package's rankings: search() with each mode; undefined is the default (hybrid here). */
const SEARCHES: Array<[string, SearchMode | undefined]> = [
	['default search', undefined],
	['hybrid', 'hybrid'],
	['lexical', 'lexical'],
	['vector', 'vector'],
];
const BM25_PLAIN = 'BM25, plain words';
const EXACT = 'exact cosine';

const tokenCache = new Map<string, number>();
const tokensOf = (texts: string[]) =>
	texts.reduce((sum, t) => {
		let n = tokenCache.get(t);
		if (n === undefined) tokenCache.set(t, (n = counter.count(t)));
		return sum + n;
	}, 0);

/** Captures the conversation turn by turn (one message each), then syncs once. */
async function buildBase(
	c: Conversation,
	embedder: Embedder,
): Promise<{ base: MemoryBase; root: string }> {
	const root = tempDir('recall-locomo');
	const base = new MemoryBase({
		storage: new LocalDiskStorage({ root }),
		baseId: 'locomo',
		embedder,
		autoCapture: false,
		embeddingBatchSize: 256,
	});
	for (const t of c.turns)
		await base.capture({
			sessionId: c.sampleId,
			runId: t.diaId,
			messages: [{ text: turnText(t), metadata: { diaId: t.diaId } }],
		});
	await base.sync();
	return { base, root };
}

/** Asks every question of one conversation: the package's four searches and the three baselines. */
async function askAll(c: Conversation, base: MemoryBase, embedder: Embedder): Promise<Asked[]> {
	const texts = c.turns.map(turnText);
	const ids = c.turns.map((t) => t.diaId);
	const bm25 = new Bm25(texts, tokenize);
	const plain = new Bm25(texts, plainWords);
	const vectors = await embedder.embedDocuments(texts);
	const out: Asked[] = [];
	for (const q of c.questions) {
		const lists = new Map<string, string[]>();
		const tokens = new Map<string, number>();
		let vectorWeight: number | undefined;
		for (const [name, mode] of SEARCHES) {
			const report = await base.searchReport(q.text, { sessionId: c.sampleId, k: K, mode });
			const hits = report.matches;
			const found = hits.map((h) => String(h.metadata?.diaId ?? h.runId));
			lists.set(name, found);
			tokens.set(name, tokensOf(hits.map((h) => h.text)));
			if (mode === undefined) vectorWeight = report.fusion.weights?.vectors;
		}
		const exact = exactCosine(vectors, await embedder.embedQuery(q.text), K);
		const baselines: Array<[string, number[]]> = [
			[BM25, bm25.rank(q.text, K)],
			[BM25_PLAIN, plain.rank(q.text, K)],
			[EXACT, exact.top],
		];
		for (const [name, top] of baselines) {
			lists.set(
				name,
				top.map((i) => ids[i]),
			);
			tokens.set(name, tokensOf(top.map((i) => texts[i])));
		}
		const vector = lists.get('vector')!.map((id) => ids.indexOf(id));
		out.push({
			q,
			lists,
			tokens,
			vectorSame: vector.join() === exact.top.join(),
			vectorTies: sameUpToTies(vector, exact.top, exact.scores),
			vectorWeight,
		});
	}
	return out;
}

/** The rankings shown: hybrid only when some question's list differs from the default search's. */
function shown(asked: Asked[]): string[] {
	const same = asked.every(
		(a) => a.lists.get('hybrid')!.join() === a.lists.get('default search')!.join(),
	);
	return [
		...SEARCHES.map(([n]) => n).filter((n) => n !== 'hybrid' || !same),
		BM25,
		BM25_PLAIN,
		EXACT,
	];
}

function table(asked: Asked[]): string[] {
	const cats = Object.keys(CATEGORIES).map(Number);
	const counts = cats.map((c) => asked.filter((a) => a.q.category === c).length);
	const lines = [
		`| ranking | R@1 | R@5 | R@10 | hit@10 | MRR | ${cats.map((c, i) => `R@10 ${CATEGORIES[c]} (${counts[i]})`).join(' | ')} | tokens, top 10 (median) |`,
		`|---|${'---:|'.repeat(5 + cats.length + 1)}`,
	];
	for (const name of shown(asked)) {
		const s = score(asked, name);
		const byCat = cats.map((c) => f(s.byCategory.get(c)!)).join(' | ');
		lines.push(
			`| ${name} | ${f(s.at[1])} | ${f(s.at[5])} | ${f(s.at[10])} | ${f(s.hit)} | ${f(s.mrr)} | ${byCat} | ${s.tokens} |`,
		);
	}
	return lines;
}

/** Automatic recall against the default search's top 5, questions with nothing, and pleasantries. */
function autoLine(asked: Asked[], auto: AutoRecall): string {
	const tally = (name: string, t: SmallTalkTally) => {
		const leaks = [...t.leaks].map(([text, n]) => `"${text}" (${n})`).join(', ');
		return (
			`${name} (${t.asked}: 50 × conversations): ${t.recalled} recalled something` +
			` (the small-talk word list answered ${t.byList} before any search)${leaks ? `: ${leaks}` : ''}.`
		);
	};
	return (
		`Automatic recall (recall() with its defaults: 5 entries, 500 tokens, half-life 180 days): it held ${f(mean(auto.held))} of the evidence ` +
		`(the default search's R@5: ${f(score(asked, 'default search').at[5])}), in ${median(auto.tokens)} tokens (median); ` +
		`${auto.questionsEmpty} of ${auto.questions} questions recalled nothing. ` +
		tally('Pleasantries in twelve languages', auto.pleasantries) +
		' ' +
		tally('The second fifty, never used to tune the floor', auto.more)
	);
}

/** The median vector weight of the default search, with its quartiles. */
function weightLine(asked: Asked[]): string {
	const w = asked.map((a) => a.vectorWeight).filter((x): x is number => x !== undefined);
	if (w.length === 0) return '';
	const q = (p: number) => [...w].sort((a, b) => a - b)[Math.floor(w.length * p)];
	return `Default search's vector weight: median ${f(q(0.5), 2)} (quartiles ${f(q(0.25), 2)}–${f(q(0.75), 2)}).`;
}

/** Builds each conversation's base with the model, asks its questions, deletes the base. */
async function run(
	conversations: Conversation[],
	m: Model,
): Promise<{ asked: Asked[]; auto: AutoRecall; buildMs: number; askMs: number }> {
	const asked: Asked[] = [];
	const auto = emptyAutoRecall();
	let buildMs = 0;
	let askMs = 0;
	for (const c of conversations) {
		console.error(`LoCoMo recall: ${m.label}, ${c.sampleId}…`);
		const t0 = performance.now();
		const embedder = m.embedder(c);
		const { base, root } = await buildBase(c, embedder);
		const t1 = performance.now();
		try {
			asked.push(...(await askAll(c, base, embedder)));
			await autoRecall(c, base, auto);
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
		buildMs += t1 - t0;
		askMs += performance.now() - t1;
	}
	return { asked, auto, buildMs, askMs };
}

function describe(conversations: Conversation[], file: string): string {
	const turns = conversations.reduce((n, c) => n + c.turns.length, 0);
	const questions = conversations.reduce((n, c) => n + c.questions.length, 0);
	return (
		`LoCoMo (${file.endsWith('locomo-dev.json') ? 'development half, ' : ''}CC BY-NC 4.0, read from ${relative(resolve(__dirname, '..'), resolve(file))}): ` +
		`${conversations.length} conversation${conversations.length === 1 ? '' : 's'} (${conversations.map((c) => c.sampleId).join(', ')}), ` +
		`${turns.toLocaleString('en')} turns, ${questions} questions of categories 1–4. ` +
		`One base per conversation, one message per turn; search top ${K} in the conversation.`
	);
}

function cleaningLine(c: Cleaning): string {
	return (
		`Evidence IDs (questions of categories 1–4): ${c.rewritten} rewritten ("D:11:26" → "D11:26"), ` +
		`${c.dropped} dropped (no such turn); ${c.skipped} questions skipped (no evidence left); ` +
		`${c.adversarial} adversarial questions (category 5) not asked.`
	);
}

async function main(): Promise<void> {
	const startLoad = loadLine().replace('load ', '');
	const started = performance.now();
	const file = process.env.LOCOMO_DATA || DEFAULT_LOCOMO_DATA;
	const { conversations, cleaning } = loadLocomo(file, list('LOCOMO_CONVERSATIONS'));
	const out = [
		'\n### Memory Base recall on LoCoMo (real long conversations)\n',
		describe(conversations, file),
	];
	const barLines: string[] = [];
	const notes: string[] = [];
	for (const m of models(notes)) {
		const { asked, auto, buildMs, askMs } = await run(conversations, m);
		out.push(
			`\n#### ${m.label}\n`,
			...table(asked),
			'',
			weightLine(asked),
			'',
			autoLine(asked, auto),
			'',
			`Capture and sync ${f(buildMs / 1000, 1)} s, ${asked.length} questions × 4 searches and baselines, recall() of each question and small-talk message ${f(askMs / 1000, 1)} s.`,
		);
		barLines.push(...bars(asked, m), ...autoBars(auto, m));
	}
	out.push('', ...notes, cleaningLine(cleaning), '\nBars:\n', ...barLines);
	out.push(`\nWhole run ${f((performance.now() - started) / 1000, 1)} s.`);
	console.log(out.join('\n'));
	console.log(`\n${machineLine(`${loadLine()} at the end, ${startLoad} at the start`)}`);
}

if (require.main === module)
	main().catch((e: unknown) => {
		console.error(e);
		process.exit(1);
	});
