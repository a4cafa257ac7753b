// What the lexical index hands out: a loaded view for one search, and its statistics for Status.
import type { IndexedChunk } from '../chunks/chunk';
import type { LexicalMatch } from './bm25';

/** The chunks one search may see: loaded, or read one segment after another (stream.ts). */
export interface LexicalView {
	/** The `k` best matches of `query` (BM25, with the messages beside the best), best first. */
	search(query: string, k: number): LexicalMatch[] | Promise<LexicalMatch[]>;
	/** The chunk's terms that name something in this scope (names.ts). */
	names(chunk: IndexedChunk): string[];
	/** Reads what names() needs of these chunks, for a view that does not hold its segments. */
	prepareNames?(chunks: readonly IndexedChunk[]): Promise<void>;
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
