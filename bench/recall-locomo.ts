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
 * Stand-ins for an embedding model, each with its own bases: the tests' hashed word features
 * (TestEmbedder, 256 dimensions, what the fake model server's /v1/embeddings answers), and GloVe word
 * vectors (word-vectors.ts) when LLM_MEMORY_WORD_VECTORS names them.
 * Knobs: LOCOMO_CONVERSATIONS (sample IDs, comma-separated; default all), LOCOMO_EMBEDDINGS (hash,glove).
 */
import { rmSync } from 'node:fs';
import { relative, resolve } from 'node:path';

import { LocalDiskStorage, MemoryBase, TiktokenCounter, tokenize } from '../src/internal';
import type { Embedder, SearchMode } from '../src/internal';
import { TestEmbedder } from '../test/support/embeddings';
import { tempDir } from '../test/support/storages';
import { Bm25, exactCosine, plainWords, sameUpToTies } from './baselines';
import { autoRecall, emptyAutoRecall } from './recall-locomo-auto';
import type { AutoRecall } from './recall-locomo-auto';
import { CATEGORIES, DEFAULT_LOCOMO_DATA, loadLocomo, turnText } from './locomo-data';
import type { Cleaning, Conversation, Question } from './locomo-data';
import { loadLine, machineLine, median } from './stats';
import { WordVectorEmbedder, wordVectorsHome } from './word-vectors';

const K = 10;
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
const BM25 = 'BM25';
const BM25_PLAIN = 'BM25, plain words';
const EXACT = 'exact cosine';

interface Model {
	label: string;
	embedder: Embedder;
	glove: boolean;
}

/** One question's outcome: each ranking's top 10 (dia_ids, in order) and the tokens of its texts. */
interface Asked {
	q: Question;
	lists: Map<string, string[]>;
	tokens: Map<string, number>;
	/** The vector search's top 10 equals the exact cosine's: exactly, and up to near-ties. */
	vectorSame: boolean;
	vectorTies: boolean;
}

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
		for (const [name, mode] of SEARCHES) {
			const hits = await base.search(q.text, { sessionId: c.sampleId, k: K, mode });
			const found = hits.map((h) => String(h.metadata?.diaId ?? h.runId));
			lists.set(name, found);
			tokens.set(name, tokensOf(hits.map((h) => h.text)));
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
		});
	}
	return out;
}

interface Scores {
	at: Record<1 | 5 | 10, number>;
	hit: number;
	mrr: number;
	byCategory: Map<number, number>;
	tokens: number;
}

/** Recall@k: the share of the question's evidence turns among the first k. */
const recallAt = (top: string[], evidence: string[], k: number) =>
	evidence.filter((e) => top.slice(0, k).includes(e)).length / evidence.length;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

function score(asked: Asked[], name: string): Scores {
	const r = (k: number, set = asked) =>
		mean(set.map((a) => recallAt(a.lists.get(name)!, a.q.evidence, k)));
	const first = (a: Asked) => a.lists.get(name)!.findIndex((id) => a.q.evidence.includes(id));
	// NaN for a category with no question (a LOCOMO_CONVERSATIONS subset may have none): shown as "–".
	const byCategory = new Map<number, number>();
	for (const c of Object.keys(CATEGORIES).map(Number)) {
		const set = asked.filter((a) => a.q.category === c);
		byCategory.set(c, set.length === 0 ? NaN : r(K, set));
	}
	return {
		at: { 1: r(1), 5: r(5), 10: r(10) },
		hit: mean(asked.map((a) => (first(a) >= 0 ? 1 : 0))),
		mrr: mean(asked.map((a) => (first(a) >= 0 ? 1 / (first(a) + 1) : 0))),
		byCategory,
		tokens: median(asked.map((a) => a.tokens.get(name)!)),
	};
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

/** The bars, met or not, with the numbers they were judged on. */
function bars(asked: Asked[], m: Model): string[] {
	const verdict = (ok: boolean) => (ok ? '**met**' : '**not met**');
	const d = score(asked, 'default search');
	const lex = score(asked, 'lexical');
	const bm = score(asked, BM25);
	const same = mean(asked.map((a) => (a.vectorSame ? 1 : 0)));
	const ties = mean(asked.map((a) => (a.vectorTies ? 1 : 0)));
	const short = asked.filter((a) => a.lists.get('vector')!.length < K).length;
	const ks = [1, 5, 10] as const;
	const out = [
		`- ${m.label}: default search R@10 and R@1 ≥ BM25's: R@10 ${f(d.at[10])} against ${f(bm.at[10])}, R@1 ${f(d.at[1])} against ${f(bm.at[1])}: ${verdict(d.at[10] >= bm.at[10] && d.at[1] >= bm.at[1])}.`,
		`- ${m.label}: lexical ≥ BM25 at k = 1, 5, 10: ${ks.map((k) => `${f(lex.at[k])} against ${f(bm.at[k])}`).join(', ')}: ${verdict(ks.every((k) => lex.at[k] >= bm.at[k]))}.`,
		`- ${m.label}: vector top 10 identical to exact cosine in ≥ 99 % of questions (up to exact cosines within 1e-6 swapping): ${f(100 * ties, 1)} % (strictly identical: ${f(100 * same, 1)} %; fewer than ${K} results for ${short} questions): ${verdict(ties >= 0.99)}.`,
	];
	if (m.glove)
		out.push(
			`- ${m.label}: default search R@10 ≥ BM25's + 0.03: ${f(d.at[10])} against ${f(bm.at[10])} + 0.03: ${verdict(d.at[10] >= bm.at[10] + 0.03)}.`,
		);
	return out;
}

/** Automatic recall against the default search's top 5, and small talk. */
function autoLine(asked: Asked[], auto: AutoRecall): string {
	return (
		`Automatic recall (recall() with its defaults: 5 entries, 500 tokens, half-life 180 days): it held ${f(mean(auto.held))} of the evidence ` +
		`(the default search's R@5: ${f(score(asked, 'default search').at[5])}), in ${median(auto.tokens)} tokens (median). ` +
		`Small talk (${auto.smallTalk} messages, 50 per conversation): nothing injected for ${auto.smallTalkEmpty}` +
		(auto.smallTalkInjected.length
			? `; injected for: ${auto.smallTalkInjected.map((t) => `"${t}"`).join(', ')}.`
			: '.')
	);
}

function autoBars(asked: Asked[], auto: AutoRecall, m: Model): string[] {
	const verdict = (ok: boolean) => (ok ? '**met**' : '**not met**');
	const r5 = score(asked, 'default search').at[5];
	const share = auto.smallTalkEmpty / Math.max(1, auto.smallTalk);
	return [
		`- ${m.label}: automatic recall keeps the questions' R@5 within its default budget: ${f(mean(auto.held))} against ${f(r5)}: ${verdict(mean(auto.held) >= r5 - 1e-9)}.`,
		`- ${m.label}: small talk injects nothing for ≥ 90 %: ${f(100 * share, 1)} %: ${verdict(share >= 0.9)}.`,
	];
}

/** The embeddings asked for (LOCOMO_EMBEDDINGS), GloVe only when installed. */
function models(notes: string[]): Model[] {
	const wanted = list('LOCOMO_EMBEDDINGS');
	const want = (name: string) => wanted.length === 0 || wanted.includes(name);
	const out: Model[] = [];
	if (want('hash')) out.push({ label: 'hashed words', embedder: new TestEmbedder(), glove: false });
	if (want('glove')) {
		const home = wordVectorsHome();
		if (home)
			out.push({
				label: 'GloVe word vectors',
				embedder: new WordVectorEmbedder(home),
				glove: true,
			});
		else notes.push('GloVe word vectors not installed (LLM_MEMORY_WORD_VECTORS): skipped.');
	}
	return out;
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
		const { base, root } = await buildBase(c, m.embedder);
		const t1 = performance.now();
		try {
			asked.push(...(await askAll(c, base, m.embedder)));
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
			autoLine(asked, auto),
			'',
			`Capture and sync ${f(buildMs / 1000, 1)} s, ${asked.length} questions × 4 searches and baselines, recall() of each question and small-talk message ${f(askMs / 1000, 1)} s.`,
		);
		barLines.push(...bars(asked, m), ...autoBars(asked, auto, m));
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
