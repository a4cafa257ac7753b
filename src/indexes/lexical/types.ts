// What the lexical index hands out: a loaded view for one search, and its statistics for Status.
import type { IndexedChunk } from '../chunks/chunk';
import type { LexicalMatch } from './bm25';

/** The chunks one search may see: loaded, or read one segment after another (stream.ts). */
export interface LexicalView {
	/** The `k` best matches of `query` (BM25, with the messages beside the best), best first. */
	search(query: string, k: number): LexicalMatch[] | Promise<LexicalMatch[]>;
	/** The chunk's terms that name something in this scope (names.ts). */
	names(chunk: IndexedChunk): string[];
	/** Chunks the search may return (a view read one segment at a time knows it after a search). */
	readonly size: number;
	/** How many of them hold each distinct term of `query` (its words as the index has them). */
	frequencies(
		query: string,
	): Array<{ term: string; df: number }> | Promise<Array<{ term: string; df: number }>>;
	/**
	 * The texts of `count` chunks in scope picked at random by `rand` (none when the scope is empty).
	 * Absent from a view that does not hold its segments: a sample would cost a pass over the index.
	 */
	sample?(count: number, rand: () => number): string[];
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
