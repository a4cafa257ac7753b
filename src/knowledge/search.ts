// Search: lexical (BM25) and vector rankings of the captured chunks, fused by reciprocal rank, with an
// optional recency half-life and near-duplicates merged. A search names its scope (one conversation,
// one user, or every user on purpose), and refuses to answer from an index that is missing or behind.
import { CrossUserSearchError, InvalidInputError, InvalidOptionError } from '../errors';
import { validateId } from '../keys/ids';
import { fuse, newerFirst } from './fusion';
import type { Ranked } from './fusion';
import { clockOf, liveSessions } from './expiry';
import { checkIndexes } from './index-health';
import type { ChunkFilter } from './filter';
import type { LexicalView } from './lexical/lexical-index';
import type { BaseParts } from './parts';
import type { SearchMatch, SearchMode, SearchOptions } from './types';
import { MAX_TOP_K } from './vector-segment';
import type { VectorMatch } from './vector-segment';

/** Candidates each ranking hands to the fusion, at least (more when k is larger). */
const CANDIDATES = 50;
/** The best matches whose later mentions are looked for. */
const LATER_MENTIONS_OF = 10;

export function toMatch(m: Ranked): SearchMatch {
	return {
		text: m.text,
		score: m.score,
		sessionId: m.session_id,
		...(m.user_id !== undefined ? { userId: m.user_id } : {}),
		runId: m.run_id,
		messageId: m.message_id,
		seq: m.seq,
		chunkIndex: m.chunk_index,
		capturedAt: m.created_at,
		...(m.role !== undefined ? { role: m.role } : {}),
		...(m.metadata !== undefined ? { metadata: m.metadata } : {}),
		...(m.lexicalRank !== undefined ? { lexicalRank: m.lexicalRank } : {}),
		...(m.vectorRank !== undefined ? { vectorRank: m.vectorRank } : {}),
	};
}

function isoTime(field: string, value: unknown): string | undefined {
	if (value === undefined) return undefined;
	const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : null;
	if (!date || Number.isNaN(date.getTime()))
		throw new InvalidInputError(field, 'must be a date (a Date or an ISO 8601 text)');
	return date.toISOString();
}

/**
 * The search's scope and filters, checked before anything is read: a conversation, a user, or every
 * user only when asked for by name (allUsers). IDs must be strings, as everywhere.
 */
export function searchScope(p: BaseParts, options: SearchOptions): ChunkFilter {
	const sessionId =
		options.sessionId === undefined ? undefined : validateId('session_id', options.sessionId);
	const userId = options.userId === undefined ? undefined : validateId('user_id', options.userId);
	if (options.allUsers !== undefined && typeof options.allUsers !== 'boolean')
		throw new InvalidInputError('allUsers', 'must be true or false');
	if (sessionId === undefined && userId === undefined && options.allUsers !== true)
		throw new CrossUserSearchError(p.baseId);
	return {
		sessionId,
		userId,
		since: isoTime('since', options.since),
		until: isoTime('until', options.until),
	};
}

function searchMode(p: BaseParts, mode: SearchMode | undefined): SearchMode {
	const chosen = mode ?? (p.options.embedder || p.options.vectorStore ? 'hybrid' : 'lexical');
	if (chosen !== 'hybrid' && chosen !== 'lexical' && chosen !== 'vector')
		throw new InvalidOptionError('mode', 'must be "hybrid", "lexical" or "vector"');
	if (chosen !== 'lexical') p.embedder(chosen === 'vector' ? 'Vector search' : 'Hybrid search');
	return chosen;
}

function checkK(k: number): number {
	if (!Number.isSafeInteger(k) || k < 1 || k > MAX_TOP_K)
		throw new InvalidInputError('topK', `must be a whole number from 1 to ${MAX_TOP_K}`);
	return k;
}

async function vectorRanking(
	p: BaseParts,
	kbId: string,
	query: string,
	n: number,
	filter: ChunkFilter,
): Promise<VectorMatch[]> {
	const vector = await p.embedder('Search').embedQuery(query);
	const external = p.external();
	return external
		? (await external.search(vector, n, filter.sessionId)).filter(
				(m) => filter.userId === undefined || m.user_id === filter.userId,
			)
		: p.index(kbId).search(vector, n, filter, { withVectors: true });
}

/**
 * The `k` captured chunks that best match `query`, best first. Hybrid by default when an embedding
 * model is connected (lexical otherwise): both rankings fused by reciprocal rank (k = RRF_K), then an
 * optional recency half-life, then near-duplicates merged (identical text, or cosine ≥ 0.95); then,
 * unless the search is vector-only, the newer message naming what a top match names goes above it.
 */
export async function search(
	p: BaseParts,
	query: string,
	options: SearchOptions = {},
): Promise<SearchMatch[]> {
	if (typeof query !== 'string' || query.trim() === '')
		throw new InvalidInputError('query', 'is empty: give the text to search for');
	const k = checkK(options.k ?? 4);
	const filter = searchScope(p, options);
	const mode = searchMode(p, options.mode);
	if (options.halfLifeDays !== undefined && !(options.halfLifeDays > 0))
		throw new InvalidInputError('halfLifeDays', 'must be a number of days above 0');
	const config = await p.config();
	const kbId = await p.knowledgeBaseId(config);
	const n = Math.min(MAX_TOP_K, Math.max(CANDIDATES, 5 * k));
	// The health check and both rankings only read: run side by side, the check's verdict first.
	const settled = await Promise.allSettled([
		checkIndexes(p, config, kbId, mode, filter),
		mode === 'vector' ? undefined : p.lexical().view(filter),
		mode === 'lexical' ? [] : vectorRanking(p, kbId, query, n, filter),
	] as const);
	for (const r of settled) if (r.status === 'rejected') throw r.reason;
	const [, view, vector] = settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as [
		void,
		LexicalView | undefined,
		VectorMatch[],
	];
	const lexical = view?.search(query, n) ?? [];
	const halfLifeDays = options.halfLifeDays;
	const now = options.now ?? new Date();
	// Newer messages that name what the best matches name go right above them (see later-mentions.ts).
	const ranked = (limit: number) => {
		const fused = fuse(lexical, vector, { halfLifeDays, now, limit });
		const top = fused.slice(0, LATER_MENTIONS_OF);
		return view ? newerFirst(fused, top, view.laterMentions(top)) : fused;
	};
	const first = ranked(Math.max(k, LATER_MENTIONS_OF));
	// Only a base where some capture has an Expire After rule needs the logs of its hits read.
	if (!config?.expiring) return first.slice(0, k).map(toMatch);
	const live = await withoutExpired(p, first, k);
	// Expired conversations took places: rank everything (duplicates merged further down) and look again.
	if (live.length < k && first.length >= Math.max(k, LATER_MENTIONS_OF))
		return (await withoutExpired(p, ranked(Infinity), k)).map(toMatch);
	return live.map(toMatch);
}

/**
 * The best `k` hits whose conversation is not past its Expire After: its captures stay indexed until
 * they are deleted, but are never returned. Reads the logs of the conversations among the best hits
 * only, and more only when some were expired.
 */
async function withoutExpired(p: BaseParts, fused: Ranked[], k: number): Promise<Ranked[]> {
	const now = clockOf(p);
	const out: Ranked[] = [];
	const checked = new Map<string, boolean>();
	for (let from = 0; from < fused.length && out.length < k;) {
		const next = fused.slice(from, from + (k - out.length));
		from += next.length;
		const unknown = next.map((m) => m.session_id).filter((s) => !checked.has(s));
		const live = await liveSessions(p, unknown, now);
		for (const s of unknown) checked.set(s, live.has(s));
		out.push(...next.filter((m) => checked.get(m.session_id)));
	}
	return out;
}
