// BM25 over loaded lexical segments: statistics (document count, average length, document
// frequencies) are taken over the chunks the search may return, so a search of one user ranks by that
// user's own vocabulary rather than by everyone's. The best matches bring the messages beside them
// (context.ts).
import { TopK } from '../chunks/top-k';
import { chunkOrder } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import { isUnfiltered, passes } from '../chunks/filter';
import type { ChunkFilter } from '../chunks/filter';
import { CONTEXT_WEIGHT, neighboursOf } from './context';
import { postingOf } from './segment';
import type { LexicalSegment } from './segment';
import { tokenize } from './tokenize';

const K1 = 1.2;
const B = 0.75;

export interface LexicalMatch extends IndexedChunk {
	/** Its rank score (0 or more; larger is better): its BM25, or its neighbour's share when more. */
	score: number;
	/** BM25 of its own words. */
	bm25: number;
	/** Ranked for the match beside it (its neighbour's share was more than its own BM25). */
	context?: true;
}

/**
 * The documents a search may return, per loaded segment (1: live and passing the filter), with their
 * count and total length. Depends only on the loaded segments, their live masks and the filter, so it
 * is cached per manifest version and filter instead of being rebuilt by every query.
 */
export interface SearchScope {
	ok: Uint8Array[];
	n: number;
	total: number;
}

/** The scope of a filter over segments whose live documents are `live[s][d] = 1`. */
export function scopeOf(
	segments: LexicalSegment[],
	live: Uint8Array[],
	filter: ChunkFilter,
): SearchScope {
	const unfiltered = isUnfiltered(filter);
	const ok = segments.map((seg, s) =>
		unfiltered ? live[s] : live[s].map((l, d) => (l && passes(seg.docs[d], filter) ? 1 : 0)),
	);
	let n = 0;
	let total = 0;
	segments.forEach((seg, s) => {
		const mask = ok[s];
		for (let d = 0; d < mask.length; d++)
			if (mask[d]) {
				n++;
				total += seg.lengths[d];
			}
	});
	return { ok, n, total };
}

/** BM25's inverse document frequency of a term `df` of `n` documents hold. */
export const idfOf = (n: number, df: number) => Math.log(1 + (n - df + 0.5) / (df + 0.5));

/** What one term adds to a document's score: `tf` times in a document of `length`, lengths averaging `avg`. */
export const weigh = (idf: number, tf: number, length: number, avg: number) =>
	(idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / avg));

/**
 * Statistics taken over a larger scope than the segments scored (a search that reads its index one
 * segment at a time scores the few it keeps with the statistics of all of them): documents in scope,
 * their total length, and how many hold each query term.
 */
export interface ScopeStats {
	n: number;
	total: number;
	df: ReadonlyMap<string, number>;
}

/** The query's terms with their posting lists, and how many in-scope documents hold each. */
function termLists(
	terms: string[],
	segments: LexicalSegment[],
	ok: Uint8Array[],
	stats: ScopeStats | undefined,
) {
	return terms.flatMap((term) => {
		let df = 0;
		const lists = segments.map((seg, s) => {
			const list = postingOf(seg, term);
			if (list) for (let i = 0; i < list.length; i += 2) df += ok[s][list[i]];
			return list;
		});
		if (stats) df = df === 0 ? 0 : (stats.df.get(term) ?? 0);
		return df === 0 ? [] : [{ df, lists }];
	});
}

/** How many in-scope documents hold each distinct term of `query` (0: none), in the query's order. */
export function frequencies(
	query: string,
	segments: LexicalSegment[],
	scope: SearchScope,
): Array<{ term: string; df: number }> {
	return [...new Set(tokenize(query))].map((term) => {
		let df = 0;
		segments.forEach((seg, s) => {
			const list = postingOf(seg, term);
			if (list) for (let i = 0; i < list.length; i += 2) df += scope.ok[s][list[i]];
		});
		return { term, df };
	});
}

/** BM25 of every in-scope document holding a query term (rows: per segment, undefined if none). */
function scoreAll(
	terms: string[],
	segments: LexicalSegment[],
	scope: SearchScope,
	stats: ScopeStats | undefined,
) {
	const { ok } = scope;
	const n = stats?.n ?? scope.n;
	const avg = (stats?.total ?? scope.total) / n || 1;
	const scores = segments.map(() => undefined as Float64Array | undefined);
	// Only documents holding a query term are scored and ranked (not every document in scope).
	const touched: number[] = [];
	for (const { df, lists } of termLists(terms, segments, ok, stats)) {
		const idf = idfOf(n, df);
		lists.forEach((list, s) => {
			if (!list) return;
			const seg = segments[s];
			const row = (scores[s] ??= new Float64Array(seg.docs.length));
			for (let i = 0; i < list.length; i += 2) {
				const d = list[i];
				if (!ok[s][d]) continue;
				const tf = list[i + 1];
				if (row[d] === 0) touched.push(s, d);
				row[d] += weigh(idf, tf, seg.lengths[d], avg);
			}
		});
	}
	return { scores, touched };
}

/**
 * The `k` best in-scope chunks for `query`: by their own BM25, or as the neighbour of one of them.
 * With `stats`, scored by those statistics (see ScopeStats) instead of the segments' own.
 */
export function bm25(
	query: string,
	segments: LexicalSegment[],
	scope: SearchScope,
	k: number,
	stats?: ScopeStats,
): LexicalMatch[] {
	const terms = [...new Set(tokenize(query))];
	if (terms.length === 0 || (stats?.n ?? scope.n) === 0) return [];
	const { scores, touched } = scoreAll(terms, segments, scope, stats);
	// Ties by the chunks themselves: the same k best however the chunks are split into segments.
	const top = new TopK(k, (s1, d1, s2, d2) =>
		chunkOrder(segments[s1].docs[d1], segments[s2].docs[d2]),
	);
	for (let i = 0; i < touched.length; i += 2) {
		const s = touched[i];
		const d = touched[i + 1];
		const score = scores[s]![d];
		if (top.admits(score)) top.push(score, s, d);
	}
	// Only the k best can lift a neighbour into the k best: any other match is at most the k-th best,
	// and its neighbour would get less.
	const best = top.sorted();
	const found = new Map<string, { s: number; d: number; score: number; context?: true }>();
	for (const { score, a, b } of best) found.set(`${a},${b}`, { s: a, d: b, score });
	for (const { score, a, b } of best)
		for (const [s, d] of neighboursOf(segments, scope, a, b)) {
			const lifted = score * CONTEXT_WEIGHT;
			const key = `${s},${d}`;
			if (lifted > (found.get(key)?.score ?? scores[s]?.[d] ?? 0))
				found.set(key, { s, d, score: lifted, context: true });
		}
	// A stable sort: on a tie, a match of its own words stays before a neighbour.
	const ranked = [...found.values()].sort((x, y) => y.score - x.score).slice(0, k);
	return ranked.map(({ s, d, score, context }) => ({
		...segments[s].docs[d],
		score,
		bm25: scores[s]?.[d] ?? 0,
		...(context ? { context } : {}),
	}));
}
