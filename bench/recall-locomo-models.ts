/**
 * The embedding models recall-locomo.ts measures with, from weak to strong. No real model can be
 * reached here, so all are stand-ins: the tests' hashed word features (what the fake model server's
 * /v1/embeddings answers), GloVe word vectors averaged (word-vectors.ts, when installed), and
 * "linked" stand-ins (linked-vectors.ts) whose vector ranking is made stronger step by step by tying
 * each question to its evidence turns, on GloVe (or hashed words) underneath. The knob
 * LOCOMO_STRENGTHS lists the linked strengths (default 0.2,0.25,0.3,0.5 on GloVe, and 0.7 on hashed
 * words); LOCOMO_EMBEDDINGS picks among hash, glove and linked.
 */
import type { Embedder } from '../src/internal';
import { TestEmbedder } from '../test/support/embeddings';
import { LinkedEmbedder } from './linked-vectors';
import { turnText } from './locomo-data';
import type { Conversation } from './locomo-data';
import { WordVectorEmbedder, wordVectorsHome } from './word-vectors';

export interface Model {
	label: string;
	/** The word averages, against which the hybrid must also beat BM25. */
	weak: boolean;
	glove: boolean;
	/** The model for one conversation (a linked one ties that conversation's questions). */
	embedder(c: Conversation): Embedder;
}

/** Each text's links: a question's own number, and an evidence turn's questions' numbers. */
function linksOf(c: Conversation): Map<string, number[]> {
	const links = new Map<string, number[]>();
	const add = (text: string, n: number) => links.set(text, [...(links.get(text) ?? []), n]);
	const byId = new Map(c.turns.map((t) => [t.diaId, t]));
	c.questions.forEach((q, n) => {
		add(q.text, n);
		for (const id of q.evidence) add(turnText(byId.get(id)!), n);
	});
	return links;
}

const list = (name: string, fallback: string) =>
	(process.env[name] ?? fallback)
		.split(',')
		.map((s) => s.trim())
		.filter((s) => s !== '');

/** The models asked for (LOCOMO_EMBEDDINGS, LOCOMO_STRENGTHS), GloVe ones only when installed. */
export function models(notes: string[]): Model[] {
	const wanted = list('LOCOMO_EMBEDDINGS', 'hash,glove,linked');
	const home = wordVectorsHome();
	if (!home) notes.push('GloVe word vectors not installed (LLM_MEMORY_WORD_VECTORS): skipped.');
	const glove = () => new WordVectorEmbedder(home!);
	const out: Model[] = [];
	if (wanted.includes('hash'))
		out.push({
			label: 'hashed words',
			weak: true,
			glove: false,
			embedder: () => new TestEmbedder(),
		});
	if (wanted.includes('glove') && home)
		out.push({ label: 'GloVe word vectors', weak: true, glove: true, embedder: glove });
	if (!wanted.includes('linked')) return out;
	for (const spec of list('LOCOMO_STRENGTHS', '0.2,0.25,0.3,0.5,hash:0.7')) {
		const onHash = spec.startsWith('hash:');
		const strength = Number(onHash ? spec.slice(5) : spec);
		if (!onHash && !home) continue;
		out.push({
			label: `linked stand-in ${strength} on ${onHash ? 'hashed words' : 'GloVe'}`,
			weak: false,
			glove: false,
			embedder: (c) =>
				new LinkedEmbedder(onHash ? new TestEmbedder() : glove(), linksOf(c), strength),
		});
	}
	return out;
}
