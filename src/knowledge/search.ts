// Search: the captured chunks most similar to a query, from the embedded index or a connected store.
import { InvalidInputError } from '../errors';
import { validateId } from '../keys/ids';
import type { BaseParts } from './parts';
import type { SearchMatch } from './types';
import { MAX_TOP_K } from './vector-segment';
import type { VectorMatch } from './vector-segment';

export function toMatch(m: VectorMatch): SearchMatch {
	return {
		text: m.text,
		score: m.score,
		sessionId: m.session_id,
		runId: m.run_id,
		messageId: m.message_id,
		seq: m.seq,
		chunkIndex: m.chunk_index,
		capturedAt: m.created_at,
		...(m.role !== undefined ? { role: m.role } : {}),
		...(m.metadata !== undefined ? { metadata: m.metadata } : {}),
	};
}

/**
 * The `k` captured chunks most similar to `query` (cosine similarity of embeddings), best first;
 * only one session's with `sessionId`. Reads the base's own knowledge base, hidden or not.
 */
export async function search(
	p: BaseParts,
	query: string,
	options: { k?: number; sessionId?: string } = {},
): Promise<SearchMatch[]> {
	if (typeof query !== 'string' || query.trim() === '')
		throw new InvalidInputError('query', 'is empty: give the text to search for');
	const k = options.k ?? 4;
	if (!Number.isSafeInteger(k) || k < 1 || k > MAX_TOP_K)
		throw new InvalidInputError('topK', `must be a whole number from 1 to ${MAX_TOP_K}`);
	const sessionId =
		options.sessionId === undefined ? undefined : validateId('session_id', options.sessionId);
	const vector = await p.embedder('Search').embedQuery(query);
	const external = p.external();
	const matches = external
		? await external.search(vector, k, sessionId)
		: await p.index(await p.knowledgeBaseId()).search(vector, k, sessionId);
	return matches.map(toMatch);
}
