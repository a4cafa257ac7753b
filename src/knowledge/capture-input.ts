// A capture's input, checked and prepared before anything is read or written: its messages (texts,
// roles, metadata), the earlier turns it may catch up (each with its run ID and time), their IDs.
import { createHash, randomUUID } from 'node:crypto';

import { InvalidInputError } from '../errors';
import { validateDerivedId, validateId } from '../keys/ids';
import { checkExpireAfterDays } from '../store/retention';
import type { CaptureInput, CaptureMessageInput } from './types';

/** Recent captures a log remembers, to recognise a retried execution capturing the same again. */
export const RECENT_RUNS = 16;
/** Earlier turns one capture looks at (a capture remembers RECENT_RUNS runs: fewer than that). */
export const MAX_EARLIER = 8;
/** The most bytes of one message's metadata, as JSON. */
export const MAX_METADATA_BYTES = 4096;

function checkMetadata(value: unknown, at: string): Record<string, unknown> | undefined {
	if (value === undefined) return undefined;
	if (typeof value !== 'object' || value === null || Array.isArray(value))
		throw new InvalidInputError(at, 'must be an object');
	let json: string;
	try {
		json = JSON.stringify(value);
	} catch {
		throw new InvalidInputError(at, 'must be plain JSON');
	}
	if (Buffer.byteLength(json, 'utf8') > MAX_METADATA_BYTES)
		throw new InvalidInputError(at, `must be at most ${MAX_METADATA_BYTES} bytes as JSON`);
	return JSON.parse(json) as Record<string, unknown>;
}

/** Messages, checked (`at` names the field in errors), empty texts left out. */
function checkMessages(messages: unknown, at: string): CaptureMessageInput[] {
	if (!Array.isArray(messages)) throw new InvalidInputError(at, 'must be an array');
	return messages
		.map((m: CaptureMessageInput, i) => {
			if (typeof m?.text !== 'string')
				throw new InvalidInputError(`${at}[${i}].text`, 'must be a string');
			if (m.role !== undefined && typeof m.role !== 'string')
				throw new InvalidInputError(`${at}[${i}].role`, 'must be a string');
			return {
				text: m.text,
				role: m.role,
				metadata: checkMetadata(m.metadata, `${at}[${i}].metadata`),
			};
		})
		.filter((m) => m.text.trim() !== '');
}

/** The stride's messages, checked: `texts` then `messages`, empty texts left out. */
function strideOf(input: CaptureInput): CaptureMessageInput[] {
	const texts = input.texts ?? [];
	if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string'))
		throw new InvalidInputError('texts', 'must be an array of strings');
	return [
		...texts.filter((t) => t.trim() !== '').map((text) => ({ text })),
		...checkMessages(input.messages ?? [], 'messages'),
	];
}

function digestOf(stride: readonly CaptureMessageInput[]): string {
	return createHash('sha256')
		.update(JSON.stringify(stride.map((m) => [m.text, m.role ?? null, m.metadata ?? null])))
		.digest('hex');
}

/** One run's messages, checked and prepared: they get their IDs before any write. */
export interface Run {
	runId: string;
	messages: CaptureMessageInput[];
	ids: string[];
	digest: string;
	/** For an earlier turn: when it was said (see CaptureInput.earlier). */
	saidAt?: string;
}

/** One capture, checked and prepared: its runs' messages get their IDs and time before any write. */
export interface Stride extends Run {
	sessionId: string;
	/** Expire After (days) the log stores (see CaptureInput.expireAfterDays). */
	expireAfterDays?: number;
	userId?: string;
	now: string;
	/** Earlier turns that may not have been captured, oldest first. */
	earlier: Run[];
}

/** A run's messages with their new IDs and digest. */
function runOf(runId: string, messages: CaptureMessageInput[], saidAt?: string): Run {
	return {
		runId,
		messages,
		ids: messages.map(() => randomUUID()),
		digest: digestOf(messages),
		...(saidAt !== undefined ? { saidAt } : {}),
	};
}

/** The earlier turns of a capture, checked (at most MAX_EARLIER, the newest), oldest first. */
function earlierOf(input: CaptureInput): Run[] {
	const earlier = input.earlier ?? [];
	if (!Array.isArray(earlier)) throw new InvalidInputError('earlier', 'must be an array');
	return earlier.slice(-MAX_EARLIER).map((e, i) => {
		const at = `earlier[${i}]`;
		const runId = validateDerivedId(`${at}.runId`, String(e?.runId ?? ''));
		const said = e?.saidAt instanceof Date ? e.saidAt : new Date(String(e?.saidAt ?? ''));
		if (Number.isNaN(said.getTime()))
			throw new InvalidInputError(`${at}.saidAt`, 'must be a date (a Date or an ISO 8601 text)');
		return runOf(runId, checkMessages(e.messages ?? [], `${at}.messages`), said.toISOString());
	});
}

/** Checks a capture's input and prepares its stride (nothing is read or written yet). */
export function prepare(input: CaptureInput, now: Date): Stride {
	const sessionId = validateId('session_id', input?.sessionId);
	const runId = validateDerivedId('run_id', String(input?.runId ?? ''));
	const userId = input.userId === undefined ? undefined : validateId('user_id', input.userId);
	return {
		...runOf(runId, strideOf(input)),
		sessionId,
		userId,
		now: now.toISOString(),
		expireAfterDays: checkExpireAfterDays(input.expireAfterDays),
		earlier: earlierOf(input),
	};
}
