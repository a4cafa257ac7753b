// Fusing rankings: the word ranking and the vector ranking, each scaled over its own candidates (best
// 1, last 0) and weighed as weights.ts decides for the search, an optional recency half-life, and
// repeats (the same words) merged, so one message said twice takes one place. Then, among matches about
// as good as each other that name the same thing, the newer first.
import { chunkKey } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import { saidAfter } from '../lexical/names';
import { tokenize } from '../lexical/tokenize';
import { STANDOUT_OVER } from './standout';
import { VECTOR_WEIGHT_PRIOR } from './weights';

/** Candidates of each ranking its scale spans (search hands over at least this many). */
export const SCALE_OVER = STANDOUT_OVER;
/** How much recency can weigh: a chunk's score is kept at (1 − RECENCY_WEIGHT) at the least. */
export const RECENCY_WEIGHT = 0.3;
/**
 * Two matches of one query whose scores are within this share of each other, and that name the same
 * rare thing (a city, an employer), are two statements of one fact: the newer goes first. A later
 * message that answers the query less well does not move (on real conversations, later mentions of a
 * name are mostly about something else: docs/benchmarks.md).
 */
export const NEWER_WITHIN = 0.85;
/** The best matches whose newer statements are looked for. */
export const NEWER_OF = 10;

export interface Ranked extends IndexedChunk {
	/** The fused score, 0 … 1 (1: first in every ranking used, and new). */
	score: number;
	/** Its place (1 = first) in the lexical and the vector ranking, when it was in them. */
	lexicalRank?: number;
	vectorRank?: number;
	/** BM25 of its own words, when the word ranking had it (0: it came in beside a match). */
	lexicalScore?: number;
	/** Cosine similarity with the query, when known. */
	similarity?: number;
	/** It ranks for the message beside it, which matched the words. */
	context?: true;
}

/** A word-ranking candidate: its rank score, its own BM25, and whether it came in beside a match. */
export type LexicalCandidate = IndexedChunk & { score: number; bm25?: number; context?: true };
/** A vector-ranking candidate: its cosine similarity as its score. */
export type VectorCandidate = IndexedChunk & { score: number };

/** The text's words in order, case and punctuation left out: what "the same text" compares. */
function wordsOf(text: string): string {
	const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu);
	return words ? words.join(' ') : text.replace(/\s+/g, ' ').trim();
}

/**
 * Half-life weighting: 1 for a chunk captured now, 0.85 at one half-life, 0.7 long ago. Mild on
 * purpose: it orders close matches by age (a newer statement before an older one) without letting a
 * recent weak match outrank an old strong one.
 */
export function recencyFactor(createdAt: string, now: Date, halfLifeDays: number): number {
	const ageDays = Math.max(0, (now.getTime() - Date.parse(createdAt)) / 86_400_000);
	return 1 - RECENCY_WEIGHT + RECENCY_WEIGHT * 2 ** (-ageDays / halfLifeDays);
}

/**
 * Drops chunks that repeat a better-ranked one: the same words in the same order (case, spacing and
 * punctuation aside). Similar vectors are not repeats: distinct messages can embed alike. Stops once
 * `limit` are kept.
 */
export function mergeDuplicates(ranked: Ranked[], limit = Infinity): Ranked[] {
	const texts = new Set<string>();
	const kept: Ranked[] = [];
	for (const r of ranked) {
		if (kept.length >= limit) break;
		const words = wordsOf(r.text);
		if (texts.has(words)) continue;
		texts.add(words);
		kept.push(r);
	}
	return kept;
}

/** Earlier said first: capture time, then conversation, then place in the conversation. */
function saidOrder(a: IndexedChunk, b: IndexedChunk): number {
	if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
	if (a.session_id !== b.session_id) return a.session_id < b.session_id ? -1 : 1;
	return a.seq - b.seq || a.chunk_index - b.chunk_index;
}

/**
 * Scales a ranking's scores to 0 … 1 over its candidates: its best 1, its last 0 (all 1 if equal), or
 * `floor` 0 when the list holds every match (a word match it does not hold scores nothing).
 */
function scaler(
	list: ReadonlyArray<{ score: number }>,
	floor = Infinity,
): (score: number) => number {
	let hi = -Infinity;
	let lo = floor;
	for (const c of list) {
		hi = Math.max(hi, c.score);
		lo = Math.min(lo, c.score);
	}
	return (score) => (hi > lo ? Math.max(0, (score - lo) / (hi - lo)) : 1);
}

/**
 * One ranking from the word and the vector ranking (either may be empty), its first `limit` (all by
 * default): each ranking scaled over its own candidates, weighed by `weights` when both found something
 * (the words first by default), recency applied, repeats merged. Ties: the earlier said first.
 */
export function fuse(
	lexical: readonly LexicalCandidate[],
	vector: readonly VectorCandidate[],
	options: {
		halfLifeDays?: number;
		now: Date;
		limit?: number;
		/** The word ranking holds every chunk its words match (fewer than were asked for). */
		allWordMatches?: boolean;
		/** What each ranking weighs when both found something (weights.ts). */
		weights?: { lexical: number; vector: number };
	},
): Ranked[] {
	const both = lexical.length > 0 && vector.length > 0;
	const given = options.weights ?? {
		lexical: 1 - VECTOR_WEIGHT_PRIOR,
		vector: VECTOR_WEIGHT_PRIOR,
	};
	const weight = { lexical: both ? given.lexical : 1, vector: both ? given.vector : 1 };
	const byId = new Map<string, Ranked>();
	const lexicalScale = scaler(lexical, options.allWordMatches ? 0 : Infinity);
	lexical.forEach((c, i) => {
		const { bm25, ...chunk } = c;
		byId.set(chunkKey(c), {
			...chunk,
			score: weight.lexical * lexicalScale(c.score),
			lexicalRank: i + 1,
			lexicalScore: bm25 ?? c.score,
		});
	});
	const vectorScale = scaler(vector);
	vector.forEach((c, i) => {
		const key = chunkKey(c);
		const entry = byId.get(key) ?? { ...c, score: 0 };
		entry.score += weight.vector * vectorScale(c.score);
		entry.vectorRank = i + 1;
		entry.similarity = c.score;
		byId.set(key, entry);
	});
	const out = [...byId.values()];
	if (options.halfLifeDays !== undefined)
		for (const r of out) r.score *= recencyFactor(r.created_at, options.now, options.halfLifeDays);
	out.sort((a, b) => b.score - a.score || saidOrder(a, b));
	return mergeDuplicates(out, options.limit);
}

/**
 * For each of the first NEWER_OF matches, the newest later match that names what it names (`names`:
 * its rare terms in the search's scope) and scores within NEWER_WITHIN of it goes right above it:
 * "we moved from Lyon to Oslo" before "I live in Lyon" when both answer the query about as well.
 * Only matches of the query move, and only past one about as good, so a later message that answers
 * something else never comes first.
 */
export function newerFirst(ranked: Ranked[], names: (chunk: IndexedChunk) => string[]): Ranked[] {
	const out = [...ranked];
	for (const match of ranked.slice(0, NEWER_OF)) {
		const wanted = names(match);
		if (wanted.length === 0) continue;
		let best: Ranked | undefined;
		for (const c of out.slice(out.indexOf(match) + 1)) {
			if (c.score < NEWER_WITHIN * match.score) continue;
			if (!saidAfter(c, match) || (best && !saidAfter(c, best))) continue;
			const terms = new Set(tokenize(c.text));
			if (wanted.some((t) => terms.has(t))) best = c;
		}
		if (!best) continue;
		out.splice(out.indexOf(best), 1);
		best.score = Math.max(best.score, match.score);
		out.splice(out.indexOf(match), 0, best);
	}
	return out;
}
