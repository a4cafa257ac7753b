/**
 * Recall over facts on LoCoMo (not a test): does indexing facts beside the raw turns raise recall?
 *
 * Data and questions as bench/recall-locomo.ts (the development half, read from outside the
 * repository, CC BY-NC 4.0; categories 1–4). No model: the facts are made deterministically from the
 * turns themselves, one per turn, never from a question or an answer: the turn's first sentence (at
 * least 8 characters) is the quote, and the fact is that sentence in the third person (the speaker's
 * name for "I", "my", "me", …). A fact is captured as `<fact> ("<quote>")` with role "fact", linked to
 * its turn (metadata.evidence = the turn's ID), five turns after its turn (as batched extraction
 * would), in the same conversation. A search that hits a fact counts as finding its evidence turn,
 * found through the link (MemoryBase.withEvidence); repeats of a turn count once.
 *
 * Bases, per conversation and embedding: (1) the turns only, exactly as recall-locomo.ts builds them
 * (facts off); (2) the turns and a fact for each turn that is the evidence of some question (what the
 * task asked for; biased upward: only turns that answer a question get a second chance to be found);
 * (3) the turns and a fact for every turn (the unbiased version: an extractor that keeps something of
 * every turn). Default search, top 10 after mapping (searched 30 deep).
 * Knobs: LOCOMO_DATA, LOCOMO_CONVERSATIONS, LOCOMO_EMBEDDINGS (hash,glove; GloVe needs
 * LLM_MEMORY_WORD_VECTORS as recall-locomo.ts).
 */
import { rmSync } from 'node:fs';

import { LocalDiskStorage, MemoryBase } from '../src/internal';
import type { Embedder, SearchMatch } from '../src/internal';
import { TestEmbedder } from '../test/support/embeddings';
import { tempDir } from '../test/support/storages';
import { CATEGORIES, DEFAULT_LOCOMO_DATA, loadLocomo, turnText } from './locomo-data';
import type { Conversation, Turn } from './locomo-data';
import { loadLine, machineLine } from './stats';
import { WordVectorEmbedder, wordVectorsHome } from './word-vectors';

const K = 10;
const DEPTH = 30;
/** Turns between a turn and the capture of its fact (batched extraction). */
const DELAY = 5;
const f = (x: number) => x.toFixed(3);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const list = (name: string) =>
	(process.env[name] ?? '')
		.split(',')
		.map((s) => s.trim())
		.filter(Boolean);

type Variant = 'turns only' | 'facts of evidence turns' | 'facts of every turn';
const VARIANTS: Variant[] = ['turns only', 'facts of evidence turns', 'facts of every turn'];

/** The fact made of a turn: its first sentence, in the third person. */
export function factOf(t: Turn): { text: string; quote: string } {
	const sentences = t.text.split(/(?<=[.!?])\s+/);
	const quote = sentences.find((s) => s.trim().length >= 8)?.trim() ?? t.text.trim();
	const name = t.speaker;
	const text = quote
		.replace(/\bI'm\b/g, `${name} is`)
		.replace(/\bI've\b/g, `${name} has`)
		.replace(/\bI'll\b/g, `${name} will`)
		.replace(/\bI\b/g, name)
		.replace(/\b[Mm]y\b/g, `${name}'s`)
		.replace(/\b[Mm]ine\b/g, `${name}'s`)
		.replace(/\b(me|myself)\b/g, name);
	return { text, quote };
}

async function build(c: Conversation, embedder: Embedder, variant: Variant) {
	const root = tempDir('locomo-facts');
	const base = new MemoryBase({
		storage: new LocalDiskStorage({ root }),
		baseId: 'locomo',
		embedder,
		autoCapture: false,
		embeddingBatchSize: 256,
	});
	const evidence = new Set(c.questions.flatMap((q) => q.evidence));
	const wanted = (t: Turn) =>
		variant === 'facts of every turn' ||
		(variant === 'facts of evidence turns' && evidence.has(t.diaId));
	const pending: Array<{ at: number; turn: Turn }> = [];
	let n = 0;
	const flush = async (upTo: number) => {
		while (pending.length > 0 && pending[0].at <= upTo) {
			const { turn } = pending.shift() as { turn: Turn };
			const fact = factOf(turn);
			await base.capture({
				sessionId: c.sampleId,
				runId: `fact:${turn.diaId}`,
				messages: [
					{
						text: `${fact.text} ("${fact.quote}")`,
						role: 'fact',
						metadata: { fact: `f${++n}`, evidence: turn.diaId },
					},
				],
			});
		}
	};
	for (const [i, t] of c.turns.entries()) {
		await base.capture({
			sessionId: c.sampleId,
			runId: t.diaId,
			messages: [{ text: turnText(t), metadata: { diaId: t.diaId, messageId: t.diaId } }],
		});
		if (variant !== 'turns only' && wanted(t)) pending.push({ at: i + DELAY, turn: t });
		await flush(i);
	}
	await flush(Number.POSITIVE_INFINITY);
	await base.sync();
	return { base, root, facts: n };
}

interface Outcome {
	top: string[];
	/** Fact hits in the top 10, and those whose evidence turn the link found. */
	factHits: number;
	linked: number;
}

/** The top 10 turns of a search: a fact stands for its evidence turn, a repeat counts once. */
async function ask(base: MemoryBase, c: Conversation, query: string): Promise<Outcome> {
	const hits = await base.withEvidence(
		await base.search(query, { sessionId: c.sampleId, k: DEPTH }),
	);
	const top: string[] = [];
	let factHits = 0;
	let linked = 0;
	for (const h of hits as Array<SearchMatch & { evidence?: { chatMessageId: string } }>) {
		const isFact = h.role === 'fact';
		const id = isFact ? h.evidence?.chatMessageId : String(h.metadata?.diaId ?? h.runId);
		if (isFact && top.length < K) {
			factHits++;
			if (h.evidence) linked++;
		}
		if (id && !top.includes(id)) top.push(id);
		if (top.length === K) break;
	}
	return { top, factHits, linked };
}

interface Scores {
	at: Record<1 | 5 | 10, number[]>;
	byCategory: Map<number, number[]>;
	factHits: number;
	linked: number;
	facts: number;
}

const empty = (): Scores => ({
	at: { 1: [], 5: [], 10: [] },
	byCategory: new Map(),
	factHits: 0,
	linked: 0,
	facts: 0,
});

async function measure(conversations: Conversation[], embedder: Embedder, variant: Variant) {
	const s = empty();
	for (const c of conversations) {
		console.error(`LoCoMo facts: ${variant}, ${c.sampleId}…`);
		const { base, root, facts } = await build(c, embedder, variant);
		s.facts += facts;
		try {
			for (const q of c.questions) {
				const o = await ask(base, c, q.text);
				for (const k of [1, 5, 10] as const)
					s.at[k].push(
						q.evidence.filter((e) => o.top.slice(0, k).includes(e)).length / q.evidence.length,
					);
				const r10 = s.at[10][s.at[10].length - 1];
				s.byCategory.set(q.category, [...(s.byCategory.get(q.category) ?? []), r10]);
				s.factHits += o.factHits;
				s.linked += o.linked;
			}
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	}
	return s;
}

function models(): Array<{ label: string; embedder: Embedder }> {
	const wanted = list('LOCOMO_EMBEDDINGS');
	const want = (n: string) => wanted.length === 0 || wanted.includes(n);
	const out: Array<{ label: string; embedder: Embedder }> = [];
	if (want('hash')) out.push({ label: 'hashed words', embedder: new TestEmbedder() });
	const home = wordVectorsHome();
	if (want('glove') && home)
		out.push({ label: 'GloVe word vectors', embedder: new WordVectorEmbedder(home) });
	return out;
}

async function main(): Promise<void> {
	const start = loadLine();
	const file = process.env.LOCOMO_DATA || DEFAULT_LOCOMO_DATA;
	const { conversations } = loadLocomo(file, list('LOCOMO_CONVERSATIONS'));
	const cats = Object.keys(CATEGORIES).map(Number);
	const questions = conversations.reduce((n, c) => n + c.questions.length, 0);
	console.log('\n### Recall over facts on LoCoMo (bench/recall-locomo-facts.ts)\n');
	console.log(
		`${conversations.length} conversations, ${questions} questions of categories 1–4; default search, top ${K} turns (a fact stands for its evidence turn).\n`,
	);
	for (const m of models()) {
		console.log(`\n#### ${m.label}\n`);
		console.log(
			`| base | facts indexed | R@1 | R@5 | R@10 | ${cats.map((c) => `R@10 ${CATEGORIES[c]}`).join(' | ')} | fact hits in the top 10 (evidence linked) |`,
		);
		console.log(`|---|---:|---:|---:|---:|${'---:|'.repeat(cats.length)}---:|`);
		for (const v of VARIANTS) {
			const s = await measure(conversations, m.embedder, v);
			const byCat = cats.map((c) => f(mean(s.byCategory.get(c) ?? []))).join(' | ');
			console.log(
				`| ${v} | ${s.facts.toLocaleString('en')} | ${f(mean(s.at[1]))} | ${f(mean(s.at[5]))} | ${f(mean(s.at[10]))} | ${byCat} | ${s.factHits.toLocaleString('en')} (${s.linked.toLocaleString('en')}) |`,
			);
		}
	}
	console.log(`\n${machineLine(`${loadLine()} at the end, ${start} at the start`)}`);
}

if (require.main === module)
	main().catch((e: unknown) => {
		console.error(e);
		process.exit(1);
	});
