/**
 * The bars recall-locomo.ts judges each embedding model by, met or not, with the numbers they were
 * judged on: the default (hybrid) search against the better of words alone and vectors alone, fusion
 * adding where the two are close, the word averages against BM25, vector search against exact cosine,
 * and automatic recall (questions that recall nothing, pleasantries that recall something).
 */
import { BM25, mean, score } from './recall-locomo-score';
import type { Asked } from './recall-locomo-score';
import type { AutoRecall, SmallTalkTally } from './recall-locomo-auto';
import type { Model } from './recall-locomo-models';

const f = (x: number, d = 3) => x.toFixed(d);
const verdict = (ok: boolean) => (ok ? '**met**' : '**not met**');

/** Default against the better single ranking; where the two are within 0.10, fusion must add. */
function fusionBars(asked: Asked[], m: Model): string[] {
	const d = score(asked, 'default search');
	const lex = score(asked, 'lexical');
	const vec = score(asked, 'vector');
	const best10 = Math.max(lex.at[10], vec.at[10]);
	const best1 = Math.max(lex.at[1], vec.at[1]);
	const out = [
		`- ${m.label}: default R@10 ≥ the better of word only (${f(lex.at[10])}) and vector only (${f(vec.at[10])}) − 0.01: ${f(d.at[10])}: ${verdict(d.at[10] >= best10 - 0.01 - 1e-9)}.`,
		`- ${m.label}: default R@1 ≥ the better (${f(lex.at[1])}, ${f(vec.at[1])}) − 0.02: ${f(d.at[1])}: ${verdict(d.at[1] >= best1 - 0.02 - 1e-9)}.`,
	];
	if (Math.abs(lex.at[10] - vec.at[10]) <= 0.1)
		out.push(
			`- ${m.label}: the two within 0.10, so fusion adds: default R@10 ≥ the better + 0.01: ${f(d.at[10])} against ${f(best10)} + 0.01: ${verdict(d.at[10] >= best10 + 0.01 - 1e-9)}.`,
		);
	return out;
}

/** The word averages: never below BM25, +3 points R@10 with GloVe; vector search exact everywhere. */
export function bars(asked: Asked[], m: Model): string[] {
	const d = score(asked, 'default search');
	const bm = score(asked, BM25);
	const same = mean(asked.map((a) => (a.vectorSame ? 1 : 0)));
	const ties = mean(asked.map((a) => (a.vectorTies ? 1 : 0)));
	const out = fusionBars(asked, m);
	if (m.weak)
		out.push(
			`- ${m.label}: default R@10 and R@1 ≥ BM25's: R@10 ${f(d.at[10])} against ${f(bm.at[10])}, R@1 ${f(d.at[1])} against ${f(bm.at[1])}: ${verdict(d.at[10] >= bm.at[10] && d.at[1] >= bm.at[1])}.`,
		);
	if (m.glove)
		out.push(
			`- ${m.label}: default R@10 ≥ BM25's + 0.03: ${f(d.at[10])} against ${f(bm.at[10])} + 0.03: ${verdict(d.at[10] >= bm.at[10] + 0.03)}.`,
		);
	out.push(
		`- ${m.label}: vector top 10 identical to exact cosine in ≥ 99 % of questions (up to exact cosines within 1e-6 swapping): ${f(100 * ties, 1)} % (strictly identical: ${f(100 * same, 1)} %): ${verdict(ties >= 0.99)}.`,
	);
	return out;
}

/**
 * Automatic recall: questions that recall nothing (≤ 2 %), small talk that recalls something (≤ 5 %, in
 * each set).
 */
export function autoBars(auto: AutoRecall, m: Model): string[] {
	const empty = auto.questionsEmpty / Math.max(1, auto.questions);
	const share = (t: SmallTalkTally) => t.recalled / Math.max(1, t.asked);
	const leaks = [share(auto.pleasantries), share(auto.more)];
	return [
		`- ${m.label}: at most 2 % of the questions recall nothing: ${f(100 * empty, 1)} %: ${verdict(empty <= 0.02)}.`,
		`- ${m.label}: at most 1 in 20 small-talk messages recalls anything (the pleasantries / the second fifty): ${leaks.map((l) => `${f(100 * l, 1)} %`).join(' / ')}: ${verdict(leaks.every((l) => l <= 0.05))}.`,
	];
}
