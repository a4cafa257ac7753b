// Search: the word ranking (BM25, with the messages beside the best matches) and the vector ranking
// (exact cosine) of the captured chunks, fused by scaled scores weighed by each ranking's evidence in
// this search and the base's earlier ones (fusion.ts), with an optional recency half-life, repeats
// merged and updated facts first. A search names its scope (one conversation, one user, or every user
// on purpose), and refuses to answer from an index that is missing or behind.
import {
	CrossUserSearchError,
	IndexMismatchError,
	InvalidInputError,
	InvalidOptionError,
} from '../errors';
import {
	chunkKey,
	fuse,
	MAX_TOP_K,
	NEWER_OF,
	newerFirst,
	normaliseRows,
	passes,
	SCALE_OVER,
} from '../indexes';
import type {
	ChunkFilter,
	LexicalView,
	SearchReads,
	Ranked,
	Similarities,
	VectorCandidate,
} from '../indexes';
import { validateId } from '../keys/ids';
import { BaseIndexes } from './base-indexes';
import { sessionUsers } from './capture-log';
import { clockOf, liveSessions } from './expiry';
import { fusionReport, hybridWeights } from './fusion';
import type { VectorSide } from './fusion';
import { checkIndexes } from './index-health';
import type { BaseParts } from './parts';
import type { MemoryBaseConfig } from './records';
import type { SearchMatch, SearchMode, SearchOptions, SearchReport } from './types';
import { upgradeIfIdle } from './upgrade';
import { readAhead } from './read-ahead';
import { coverageOf } from './wide';

/** Candidates each ranking hands to the fusion, at least (more when k is larger). */
const CANDIDATES = SCALE_OVER;

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
		...(m.similarity !== undefined ? { similarity: m.similarity } : {}),
		...(m.lexicalScore !== undefined ? { lexicalScore: m.lexicalScore } : {}),
		...(m.context ? { context: true } : {}),
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

/**
 * A cosine as search reports and orders it: to 6 decimals. Float32 rows carry about 7 digits, so two
 * texts with the same similarity can differ in the last ones by the order a sum was taken; rounded,
 * they tie, and ties go by when they were said (fusion.ts).
 */
const rounded = (cosine: number) => Math.round(cosine * 1e6) / 1e6;

/** Where a search reads: its filter, the base's indexes, and its conversation's users (partitions). */
interface Scope {
	filter: ChunkFilter;
	indexes: BaseIndexes;
	users: string[];
}

/**
 * The scope of a search: a conversation's search (without a user) reads each of its users' partitions.
 * Its indexes share one read of each manifest (the health check's and the rankings').
 */
async function scopeOf(
	p: BaseParts,
	filter: ChunkFilter,
	config: MemoryBaseConfig | null,
	reads: SearchReads,
) {
	const indexes = await BaseIndexes.open(p, config, reads);
	const spans = filter.userId === undefined && filter.sessionId !== undefined;
	const users = spans && indexes.kind !== 'single' ? await sessionUsers(p, filter.sessionId!) : [];
	return { filter, indexes, users };
}

interface VectorRanking {
	matches: VectorCandidate[];
	/** Scores more chunks of the scope (the embedded index; a connected store cannot). */
	similarities?: Similarities;
	/** What the fusion's weights need of the vector side. */
	side: VectorSide;
}

async function vectorRanking(
	p: BaseParts,
	scope: Scope,
	query: string,
	n: number,
	wanted?: Promise<Map<string, Set<number>> | undefined>,
): Promise<VectorRanking> {
	const { filter, indexes, users } = scope;
	const embedder = p.embedder('Search');
	const vector = await embedder.embedQuery(query);
	const dimensions = Array.isArray(vector) ? vector.length : 0;
	const external = p.external();
	const embed = (texts: string[]) => embedder.embedDocuments(texts);
	if (!external) {
		const r = await indexes.ranking(vector, n, filter, users, wanted);
		const probeRows = r.probe;
		const probe: VectorSide['probe'] =
			probeRows && (async (rows, k) => rows.map((row) => probeRows(normaliseRows([row], 1), k)));
		return { ...r, side: { scores: r.matches.map((m) => m.score), dimensions, probe, embed } };
	}
	const found = await external.search(vector, n, filter);
	const matches = found.filter((m) => passes(m, filter));
	if (found.length === 0 && filter.sessionId !== undefined)
		await refuseMissingSession(p, filter.sessionId);
	const probe: VectorSide['probe'] = async (rows, k) => {
		const lists = await Promise.all(rows.map((row) => external.search(row, k, filter)));
		return lists.map((l) => l.filter((m) => passes(m, filter)).map((m) => m.score));
	};
	return { matches, side: { scores: matches.map((m) => m.score), dimensions, probe, embed } };
}

/**
 * A connected store that returned nothing of a conversation its log says was embedded has lost its
 * vectors (rows deleted behind the base's back, another table or collection): a mismatch, as the
 * embedded index's missing segments are, never an answer from the words alone.
 */
async function refuseMissingSession(p: BaseParts, sessionId: string): Promise<void> {
	const { doc, version } = await p.logs.read(p.logKey(sessionId));
	if (version !== null && doc.total_processed > 0)
		throw new IndexMismatchError(
			p.baseId,
			`conversation "${sessionId}" has ${doc.total_processed} message(s) marked indexed, but the connected vector store holds none of them`,
		);
}

function checkOptions(options: SearchOptions): void {
	if (options.halfLifeDays !== undefined && !(options.halfLifeDays > 0))
		throw new InvalidInputError('halfLifeDays', 'must be a number of days above 0');
	const min = options.minSimilarity;
	if (min !== undefined && !(typeof min === 'number' && min >= -1 && min <= 1))
		throw new InvalidInputError('minSimilarity', 'must be a number from -1 to 1');
}

/** Fills in the cosine of the matches the vector ranking did not hand over (they ranked lower). */
async function withSimilarities(
	ranked: Ranked[],
	similarities: Similarities | undefined,
): Promise<Ranked[]> {
	if (!similarities) return ranked;
	const wanted = new Map<string, Set<number>>();
	const sessions = new Set<string>();
	for (const r of ranked) {
		if (r.similarity !== undefined) continue;
		const chunks = wanted.get(r.message_id) ?? new Set<number>();
		wanted.set(r.message_id, chunks.add(r.chunk_index));
		sessions.add(r.session_id);
	}
	if (wanted.size === 0) return ranked;
	const found = await similarities(wanted, sessions);
	for (const r of ranked) {
		const cosine = found.get(chunkKey(r));
		if (r.similarity === undefined && cosine !== undefined) r.similarity = rounded(cosine);
	}
	return ranked;
}

/** The query and options, checked before anything is read; the mode and the scope's filter. */
function checked(p: BaseParts, query: string, options: SearchOptions) {
	if (typeof query !== 'string' || query.trim() === '')
		throw new InvalidInputError('query', 'is empty: give the text to search for');
	const k = checkK(options.k ?? 4);
	const filter = searchScope(p, options);
	const mode = searchMode(p, options.mode);
	checkOptions(options);
	if (options.minSimilarity !== undefined && mode === 'lexical')
		throw new InvalidInputError(
			'minSimilarity',
			'needs an embedding model (vector or hybrid search)',
		);
	return { k, filter, mode };
}

/** The chunks a ranking names, by message ID and chunk indexes (what similarities are asked for). */
function namedIn(ranked: readonly Ranked[]): Map<string, Set<number>> {
	const out = new Map<string, Set<number>>();
	for (const r of ranked)
		out.set(r.message_id, (out.get(r.message_id) ?? new Set()).add(r.chunk_index));
	return out;
}

/**
 * The health check and both rankings, read side by side (they only read), the check's verdict first.
 * The word ranking's chunks are handed to the vector ranking as soon as it has them: a ranking read
 * segment after segment (every conversation's) scores them on its one pass instead of reading their
 * conversations' segments again.
 */
async function rankings(
	p: BaseParts,
	config: MemoryBaseConfig | null,
	scope: Scope,
	query: string,
	mode: SearchMode,
	n: number,
) {
	let handOver: (named: Map<string, Set<number>> | undefined) => void = () => {};
	const wanted = new Promise<Map<string, Set<number>> | undefined>((r) => (handOver = r));
	const words = async () => {
		try {
			if (mode === 'vector') return { lexical: [] as Ranked[] };
			const view = await scope.indexes.view(scope.filter, scope.users);
			const lexical = await view.search(query, n);
			handOver(namedIn(lexical));
			return { view, lexical };
		} finally {
			handOver(undefined); // a failed word ranking leaves the vector ranking to read as before
		}
	};
	const settled = await Promise.allSettled([
		checkIndexes(p, config, scope.indexes, mode, scope.filter, scope.users),
		words(),
		mode === 'lexical' ? undefined : vectorRanking(p, scope, query, n, wanted),
	] as const);
	for (const r of settled) if (r.status === 'rejected') throw r.reason;
	const [, found, vector] = settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as [
		void,
		{ view?: LexicalView; lexical: Ranked[] },
		VectorRanking | undefined,
	];
	return { ...found, vector };
}

/**
 * The `k` captured chunks that best match `query`, best first, and what the search did: how the fusion
 * weighed its rankings, how common the query's words are, and for a search of every conversation what
 * it read (coverageOf). Hybrid by default when an embedding model is connected (lexical otherwise):
 * both rankings scaled and fused with the weights their evidence earns (fusion.ts, indexes/fusion/),
 * then an optional recency half-life, then repeats merged (the same words); then, unless the search is
 * vector-only, the newer of two matches naming the same thing goes first. With minSimilarity, matches
 * whose cosine with the query is lower (or unknown) are left out.
 */
export async function searchReport(
	p: BaseParts,
	query: string,
	options: SearchOptions = {},
): Promise<SearchReport> {
	const { k, filter, mode } = checked(p, query, options);
	const readsFor = readAhead(p, filter, mode);
	// A base in an older layout is upgraded by the first search that finds it idle (upgrade.ts).
	const config = await upgradeIfIdle(p, await p.config());
	const scope = await scopeOf(p, filter, config, readsFor(config));
	// The same candidates for any k up to CANDIDATES: a search for more results orders its first ones alike.
	const n = Math.min(MAX_TOP_K, Math.max(CANDIDATES, k));
	const { view, lexical, vector } = await rankings(p, config, scope, query, mode, n);
	const allWordMatches = lexical.length < CANDIDATES;
	const everyone = options.allUsers === true && filter.userId === undefined && !filter.sessionId;
	const weights =
		mode === 'hybrid' && view && vector
			? await hybridWeights(
					p,
					{ kbId: await p.knowledgeBaseId(config), createdAt: config?.created_at },
					view,
					lexical.map((c) => c.score),
					// Every conversation is weighed as the base's own searches taught (no probes): a probe
					// would cost a pass over the whole base, and both ways of reading it (the base-wide
					// index, or every partition while it is built) must answer alike.
					everyone ? { ...vector.side, probe: undefined } : vector.side,
					CANDIDATES,
				)
			: undefined;
	const fused = fuse(lexical, vector?.matches ?? [], {
		halfLifeDays: options.halfLifeDays,
		now: options.now ?? new Date(),
		allWordMatches,
		weights,
	});
	const ranked = await ordered(fused, view, vector, options);
	// Only a base where some capture has an Expire After rule needs the logs of its hits read.
	const best = config?.expiring ? await withoutExpired(p, ranked, k) : ranked.slice(0, k);
	// The fusion ranked on the rankings' own scores: only what is returned needs its cosine filled in
	// (for a search of every conversation, each conversation's segments read again).
	if (vector) await withSimilarities(best, vector.similarities);
	const coverage = everyone
		? await coverageOf(scope.indexes, config, mode !== 'lexical' && !p.external())
		: undefined;
	const words = view && (await wordsOf(view, query));
	return {
		matches: best.map(toMatch),
		fusion: fusionReport(mode, weights),
		...(words ? { words } : {}),
		...(coverage ? { coverage } : {}),
	};
}

/** Newer statements first (with a half-life), and minSimilarity (every match's cosine filled in). */
async function ordered(
	fused: Ranked[],
	view: LexicalView | undefined,
	vector: VectorRanking | undefined,
	options: SearchOptions,
): Promise<Ranked[]> {
	const min = options.minSimilarity;
	let ranked =
		vector && min !== undefined ? await withSimilarities(fused, vector.similarities) : fused;
	// Newer statements first is part of preferring what is recent: only with a half-life.
	if (view && options.halfLifeDays !== undefined) {
		await view.prepareNames?.(ranked.slice(0, NEWER_OF));
		ranked = newerFirst(ranked, (c) => view.names(c));
	}
	if (min !== undefined)
		ranked = ranked.filter((r) => r.similarity !== undefined && r.similarity >= min);
	return ranked;
}

/** How many messages the search's scope holds, and how many of them hold each query word. */
async function wordsOf(view: LexicalView, query: string): Promise<SearchReport['words']> {
	const terms = await view.frequencies(query);
	return { messages: view.size, terms: terms.map(({ term, df }) => ({ term, messages: df })) };
}

/** The matches of searchReport alone. */
export async function search(
	p: BaseParts,
	query: string,
	options: SearchOptions = {},
): Promise<SearchMatch[]> {
	return (await searchReport(p, query, options)).matches;
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
