// Automatic recall: before a model call, the captured messages that best match the user's message,
// minus those the short-term window already holds, as one marked section with their dates, within a
// token budget. What LLM with Memory and the LLM Memory Store put in front of the conversation. A
// message that carries nothing to look up for this memory recalls nothing (relevance.ts), and a recall
// that finds nothing says why.
import { InvalidInputError } from '../errors';
import type { TokenCounter } from '../tokens/tokens';
import type { BaseParts } from './parts';
import { relevant } from './relevance';
import { searchReport } from './search';
import { isSmallTalk } from './small-talk';
import { RECALL_HALF_LIFE_DAYS } from './types';
import type { FusionReport, SearchMatch } from './types';

export const RECALL_START = '[Long-term memory]';
export const RECALL_END = '[End of long-term memory]';
export { RECALL_HALF_LIFE_DAYS } from './types';
/** Candidates searched beyond Top K, for those the window already holds. */
const EXTRA_CANDIDATES = 10;
/**
 * Candidates searched at least: the relevance floor may leave out the best fused matches (the vectors'
 * when they did not stand out) and keep a word match ranked lower.
 */
const MIN_CANDIDATES = 50;

export interface RecallSearch {
	/** What to look for: the user's message. */
	query: string;
	/** This user's conversations (all of them), or this conversation only. One of the two. */
	userId?: string;
	sessionId?: string;
	/** Recalled entries at most (default 5). */
	k?: number;
	/** Chat message IDs already in the short-term window (a capture's metadata.messageId): left out. */
	excludeMessageIds?: Iterable<string>;
	/** Default RECALL_HALF_LIFE_DAYS; 0 turns recency off. */
	halfLifeDays?: number;
	/** Only matches at least this similar to the message (cosine; needs an embedding model). */
	minSimilarity?: number;
	now?: Date;
}

export interface RecallOptions extends RecallSearch {
	/** Tokens the section may take, markers included (default 500). */
	tokenBudget?: number;
	/** Counts tokens as the node's budget does (default: about 4 characters a token). */
	counter?: Pick<TokenCounter, 'count'>;
}

/** What a recall search found, before the window and the budget: its matches, or why there are none. */
export interface RecallCandidates {
	hits: SearchMatch[];
	/** Why nothing was found (set only when `hits` is empty). */
	reason?: string;
	/** What the search's fusion did (absent when nothing was searched). */
	fusion?: FusionReport;
}

export interface RecallResult {
	/** The section to put before the conversation; '' when nothing was recalled. */
	section: string;
	/** The entries in it, oldest first. */
	hits: SearchMatch[];
	/** Its tokens (0 when empty). */
	tokens: number;
	/** Matches left out: already in the window, or over the budget. */
	skipped: number;
	/** Why nothing was recalled (set only when `hits` is empty). */
	reason?: string;
	/** What the search's fusion did (absent when nothing was searched). */
	fusion?: FusionReport;
}

const approx = { count: (text: string) => Math.ceil(text.length / 4) };

function line(hit: SearchMatch): string {
	const who = hit.role ? ` ${hit.role}` : '';
	return `- ${hit.capturedAt.slice(0, 10)}${who}: ${hit.text.replace(/\s+/g, ' ').trim()}`;
}

const HEADER =
	'Facts recalled from earlier conversations, with the date each was said (newest last). They may be out of date: what the user says now takes precedence.';

/** The marked section for these entries, oldest first, as many as fit the budget in relevance order. */
export function recallSection(
	hits: SearchMatch[],
	budget: number,
	counter: Pick<TokenCounter, 'count'>,
): { section: string; hits: SearchMatch[]; tokens: number } {
	const frame = [RECALL_START, HEADER, RECALL_END].join('\n');
	let tokens = counter.count(frame);
	const kept: SearchMatch[] = [];
	for (const hit of hits) {
		const cost = counter.count(`${line(hit)}\n`);
		if (tokens + cost > budget) continue;
		tokens += cost;
		kept.push(hit);
	}
	if (kept.length === 0) return { section: '', hits: [], tokens: 0 };
	kept.sort((a, b) => (a.capturedAt < b.capturedAt ? -1 : a.capturedAt > b.capturedAt ? 1 : 0));
	const section = [RECALL_START, HEADER, ...kept.map(line), RECALL_END].join('\n');
	return { section, hits: kept, tokens: counter.count(section) };
}

/**
 * The matches automatic recall may use for `query` (Top K plus those the window may hold), or why
 * there are none: small talk is not searched at all.
 */
export async function recallCandidates(
	p: BaseParts,
	options: RecallSearch,
): Promise<RecallCandidates> {
	if (typeof options.query !== 'string')
		throw new InvalidInputError('query', 'must be the text of the message');
	if (isSmallTalk(options.query))
		return {
			hits: [],
			reason: 'nothing to look up: the message is small talk or has no words to recall by',
		};
	const k = options.k ?? 5;
	const exclude = [...(options.excludeMessageIds ?? [])];
	const halfLife = options.halfLifeDays ?? RECALL_HALF_LIFE_DAYS;
	const found = await searchReport(p, options.query, {
		k: Math.min(1000, Math.max(MIN_CANDIDATES, k + exclude.length + EXTRA_CANDIDATES)),
		userId: options.userId,
		sessionId: options.userId === undefined ? options.sessionId : undefined,
		halfLifeDays: halfLife > 0 ? halfLife : undefined,
		minSimilarity: options.minSimilarity,
		now: options.now,
	});
	const { hits, reason } = relevant(found);
	if (hits.length > 0) return { hits, fusion: found.fusion };
	const floor = options.minSimilarity;
	return {
		hits,
		fusion: found.fusion,
		reason:
			reason ??
			(floor === undefined
				? 'no captured message matches the message'
				: `no captured message is at least ${floor} similar to the message (Minimum Similarity)`),
	};
}

/**
 * The section from recall candidates: the best `k` the window does not hold (`inWindow`: chat message
 * IDs), within the budget; and why nothing was recalled, when nothing was.
 */
export function chooseRecall(
	found: RecallCandidates,
	options: {
		k?: number;
		tokenBudget?: number;
		inWindow?: Iterable<string>;
		counter?: Pick<TokenCounter, 'count'>;
	},
): RecallResult {
	const k = options.k ?? 5;
	const budget = options.tokenBudget ?? 500;
	const inWindow = new Set(options.inWindow ?? []);
	const fresh = found.hits.filter((h) => {
		const id = h.metadata?.messageId;
		return !(typeof id === 'string' && inWindow.has(id));
	});
	const chosen = recallSection(fresh.slice(0, k), budget, options.counter ?? approx);
	const overBudget = Math.min(k, fresh.length) - chosen.hits.length;
	const skipped = found.hits.length - fresh.length + overBudget;
	const result = { ...chosen, skipped, ...(found.fusion ? { fusion: found.fusion } : {}) };
	if (chosen.hits.length > 0) return result;
	const reason =
		found.reason ??
		(fresh.length === 0
			? `the ${found.hits.length === 1 ? 'match is' : `${found.hits.length} matches are`} already in the conversation's window`
			: `no match fits the Recall Token Budget of ${budget} tokens`);
	return { ...result, reason };
}

/** Searches the base for `query` in one user's (or one conversation's) memories and builds the section. */
export async function recall(p: BaseParts, options: RecallOptions): Promise<RecallResult> {
	const budget = options.tokenBudget ?? 500;
	if (!Number.isSafeInteger(budget) || budget < 0)
		throw new InvalidInputError('tokenBudget', 'must be a whole number of tokens, 0 or more');
	if (budget === 0)
		return { section: '', hits: [], tokens: 0, skipped: 0, reason: 'the Recall Token Budget is 0' };
	const found = await recallCandidates(p, options);
	return chooseRecall(found, {
		k: options.k,
		tokenBudget: budget,
		inWindow: options.excludeMessageIds,
		counter: options.counter,
	});
}
