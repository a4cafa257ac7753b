// Later mentions: for a chunk a search found, the newer chunks in the same scope that name what it
// names (its rarest terms: the city, the car, the employer, the booking code). A fact that changes is
// usually restated with the old value in it ("we moved from Lyon to Oslo"), and a request is answered
// in a later message that repeats its names ("a table at Nobu" → "Booked: Nobu, Friday"), so the newer
// message can be found from the older one even when its words do not match the question.
import type { IndexedChunk } from '../vector-segment';
import type { SearchScope } from './bm25';
import type { LexicalSegment } from './segment';
import { tokenize } from './tokenize';

/**
 * A term names something when at least two chunks in scope hold it, and at most this many, and at
 * most one in NAME_MAX_SHARE of them (in a small scope, a word in two chunks of five is just common).
 */
export const NAME_MAX_DF = 3;
const NAME_MAX_SHARE = 10;
/** The rarest terms of a chunk that are looked for. */
const NAME_TERMS = 3;

/** How many in-scope documents hold `term`, counting no further than `limit + 1`. */
function scopedDf(term: string, segments: LexicalSegment[], scope: SearchScope, limit: number) {
	let df = 0;
	for (let s = 0; s < segments.length && df <= limit; s++) {
		const list = segments[s].postings.get(term);
		if (!list) continue;
		const ok = scope.ok[s];
		for (let i = 0; i < list.length && df <= limit; i += 2) df += ok[list[i]];
	}
	return df;
}

/** The chunk's terms that name something in this scope, rarest first. */
function namesOf(text: string, segments: LexicalSegment[], scope: SearchScope) {
	const out: Array<{ term: string; df: number }> = [];
	const most = Math.min(NAME_MAX_DF, Math.floor(scope.n / NAME_MAX_SHARE));
	if (most < 2) return out;
	for (const term of new Set(tokenize(text))) {
		const df = scopedDf(term, segments, scope, most);
		if (df >= 2 && df <= most) out.push({ term, df });
	}
	return out.sort((a, b) => a.df - b.df).slice(0, NAME_TERMS);
}

/**
 * The newest in-scope chunk written after `chunk` that holds the most of its names (ties: the rarer
 * names, then the newer chunk), or undefined when none does.
 */
export function laterMention(
	chunk: IndexedChunk,
	segments: LexicalSegment[],
	scope: SearchScope,
): IndexedChunk | undefined {
	const found = new Map<string, { doc: IndexedChunk; shared: number; weight: number }>();
	for (const { term, df } of namesOf(chunk.text, segments, scope))
		segments.forEach((seg, s) => {
			const list = seg.postings.get(term);
			if (!list) return;
			for (let i = 0; i < list.length; i += 2) {
				const doc = seg.docs[list[i]];
				if (!scope.ok[s][list[i]] || doc.created_at <= chunk.created_at) continue;
				const hit = found.get(doc.id) ?? { doc, shared: 0, weight: 0 };
				hit.shared++;
				hit.weight += 1 / df;
				found.set(doc.id, hit);
			}
		});
	let best: { doc: IndexedChunk; shared: number; weight: number } | undefined;
	for (const h of found.values())
		if (
			!best ||
			h.shared > best.shared ||
			(h.shared === best.shared &&
				(h.weight > best.weight ||
					(h.weight === best.weight && h.doc.created_at > best.doc.created_at)))
		)
			best = h;
	return best?.doc;
}
