// How a memory document's log behaves: when it seals, and what the history layer says about threads.
import { InvalidOptionError } from '../errors';
import type { StoredMessage } from './schema';

/**
 * When a head seals its oldest messages into a write-once segment (docs/format.md). The defaults keep a
 * turn's write under 64 KB for chat-sized messages and the head's messages enough for a 2,000-token
 * history without loading a segment.
 */
export interface LogOptions {
	/** The head holds at most this many messages; one more seals the oldest (default 128). */
	tailMessages: number;
	/** After sealing, at most this many of the newest messages stay in the head (default 96). */
	keepMessages: number;
	/**
	 * The head's messages may exceed about this many bytes (JSON) only while they are few (see
	 * minMessages); past it the oldest are sealed until the rest fit in three quarters of it (default 48 KiB).
	 */
	tailBytes: number;
	/** The byte limit never leaves fewer messages than this in the head, nor acts below 1.5× it (default 32). */
	minMessages: number;
	/** References per index: F references of one level become one reference of the next (default 8). */
	fanOut: number;
}

export const DEFAULT_LOG_OPTIONS: Readonly<LogOptions> = Object.freeze({
	tailMessages: 128,
	keepMessages: 96,
	tailBytes: 48 * 1024,
	minMessages: 32,
	fanOut: 8,
});

/** The options with defaults filled in; a value that would make a limit meaningless is an error naming it. */
export function resolveLogOptions(given: Partial<LogOptions> = {}): LogOptions {
	const o = {
		...DEFAULT_LOG_OPTIONS,
		...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)),
	} as LogOptions;
	const whole = (name: keyof LogOptions, min: number) => {
		const v = o[name];
		if (typeof v !== 'number' || !Number.isInteger(v) || v < min)
			throw new InvalidOptionError(
				`log.${name}`,
				`must be a whole number ≥ ${min}, got ${String(v)}`,
			);
	};
	whole('tailMessages', 2);
	whole('keepMessages', 1);
	whole('minMessages', 1);
	whole('tailBytes', 1);
	whole('fanOut', 2);
	if (o.keepMessages >= o.tailMessages)
		throw new InvalidOptionError(
			'log.keepMessages',
			`must be below log.tailMessages (${o.tailMessages}), got ${o.keepMessages}`,
		);
	if (o.minMessages > o.keepMessages)
		throw new InvalidOptionError(
			'log.minMessages',
			`must be at most log.keepMessages (${o.keepMessages}), got ${o.minMessages}`,
		);
	return o;
}

/** Thread facts the history layer computes for a reference (the store does not interpret messages). */
export interface ThreadFacts {
	summarize(messages: readonly StoredMessage[]): { linear: boolean; turns: number };
	/** Whether a message whose parent is `parent` directly follows the message `previousId`. */
	follows(previousId: string, parent: string | null): boolean;
	/** Whether `parent` means "the message stored just before" (Dify's UUID_NIL) rather than an ID. */
	isPrevious(parent: string): boolean;
}

/**
 * Facts that claim nothing: references are never linear, so a walk loads what it passes. Correct for
 * any reader; the history layer supplies the real ones (history/thread.ts).
 */
export const NO_THREAD_FACTS: ThreadFacts = {
	summarize: () => ({ linear: false, turns: 0 }),
	follows: () => false,
	isPrevious: () => false,
};
