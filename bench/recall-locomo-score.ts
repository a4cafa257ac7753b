// What recall-locomo.ts and its bars share: each question's top 10 per ranking, and the scores of a
// ranking over the questions (Recall@k, hit@10, MRR, Recall@10 per category, tokens).
import { CATEGORIES } from './locomo-data';
import type { Question } from './locomo-data';
import { median } from './stats';

export const K = 10;
export const BM25 = 'BM25';
export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** One question's outcome: each ranking's top 10 (dia_ids, in order) and the tokens of its texts. */
export interface Asked {
	q: Question;
	lists: Map<string, string[]>;
	tokens: Map<string, number>;
	/** The vector search's top 10 equals the exact cosine's: exactly, and up to near-ties. */
	vectorSame: boolean;
	vectorTies: boolean;
	/** The default search's vector weight (its fusion report). */
	vectorWeight?: number;
}

export interface Scores {
	at: Record<1 | 5 | 10, number>;
	hit: number;
	mrr: number;
	byCategory: Map<number, number>;
	tokens: number;
}

/** Recall@k: the share of the question's evidence turns among the first k. */
const recallAt = (top: string[], evidence: string[], k: number) =>
	evidence.filter((e) => top.slice(0, k).includes(e)).length / evidence.length;

export function score(asked: Asked[], name: string): Scores {
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
