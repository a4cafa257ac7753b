// History with a rolling summary of the turns that no longer fit the budget (Summarize Older Turns).
//
// A summary covers a thread from its start up to a boundary message and is kept beside the memory
// (summary-store.ts). A read walks the thread back from the new turn's parent until it meets the
// boundary of a stored summary: that is the newest summary on this thread (a summary of another branch
// is never met), and the walk stays short because the turns after a boundary are few. The turns after
// it fill the budget left after the summary's section, newest first; the ones that no longer fit wait
// until they exceed the threshold, then are folded into the summary in one call, with the oldest kept
// turns up to the threshold so the next call waits twice as long
// (new summary = summarize(previous summary + those turns)), so each turn is summarized once and the
// section stays byte for byte the same between calls.
import { CorruptDocumentError, InvalidOptionError, SummaryFailedError } from '../errors';
import type { PromptMessage } from '../prompt/types';
import type { Versioned } from '../store/document-store';
import type { StoredMessage } from '../store/schema';
import type { BufferMemory, HistoryOptions } from './buffer-memory';
import type { StoredSummary, SummaryDocument, SummaryStore } from './summary-store';
import { summaryRequest, summarySection } from './summary-text';
import { walkThreadIn } from './thread';
import { promptHistory } from './thread-view';
import type { History, SummaryReport, ThreadView } from './thread-view';
import { effectiveWindow, tokenLimit, turnsOf } from './truncate';
import type { Turn } from './truncate';

/** Calls a model with the summarization request and returns its text. */
export type Summarizer = (request: PromptMessage[]) => Promise<string>;

export interface SummaryOptions {
	summarize: Summarizer;
	/**
	 * Summarize once the turns that no longer fit, and are not summarized yet, hold more than this many
	 * tokens (default: a quarter of the budget). Higher: fewer calls, more turns dropped meanwhile.
	 */
	threshold?: number;
	/** Most tokens the summary's section may take, markers included (default: a third of the budget). */
	maxTokens?: number;
	/** Whether this read may call `summarize` (default true); false uses what is stored. */
	refresh?: boolean;
}

/** How far back a read looks for a summary on its thread, and how much one call folds, in budgets. */
const LOOKBACK_BUDGETS = 8;
const FOLD_BUDGETS = 2;
/** The budget those are measured in is at least this many tokens. */
const MIN_SPAN_TOKENS = 500;

/** The threshold and the section's cap for a budget; an unusable value is an error naming it. */
export function summaryLimits(
	budget: number,
	options: SummaryOptions,
): { threshold: number; maxTokens: number } {
	if (typeof options.summarize !== 'function')
		throw new InvalidOptionError('summary.summarize', 'must be a function that calls a model');
	const threshold = options.threshold ?? Math.floor(budget / 4);
	const maxTokens = options.maxTokens ?? Math.floor(budget / 3);
	for (const [name, value] of [
		['summary.threshold', threshold],
		['summary.maxTokens', maxTokens],
	] as const)
		if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
			throw new InvalidOptionError(name, `must be a finite number ≥ 0, got ${String(value)}`);
	return { threshold, maxTokens: Math.min(maxTokens, budget) };
}

interface Read {
	view: ThreadView;
	store: SummaryStore;
	budget: number;
	window: number;
	limits: { threshold: number; maxTokens: number };
	options: SummaryOptions;
}

/** A summary with the turns after it split into those shown in full and those that no longer fit. */
interface Plan {
	summary?: StoredSummary;
	section?: { section: string; tokens: number };
	/** Newest first. */
	kept: Turn[];
	keptTokens: number;
	/** Newest first: dropped from view and not in the summary. */
	gap: Turn[];
}

function planFor(read: Read, summary: StoredSummary | undefined, newestFirst: Turn[]): Plan {
	const section = summary
		? summarySection(summary, read.limits.maxTokens, read.view.counter)
		: undefined;
	const limit = read.budget - (section?.tokens ?? 0);
	let tokens = 0;
	let i = 0;
	// As selectHistory: whole turns, newest first, stopping at the first that does not fit.
	while (i < newestFirst.length && i < read.window && tokens + newestFirst[i].tokens <= limit)
		tokens += newestFirst[i++].tokens;
	return {
		summary: section ? summary : undefined,
		section,
		kept: newestFirst.slice(0, i),
		keptTokens: tokens,
		gap: newestFirst.slice(i),
	};
}

/**
 * The thread newest first, back to (not including) the boundary of a stored summary, the root, or,
 * once `maxTokens` were read, the start of a turn. Only as many sealed segments are read as that needs.
 */
async function walkBack(
	view: ThreadView,
	known: ReadonlyMap<string, StoredSummary>,
	maxTokens: number,
): Promise<{ messages: StoredMessage[]; summary?: StoredSummary }> {
	const messages: StoredMessage[] = [];
	let tokens = 0;
	for await (const m of walkThreadIn(view.span, view.loader, view.start)) {
		const summary = m.role === 'assistant' ? known.get(m.message_id) : undefined;
		if (summary) return { messages, summary };
		messages.push(m);
		tokens += m.token_count;
		if (m.role === 'user' && tokens >= maxTokens) break;
	}
	return { messages };
}

/**
 * Folds the oldest turns of the gap (at most FOLD_BUDGETS budgets of them, at least one whole turn)
 * into the summary and stores the result. A failed call leaves everything as it was and says why.
 */
async function fold(
	read: Read,
	previous: StoredSummary | undefined,
	gap: Turn[],
): Promise<{ summary?: StoredSummary; folded: number; error?: string }> {
	const room = FOLD_BUDGETS * Math.max(read.budget, MIN_SPAN_TOKENS);
	const chunk: Turn[] = [];
	let tokens = 0;
	for (const t of [...gap].reverse()) {
		if (chunk.length > 0 && tokens + t.tokens > room) break;
		chunk.push(t);
		tokens += t.tokens;
	}
	let text: string;
	try {
		text = String(
			await read.options.summarize(summaryRequest(previous?.text, chunk, read.limits.maxTokens)),
		).trim();
	} catch (error) {
		return {
			folded: 0,
			error: new SummaryFailedError((error as Error)?.message ?? String(error)).message,
		};
	}
	if (!text)
		return { folded: 0, error: new SummaryFailedError('the model answered with no text').message };
	const last = chunk[chunk.length - 1];
	const boundary = last.replies[last.replies.length - 1];
	const draft: StoredSummary = {
		boundary: boundary.message_id,
		previous: previous?.boundary ?? null,
		text,
		turns: (previous?.turns ?? 0) + chunk.length,
		first_at: previous?.first_at ?? chunk[0].user.created_at,
		last_at: boundary.created_at,
		created_at: read.view.now().toISOString(),
	};
	// Stored as the model's text cut to the cap, so every later read shows exactly what this one does.
	const fitted = summarySection(draft, read.limits.maxTokens, read.view.counter);
	if (!fitted) return { folded: 0, error: tooSmall(read) };
	const summary = { ...draft, text: fitted.text };
	try {
		return { summary: await read.store.add(summary), folded: chunk.length };
	} catch (error) {
		return {
			summary,
			folded: chunk.length,
			error: `A new summary was made but could not be stored, so only this turn uses it: ${(error as Error).message}`,
		};
	}
}

const tokensOf = (turns: readonly Turn[]) => turns.reduce((n, t) => n + t.tokens, 0);

/**
 * The oldest kept turns (newest first, as `kept` is) that a fold takes along, up to `threshold` tokens
 * and never the newest: the history then has that much room, so the next fold waits until the room
 * and the threshold are both used up (about twice as many turns as folding the overflow alone).
 */
function headroom(kept: readonly Turn[], threshold: number): Turn[] {
	let tokens = 0;
	let n = 0;
	for (let i = kept.length - 1; i > 0 && tokens + kept[i].tokens <= threshold; i--) {
		tokens += kept[i].tokens;
		n++;
	}
	return kept.slice(kept.length - n);
}

/** Whether the cap leaves room for a summary at all (its frame alone takes about 40 tokens). */
function canHoldSummary(read: Read): boolean {
	const at = read.view.now().toISOString();
	const probe = {
		boundary: '-',
		previous: null,
		text: '…',
		turns: 100,
		first_at: at,
		last_at: at,
		created_at: at,
	};
	return summarySection(probe, read.limits.maxTokens, read.view.counter) !== undefined;
}

function tooSmall(read: Read): string {
	return new SummaryFailedError(
		`a summary does not fit in ${read.limits.maxTokens} tokens (the summary's token cap); raise it or Max History Tokens`,
	).message;
}

/** The stored summaries, or the error that says why they cannot be read (never "none"). */
async function readStored(store: SummaryStore): Promise<Versioned<SummaryDocument> | Error> {
	try {
		return await store.read();
	} catch (error) {
		if (error instanceof CorruptDocumentError) return error;
		throw error;
	}
}

/**
 * The history for a new turn with a summary of older turns in front (see the top of this file).
 * Summary section plus history stay within the budget. A summarizer that fails, or summaries that
 * cannot be read, never fail the turn: it runs as with dropping oldest turns (an earlier summary, if
 * readable, still shown) and `summary.error` says why; nothing stored is changed or lost.
 */
export async function summarizedHistory(
	memory: BufferMemory,
	options: HistoryOptions,
	summaryOptions: SummaryOptions,
): Promise<History> {
	const budget = tokenLimit(options.maxTokenLimit);
	const limits = summaryLimits(budget, summaryOptions);
	const store = memory.summaries();
	const [view, stored] = await Promise.all([memory.openThread(options), readStored(store)]);
	const read: Read = {
		view,
		store,
		budget,
		window: effectiveWindow(options.messageLimit),
		limits,
		options: summaryOptions,
	};
	const known = new Map(
		stored instanceof Error ? [] : stored.doc.summaries.map((s) => [s.boundary, s]),
	);
	const walked = await walkBack(view, known, LOOKBACK_BUDGETS * Math.max(budget, MIN_SPAN_TOKENS));
	const turns = [...turnsOf(walked.messages)];
	let plan = planFor(read, walked.summary, turns);
	let refreshed = false;
	let error =
		stored instanceof Error
			? `The stored summaries cannot be read, so none was used or written: ${stored.message}`
			: undefined;
	if (!error && summaryOptions.refresh !== false && tokensOf(plan.gap) > limits.threshold) {
		const result = canHoldSummary(read)
			? await fold(read, plan.summary, [...headroom(plan.kept, limits.threshold), ...plan.gap])
			: { folded: 0, error: tooSmall(read) };
		error = result.error;
		if (result.summary) {
			refreshed = true;
			plan = planFor(read, result.summary, turns.slice(0, turns.length - result.folded));
		}
	}
	const history = await promptHistory(
		view,
		{
			turns: [...plan.kept].reverse(),
			tokens: plan.keptTokens,
			droppedTurns: plan.gap.length + (plan.summary?.turns ?? 0),
		},
		options.imageDetail,
	);
	return { ...history, summary: report(plan, refreshed, error) };
}

function report(plan: Plan, refreshed: boolean, error?: string): SummaryReport {
	const s = plan.summary;
	return {
		section: plan.section?.section ?? '',
		tokens: plan.section?.tokens ?? 0,
		turns: s?.turns ?? 0,
		refreshed,
		...(s ? { firstAt: s.first_at, lastAt: s.last_at, boundary: s.boundary } : {}),
		unsummarizedTurns: plan.gap.length,
		unsummarizedTokens: tokensOf(plan.gap),
		...(error ? { error } : {}),
	};
}
