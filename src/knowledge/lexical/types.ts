// What the lexical index hands out: a loaded view for one search, and its statistics for Status.
import type { IndexedChunk } from '../vector-segment';
import type { LexicalMatch } from './bm25';

/** The chunks one search may see, loaded. */
export interface LexicalView {
	/** The `k` best matches of `query` (BM25), best first. */
	search(query: string, k: number): LexicalMatch[];
	/** For each chunk, the newer chunk in scope that names the most of what it names (later-mentions.ts). */
	laterMentions(chunks: IndexedChunk[]): Array<IndexedChunk | undefined>;
}

/** What the index holds, for Status. */
export interface LexicalStats {
	exists: boolean;
	/** Live chunks (superseded copies not counted). */
	chunks: number;
	bySession: Record<string, number>;
	segments: number;
	/** Segments the manifest lists that storage does not hold. */
	missing: string[];
}
