// BM25 over loaded lexical segments: statistics (document count, average length, document
// frequencies) are taken over the chunks the search may return, so a search of one user ranks by that
// user's own vocabulary rather than by everyone's.
import { TopK } from '../vector-segment';
import type { IndexedChunk } from '../vector-segment';
import { isUnfiltered, passes } from '../filter';
import type { ChunkFilter } from '../filter';
import type { LexicalSegment } from './segment';
import { tokenize } from './tokenize';

const K1 = 1.2;
const B = 0.75;

export interface LexicalMatch extends IndexedChunk {
	/** BM25 score (0 or more; larger is better). */
	score: number;
}

/**
 * The `k` best chunks for `query`. `live[s][d]` is 1 for documents a later copy does not supersede;
 * only live documents that pass the filter are counted and returned.
 */
export function bm25(
	query: string,
	segments: LexicalSegment[],
	live: Uint8Array[],
	filter: ChunkFilter,
	k: number,
): LexicalMatch[] {
	const terms = [...new Set(tokenize(query))];
	if (terms.length === 0) return [];
	const unfiltered = isUnfiltered(filter);
	const ok = segments.map((seg, s) =>
		unfiltered ? live[s] : live[s].map((l, d) => (l && passes(seg.docs[d], filter) ? 1 : 0)),
	);
	let n = 0;
	let total = 0;
	segments.forEach((seg, s) =>
		ok[s].forEach((l, d) => {
			if (!l) return;
			n++;
			total += seg.lengths[d];
		}),
	);
	if (n === 0) return [];
	const avg = total / n || 1;
	const scores = segments.map((seg) => new Float64Array(seg.docs.length));
	for (const term of terms) {
		let df = 0;
		segments.forEach((seg, s) => {
			const list = seg.postings.get(term);
			if (list) for (let i = 0; i < list.length; i += 2) df += ok[s][list[i]];
		});
		if (df === 0) continue;
		const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
		segments.forEach((seg, s) => {
			const list = seg.postings.get(term);
			if (!list) return;
			for (let i = 0; i < list.length; i += 2) {
				const d = list[i];
				if (!ok[s][d]) continue;
				const tf = list[i + 1];
				scores[s][d] += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * seg.lengths[d]) / avg));
			}
		});
	}
	const top = new TopK(k);
	scores.forEach((row, s) =>
		row.forEach((score, d) => {
			if (score > 0 && score > top.min) top.push(score, s, d);
		}),
	);
	return top.sorted().map(({ score, a, b }) => ({ ...segments[a].docs[b], score }));
}
