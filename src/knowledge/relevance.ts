// The relevance floor of automatic recall: a message recalls only what it carries information for, in
// this memory, by the memory's own statistics rather than a word list. A word match counts when the
// word is rare here (it tells some messages apart from the rest); a match of the vectors counts when
// the vectors' best match stood out clearly more than it does for word salad of this memory's words
// (indexes/fusion/weights.ts measures that for every hybrid search). "nice one", "take care" or a
// pleasantry in another language then recall nothing, whatever the words, while a question with a
// rare word, or one a good embedding model understands, still recalls.
import { tokenize } from '../indexes';
import type { SearchMatch, SearchReport } from './types';

/**
 * A word is rare enough to recall by when at most this share of the scope's messages hold it; so are
 * words that, together, at most this share hold.
 */
export const RARE_WORD_SHARE = 0.075;
/** In a scope of fewer messages, shares say nothing: every word match counts. */
export const FEW_MESSAGES = 40;
/**
 * Without a rare word, vector matches count when the vectors' best match stood out at least this many
 * times as far as for word salad (about 1 for a weak model, or a message with nothing to find), in this
 * search and in the evidence the search's weights followed.
 */
export const VECTOR_EVIDENCE_FLOOR = 1.6;

/** The query's words that are rare in the search's scope. */
function rareWords(found: SearchReport): Set<string> {
	const words = found.words;
	if (!words) return new Set();
	const limit = words.messages < FEW_MESSAGES ? Infinity : RARE_WORD_SHARE * words.messages;
	return new Set(
		words.terms.filter((t) => t.messages > 0 && t.messages <= limit).map((t) => t.term),
	);
}

/** The query's words that occur in the scope: those a match can hold. */
const presentWords = (found: SearchReport) =>
	new Set((found.words?.terms ?? []).filter((t) => t.messages > 0).map((t) => t.term));

/** The query's words a match's own text holds (not the message beside it). */
function heldWords(hit: SearchMatch, query: ReadonlySet<string>): string[] {
	if ((hit.lexicalScore ?? 0) <= 0) return [];
	return [...new Set(tokenize(hit.text))].filter((t) => query.has(t));
}

/**
 * Matches whose query words, none rare alone, are rare together: at most RARE_WORD_SHARE of the scope's
 * messages hold them all ("Melanie" and "painted", each in many messages, together in few). Counted
 * among the search's word matches, which rank messages holding more of the query's words first; when
 * every word match holds them, more may exist than were handed over, so they do not count.
 */
function jointlyRare(found: SearchReport, held: Map<SearchMatch, string[]>): Set<SearchMatch> {
	const words = found.words;
	if (!words || words.messages < FEW_MESSAGES) return new Set();
	const lists = [...held.values()].filter((list) => list.length > 0);
	const limit = RARE_WORD_SHARE * words.messages;
	const out = new Set<SearchMatch>();
	for (const [hit, mine] of held) {
		if (mine.length < 2) continue;
		const holders = lists.filter((other) => mine.every((t) => other.includes(t))).length;
		if (holders < lists.length && holders <= limit) out.add(hit);
	}
	return out;
}

/** The matches holding a rare word of the query, or words rare together (their own text). */
function wordMatches(found: SearchReport): Set<SearchMatch> {
	const rare = rareWords(found);
	const query = presentWords(found);
	const held = new Map(found.matches.map((h) => [h, heldWords(h, query)]));
	const together = jointlyRare(found, held);
	return new Set(
		found.matches.filter((h) => together.has(h) || held.get(h)!.some((t) => rare.has(t))),
	);
}

/**
 * The matches recall may use: those holding a rare word of the query (and the messages beside them),
 * or, when the vectors showed clear evidence, every match; and why none, when none.
 */
export function relevant(found: SearchReport): { hits: SearchMatch[]; reason?: string } {
	const byWords = wordMatches(found);
	// Both this query's evidence and the one the weights followed: a good model's base does not lift a
	// query whose best match stood out no more than word salad, and one lucky query of a weak model does
	// not pass on its own.
	const { vectorEvidence: own, weighedEvidence: weighed } = found.fusion;
	const byVectors =
		own !== undefined && weighed !== undefined && Math.min(own, weighed) >= VECTOR_EVIDENCE_FLOOR;
	if (byVectors)
		return { hits: found.matches.filter((h) => (h.similarity ?? 0) > 0 || byWords.has(h)) };
	const context = byWords.size > 0;
	const hits = found.matches.filter((h) => byWords.has(h) || (context && h.context === true));
	// None of its words occurs here at all: plainly no match (the caller says so).
	const present = presentWords(found).size > 0;
	if (hits.length > 0 || found.matches.length === 0 || !present) return { hits };
	return {
		hits,
		reason:
			'nothing to look up: the message has no word that is rare in this memory' +
			(found.fusion.mode === 'lexical' ? '' : ", and the vectors' best match did not stand out"),
	};
}
