// Fusing rankings: reciprocal rank fusion of the lexical and the vector ranking, an optional recency
// half-life, and near-duplicates merged, so one fact said twice takes one place in the results.
import type { IndexedChunk } from './vector-segment';

/**
 * The constant of reciprocal rank fusion: a chunk ranked r-th in a list adds 1 / (RRF_K + r). The
 * textbook 60 suits lists of a thousand; ours hand over 50 candidates, where 60 flattens the top of
 * each list (rank 1 and rank 10 almost equal) and lets a chunk that is mediocre in both win.
 */
export const RRF_K = 10;
/** How much recency can weigh: a chunk's score is kept at (1 − RECENCY_WEIGHT) at the least. */
export const RECENCY_WEIGHT = 0.3;
/** Two chunks whose vectors are at least this similar are one fact said twice. */
export const DUPLICATE_COSINE = 0.95;

export interface Ranked extends IndexedChunk {
	/** The fused score, 0 … 1 (1: first in every ranking, and new). */
	score: number;
	/** Its place (1 = first) in the lexical and the vector ranking, when it was in them. */
	lexicalRank?: number;
	vectorRank?: number;
	/** Its normalised vector, when the vector ranking had it (for the near-duplicate check). */
	vector?: Float32Array;
}

type Candidate = IndexedChunk & { vector?: Float32Array };

/** The two indexes name a chunk differently; its message and place in the message are the same. */
const chunkKey = (c: IndexedChunk) => `${c.session_id}\n${c.message_id}\n${c.chunk_index}`;

const normalText = (t: string) => t.toLowerCase().replace(/\s+/g, ' ').trim();

function dot(a: Float32Array, b: Float32Array): number {
	let s = 0;
	for (let i = 0; i < a.length && i < b.length; i++) s += a[i] * b[i];
	return s;
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
 * Drops chunks that repeat a better-ranked one: the same text, or a vector at least DUPLICATE_COSINE
 * alike. Stops once `limit` are kept: each kept vector costs a comparison with every later one.
 */
export function mergeDuplicates(ranked: Ranked[], limit = Infinity): Ranked[] {
	const texts = new Set<string>();
	const kept: Ranked[] = [];
	for (const r of ranked) {
		if (kept.length >= limit) break;
		const text = normalText(r.text);
		if (texts.has(text)) continue;
		const v = r.vector;
		if (v && kept.some((k) => k.vector && dot(k.vector, v) >= DUPLICATE_COSINE)) continue;
		texts.add(text);
		kept.push(r);
	}
	return kept;
}

/**
 * One ranking from the lexical and the vector ranking (either may be empty), its first `limit` (all by
 * default). Scores are normalised by the best a chunk could get from the rankings given, so 1 means
 * first everywhere.
 */
export function fuse(
	lexical: readonly Candidate[],
	vector: readonly Candidate[],
	options: { halfLifeDays?: number; now: Date; limit?: number },
): Ranked[] {
	const byId = new Map<string, Ranked>();
	const lists = [lexical, vector].filter((l) => l.length > 0);
	const add = (list: readonly Candidate[], rankField: 'lexicalRank' | 'vectorRank') =>
		list.forEach((c, i) => {
			const key = chunkKey(c);
			const entry = byId.get(key) ?? { ...c, score: 0 };
			entry.score += 1 / (RRF_K + i + 1);
			entry[rankField] = i + 1;
			if (c.vector) entry.vector = c.vector;
			byId.set(key, entry);
		});
	add(lexical, 'lexicalRank');
	add(vector, 'vectorRank');
	const best = lists.length / (RRF_K + 1);
	const out = [...byId.values()].map((r) => {
		let score = r.score / best;
		if (options.halfLifeDays !== undefined)
			score *= recencyFactor(r.created_at, options.now, options.halfLifeDays);
		return { ...r, score };
	});
	out.sort((a, b) => b.score - a.score || (a.created_at < b.created_at ? 1 : -1));
	return mergeDuplicates(out, options.limit);
}

/**
 * Puts each top match's later mention (`mentions[i]` of `top[i]`) right above it, unless it ranks
 * above it already: the newer statement of a fact before the older one, the answer after the request.
 * A mention the rankings did not have takes its match's score.
 */
export function newerFirst(
	fused: Ranked[],
	top: readonly Ranked[],
	mentions: ReadonlyArray<IndexedChunk | undefined>,
): Ranked[] {
	const out = [...fused];
	top.forEach((match, i) => {
		const newer = mentions[i];
		if (!newer) return;
		const at = out.findIndex((r) => chunkKey(r) === chunkKey(match));
		const was = out.findIndex((r) => chunkKey(r) === chunkKey(newer));
		if (at < 0 || (was >= 0 && was < at)) return;
		// A copy of a result's text is the same fact: it is not added twice.
		if (was < 0 && out.some((r) => normalText(r.text) === normalText(newer.text))) return;
		const entry = was >= 0 ? out.splice(was, 1)[0] : { ...newer, score: match.score };
		out.splice(at, 0, { ...entry, score: Math.max(entry.score, match.score) });
	});
	return out;
}
