// Automatic recall: before a model call, the captured messages that best match the user's message,
// minus those the short-term window already holds, as one marked section with their dates, within a
// token budget. What LLM with Memory and the LLM Memory Store put in front of the conversation.
import { InvalidInputError } from '../errors';
import type { TokenCounter } from '../tokens/tokens';
import type { BaseParts } from './parts';
import { search } from './search';
import type { SearchMatch } from './types';

export const RECALL_START = '[Long-term memory]';
export const RECALL_END = '[End of long-term memory]';
/** Half-life of automatic recall: a newer statement of a fact outranks an older one of the same weight. */
export const RECALL_HALF_LIFE_DAYS = 180;

export interface RecallOptions {
	/** What to look for: the user's message. */
	query: string;
	/** This user's conversations (all of them), or this conversation only. One of the two. */
	userId?: string;
	sessionId?: string;
	/** Recalled entries at most (default 5). */
	k?: number;
	/** Tokens the section may take, markers included (default 500). */
	tokenBudget?: number;
	/** Chat message IDs already in the short-term window (a capture's metadata.messageId): left out. */
	excludeMessageIds?: Iterable<string>;
	/** Default RECALL_HALF_LIFE_DAYS; 0 turns recency off. */
	halfLifeDays?: number;
	/** Counts tokens as the node's budget does (default: about 4 characters a token). */
	counter?: Pick<TokenCounter, 'count'>;
	now?: Date;
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

/** Searches the base for `query` in one user's (or one conversation's) memories and builds the section. */
export async function recall(p: BaseParts, options: RecallOptions): Promise<RecallResult> {
	const k = options.k ?? 5;
	const budget = options.tokenBudget ?? 500;
	if (!Number.isSafeInteger(budget) || budget < 0)
		throw new InvalidInputError('tokenBudget', 'must be a whole number of tokens, 0 or more');
	const exclude = new Set(options.excludeMessageIds ?? []);
	const halfLife = options.halfLifeDays ?? RECALL_HALF_LIFE_DAYS;
	if (budget === 0 || options.query.trim() === '')
		return { section: '', hits: [], tokens: 0, skipped: 0 };
	const found = await search(p, options.query, {
		k: Math.min(1000, k + exclude.size + 10),
		userId: options.userId,
		sessionId: options.userId === undefined ? options.sessionId : undefined,
		halfLifeDays: halfLife > 0 ? halfLife : undefined,
		now: options.now,
	});
	const fresh = found.filter((h) => {
		const id = h.metadata?.messageId;
		return !(typeof id === 'string' && exclude.has(id));
	});
	const chosen = recallSection(fresh.slice(0, k), budget, options.counter ?? approx);
	const overBudget = Math.min(k, fresh.length) - chosen.hits.length;
	return { ...chosen, skipped: found.length - fresh.length + overBudget };
}
