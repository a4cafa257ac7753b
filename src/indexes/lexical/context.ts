// Context in word search: the message next to a strong match ranks just below it. In a conversation
// an answer follows its question and a statement continues the one before, so the words a question
// uses often sit in the message beside the one that answers it ("What did you paint?" → "A sunrise
// over the lake"). A neighbour takes CONTEXT_WEIGHT of its match's score when that is more than its
// own; it never outranks the match that brought it, so the best match stays first.
import type { IndexedChunk } from '../chunks/chunk';
import type { SearchScope } from './bm25';
import type { LexicalSegment } from './segment';

/** Share of a match's score its neighbours get (measured on real conversations; see docs/benchmarks.md). */
export const CONTEXT_WEIGHT = 0.7;

/**
 * Notes about a conversation captured into it (role "fact": what was learned from it, captured a few
 * turns later) are not part of its flow: they bring no neighbour and are none, and a message's
 * neighbours skip them, at most ASIDE_SKIP in a row. Measured on real conversations: interleaved
 * notes that count as neighbours cost more recall than the notes bring (docs/benchmarks.md).
 */
export const ASIDE_ROLES: ReadonlySet<string> = new Set(['fact']);
const ASIDE_SKIP = 64;
/** How many messages away a chunk's neighbour can be (its own message's chunks, or past notes). */
export const NEIGHBOUR_REACH = ASIDE_SKIP + 1;
export const aside = (c: IndexedChunk) => c.role !== undefined && ASIDE_ROLES.has(c.role);

/** Per segment: where each message's chunks are, by conversation and message number. */
const places = new WeakMap<LexicalSegment, Map<string, number[]>>();

const placeKey = (session: string, seq: number) => `${session}\n${seq}`;

/** A segment's documents by message, chunk order kept (built once per decoded segment). */
function placesOf(seg: LexicalSegment): Map<string, number[]> {
	let map = places.get(seg);
	if (map) return map;
	map = new Map();
	seg.docs.forEach((doc, d) => {
		const key = placeKey(doc.session_id, doc.seq);
		const list = map!.get(key);
		if (list) list.push(d);
		else map!.set(key, [d]);
	});
	for (const list of map.values())
		list.sort((a, b) => seg.docs[a].chunk_index - seg.docs[b].chunk_index);
	places.set(seg, map);
	return map;
}

/** The in-scope chunk of a message at `chunk` (or its last when `chunk` is -1), as [segment, doc]. */
function chunkAt(
	segments: LexicalSegment[],
	scope: SearchScope,
	session: string,
	seq: number,
	chunk: number,
): [number, number] | undefined {
	let found: [number, number] | undefined;
	let best = -1;
	segments.forEach((seg, s) => {
		const list = placesOf(seg).get(placeKey(session, seq));
		if (!list) return;
		for (const d of list) {
			if (!scope.ok[s][d]) continue;
			const index = seg.docs[d].chunk_index;
			if (chunk >= 0 ? index === chunk : index > best) {
				best = index;
				found = [s, d];
			}
		}
	});
	return found;
}

/** The chunks just before and after a chunk in its conversation, within the scope. */
export function neighboursOf(
	segments: LexicalSegment[],
	scope: SearchScope,
	s: number,
	d: number,
): Array<[number, number]> {
	const doc = segments[s].docs[d];
	if (aside(doc)) return [];
	const at = (seq: number, chunk: number) => chunkAt(segments, scope, doc.session_id, seq, chunk);
	/** The first chunk of the flow from message `seq` on, stepping by `step` over notes. */
	const flow = (seq: number, chunk: number, step: number) => {
		for (let i = 0; i <= ASIDE_SKIP; i++) {
			const found = at(seq + i * step, chunk);
			if (!found || !aside(segments[found[0]].docs[found[1]])) return found;
		}
		return undefined;
	};
	const before = doc.chunk_index > 0 ? at(doc.seq, doc.chunk_index - 1) : flow(doc.seq - 1, -1, -1);
	const after = at(doc.seq, doc.chunk_index + 1) ?? flow(doc.seq + 1, 0, 1);
	return [before, after].filter((x): x is [number, number] => x !== undefined);
}
