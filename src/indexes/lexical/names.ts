// Names: the terms of a chunk that name something in a search's scope (the city, the car, the
// employer, the booking code): held by a few chunks in scope, at least two, and not common. Two
// matches of a query that share a name are two statements about one thing, which is how search tells
// an updated fact (fusion.ts, newerFirst).
import type { IndexedChunk } from '../chunks/chunk';
import type { SearchScope } from './bm25';
import { postingOf } from './segment';
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
		const list = postingOf(segments[s], term);
		if (!list) continue;
		const ok = scope.ok[s];
		for (let i = 0; i < list.length && df <= limit; i += 2) df += ok[list[i]];
	}
	return df;
}

/** The chunk's terms that name something in this scope, rarest first (at most NAME_TERMS). */
export function namesOf(
	chunk: IndexedChunk,
	segments: LexicalSegment[],
	scope: SearchScope,
): string[] {
	return namesBy(chunk, scope.n, (term, most) => scopedDf(term, segments, scope, most));
}

/** How many documents a name may be held by in a scope of `n` (below 2: none names anything). */
export const nameLimit = (n: number) => Math.min(NAME_MAX_DF, Math.floor(n / NAME_MAX_SHARE));

/**
 * The chunk's names in a scope of `n` documents, where `df(term, most)` counts the documents in scope
 * holding the term, no further than `most + 1`.
 */
export function namesBy(
	chunk: IndexedChunk,
	n: number,
	df: (term: string, most: number) => number,
): string[] {
	const out: Array<{ term: string; df: number }> = [];
	const most = nameLimit(n);
	if (most < 2) return [];
	for (const term of new Set(tokenize(chunk.text))) {
		const held = df(term, most);
		if (held >= 2 && held <= most) out.push({ term, df: held });
	}
	return out
		.sort((a, b) => a.df - b.df)
		.slice(0, NAME_TERMS)
		.map((n) => n.term);
}

/** Whether `b` was said after `a`: a later capture, or later in one conversation's same capture. */
export function saidAfter(b: IndexedChunk, a: IndexedChunk): boolean {
	if (b.created_at !== a.created_at) return b.created_at > a.created_at;
	return b.session_id === a.session_id && b.seq > a.seq;
}
