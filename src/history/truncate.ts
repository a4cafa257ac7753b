import { InvalidOptionError } from '../errors';
import type { StoredMessage } from '../store/schema';
import { MESSAGE_FRAMING_TOKENS } from '../prompt/request-tokens';

export const DEFAULT_MAX_TOKEN_LIMIT = 2000;
/** Upper bound on turns in a history, whatever the window (as Dify caps its query at 500). */
export const MAX_HISTORY_TURNS = 500;

/** One dialogue turn: a user message and the replies that answer it. */
export interface Turn {
	user: StoredMessage;
	replies: StoredMessage[];
	tokens: number;
}

export interface HistorySelection {
	/** Oldest first. */
	turns: Turn[];
	tokens: number;
	/** Complete turns on the thread that did not fit the budget or the window. */
	droppedTurns: number;
}

export interface SelectOptions {
	maxTokenLimit?: number;
	/** Window: the most turns to keep. Missing, 0 or negative means MAX_HISTORY_TURNS. */
	messageLimit?: number | null;
}

export function effectiveWindow(messageLimit: number | null | undefined): number {
	if (
		messageLimit !== undefined &&
		messageLimit !== null &&
		(typeof messageLimit !== 'number' || Number.isNaN(messageLimit))
	)
		throw new InvalidOptionError(
			'messageLimit',
			`must be a number of turns, got ${String(messageLimit)}`,
		);
	return messageLimit && messageLimit > 0
		? Math.min(Math.floor(messageLimit), MAX_HISTORY_TURNS)
		: MAX_HISTORY_TURNS;
}

/** The token budget; never unbounded: a limit that is not a finite number ≥ 0 is an error naming it. */
export function tokenLimit(maxTokenLimit: number | undefined): number {
	if (maxTokenLimit === undefined) return DEFAULT_MAX_TOKEN_LIMIT;
	if (typeof maxTokenLimit !== 'number' || !Number.isFinite(maxTokenLimit) || maxTokenLimit < 0)
		throw new InvalidOptionError(
			'maxTokenLimit',
			`must be a finite number ≥ 0, got ${String(maxTokenLimit)}`,
		);
	return maxTokenLimit;
}

/** A turn counts once it has a final answer: tool steps alone (an interrupted tool turn) do not. */
function answered(replies: StoredMessage[]): boolean {
	const last = replies[replies.length - 1];
	return (
		last !== undefined &&
		last.role === 'assistant' &&
		!last.tool_calls &&
		(last.content.length > 0 || last.files.length > 0)
	);
}

/**
 * The answered turns of a thread given newest first, newest first, each with its stored token counts
 * and their messages' framing.
 * Replies before a turn's user message join it; unanswered turns are skipped. Lazy: a caller that stops
 * early reads no further.
 */
export function* turnsOf(newestFirst: Iterable<StoredMessage>): Generator<Turn> {
	let replies: StoredMessage[] = [];
	for (const m of newestFirst) {
		if (m.role !== 'user') {
			replies.push(m);
			continue;
		}
		const turnReplies = replies.reverse();
		replies = [];
		if (!answered(turnReplies)) continue;
		let tokens = m.token_count + MESSAGE_FRAMING_TOKENS;
		for (const r of turnReplies) tokens += r.token_count + MESSAGE_FRAMING_TOKENS;
		yield { user: m, replies: turnReplies, tokens };
	}
}

/**
 * Picks the newest whole turns that fit, from a thread given newest first, using stored token counts only.
 * History never starts with an assistant message, never splits a turn and skips unanswered turns.
 * Stops at the first turn that does not fit: even the newest turn alone over budget gives no history.
 */
export function selectHistory(
	newestFirst: Iterable<StoredMessage>,
	options: SelectOptions = {},
): HistorySelection {
	const limit = tokenLimit(options.maxTokenLimit);
	const window = effectiveWindow(options.messageLimit);
	const kept: Turn[] = [];
	let tokens = 0;
	let droppedTurns = 0;
	for (const turn of turnsOf(newestFirst)) {
		// Once full, the rest only counts: the walk still runs to the end (callers count on it).
		if (droppedTurns > 0 || kept.length >= window || tokens + turn.tokens > limit) {
			droppedTurns++;
			continue;
		}
		tokens += turn.tokens;
		kept.push(turn);
	}
	return { turns: kept.reverse(), tokens, droppedTurns };
}
