// Learning facts from the turns not yet read: batched by tokens (an extraction once the unread turns
// pass a threshold, or on demand), one model call, its answer checked (malformed: nothing applied),
// only the operations quoting the turns applied, by compare-and-swap, with the read position moved in
// the same version. A failed call or answer never fails the caller: the turns stay unread and the
// result says why.
import {
	FactsExtractionError,
	FactsReplyError,
	InvalidInputError,
	InvalidOptionError,
} from '../errors';
import { validateDerivedId, validateId } from '../keys/ids';
import type { PromptMessage } from '../prompt/types';
import { applyExtracted, noDrops } from './operations';
import type { Applied, FactsSource, ReadMessage } from './operations';
import { sameSource } from './records';
import type { Cursor, Fact, FactsDocument } from './records';
import { parseReply } from './reply';
import { extractionRequest } from './request';
import type { FactsStore } from './store';

/** Calls a chat model with the extraction request and returns its text (like a summarizer). */
export type Extractor = (request: PromptMessage[]) => Promise<string>;

/**
 * Unread tokens at which an extraction runs by default. Chat-length turns (a question of 20–40 tokens
 * and an answer of 100–200) reach it every 5 to 8 turns: at most one call per 5 turns on average.
 */
export const DEFAULT_FACTS_THRESHOLD = 800;
/** Unread turns at which an extraction runs whatever their tokens, so short turns are read too. */
export const DEFAULT_MAX_UNREAD_TURNS = 12;
/** The most tokens of turns one extraction reads; the rest wait for the next one. */
export const DEFAULT_MAX_INPUT_TOKENS = 6000;

export interface LearnInput {
	extract: Extractor;
	source: FactsSource;
	/**
	 * The newest messages of the thread just saved, oldest first (the caller reads them: at least as
	 * far back as the threshold and the unread-turn limit reach). Those after the read position are unread.
	 */
	messages: readonly ReadMessage[];
	/** Extract once the unread turns hold at least this many tokens (default DEFAULT_FACTS_THRESHOLD). */
	threshold?: number;
	/** …or this many turns (default DEFAULT_MAX_UNREAD_TURNS). */
	maxUnreadTurns?: number;
	/** Extract whatever is unread, below the threshold too (on demand). */
	force?: boolean;
	maxInputTokens?: number;
	/** Whose words may be quoted as evidence (default: the user's only). */
	evidenceRoles?: ReadonlyArray<'user' | 'assistant'>;
}

export interface LearnResult {
	/** Whether the model was called. */
	extracted: boolean;
	/** Why it was not, or why nothing was applied (a failed call, a malformed answer, a storage error). */
	reason?: string;
	/** Set when the call, its answer or the save failed (the turns stay unread). */
	error?: string;
	/** Turns (user messages) and tokens unread before this call, and those it read. */
	unreadTurns: number;
	unreadTokens: number;
	readTurns: number;
	added: Fact[];
	updated: Array<{ from: Fact; to: Fact }>;
	retired: Fact[];
	/** Proposed operations not applied, by why. */
	dropped: Applied['dropped'];
	/** The facts version after this call (null: none yet). */
	version: number | null;
	/** Compare-and-swap attempts of the save (more than 1: another writer came first). */
	attempts?: number;
	/** The tokens of the request sent (about 4 characters a token). */
	requestTokens?: number;
}

const approxTokens = (text: string) => Math.ceil(text.length / 4);
const tokensOf = (m: ReadMessage) => m.tokens ?? approxTokens(m.text);
const turnsIn = (ms: readonly ReadMessage[]) => ms.filter((m) => m.role === 'user').length;

function checkCount(option: string, value: number | undefined, fallback: number): number {
	const v = value ?? fallback;
	if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
		throw new InvalidOptionError(option, `must be a finite number ≥ 0, got ${String(v)}`);
	return v;
}

/** The source, with its IDs checked as every ID is. */
export function checkSource(source: FactsSource): FactsSource {
	validateId('conversation_id', source.conversationId);
	if (source.workflowId !== undefined) validateId('workflow_id', source.workflowId);
	if (source.nodeId !== undefined) validateId('node_id', source.nodeId);
	return source;
}

/** The messages as given, checked: IDs as every ID, roles, and times (ISO 8601). */
function checkMessages(messages: readonly ReadMessage[]): readonly ReadMessage[] {
	if (!Array.isArray(messages)) throw new InvalidInputError('messages', 'must be an array');
	messages.forEach((m, i) => {
		validateDerivedId(`messages[${i}].messageId`, m?.messageId);
		if (m.role !== 'user' && m.role !== 'assistant')
			throw new InvalidInputError(`messages[${i}].role`, 'must be "user" or "assistant"');
		if (typeof m.text !== 'string')
			throw new InvalidInputError(`messages[${i}].text`, 'must be a string');
		if (typeof m.at !== 'string' || !Number.isFinite(Date.parse(m.at)))
			throw new InvalidInputError(`messages[${i}].at`, 'must be a date and time (ISO 8601)');
	});
	return messages;
}

/** The messages after this source's read position: after its message, or (another thread) said later. */
export function unreadOf(
	doc: FactsDocument,
	source: FactsSource,
	messages: readonly ReadMessage[],
): ReadMessage[] {
	const src = {
		workflow_id: source.workflowId,
		conversation_id: source.conversationId,
		node_id: source.nodeId,
	};
	const cursor = doc.cursors.find((c) => sameSource(src, c));
	if (!cursor) return [...messages];
	const i = messages.findIndex((m) => m.messageId === cursor.message_id);
	return i >= 0 ? messages.slice(i + 1) : messages.filter((m) => m.at > cursor.at);
}

/** The oldest whole turns of `unread` within `maxTokens` (at least one turn). */
function firstTurns(unread: readonly ReadMessage[], maxTokens: number): ReadMessage[] {
	let tokens = 0;
	let end = 0;
	for (let i = 0; i < unread.length; i++) {
		const startsTurn = unread[i].role === 'user' && i > 0;
		if (startsTurn && tokens > 0 && tokens + tokensOf(unread[i]) > maxTokens) break;
		tokens += tokensOf(unread[i]);
		end = i + 1;
	}
	return unread.slice(0, end);
}

/** The document's read positions with this source's moved to `last` (never back). */
function advanced(cursors: readonly Cursor[], source: FactsSource, last: ReadMessage): Cursor[] {
	const next: Cursor = {
		...(source.workflowId !== undefined ? { workflow_id: source.workflowId } : {}),
		conversation_id: source.conversationId,
		...(source.nodeId !== undefined ? { node_id: source.nodeId } : {}),
		message_id: validateDerivedId('message_id', last.messageId),
		at: last.at,
	};
	const old = cursors.find((c) => sameSource(next, c));
	if (old && old.at > next.at) return [...cursors];
	return [...cursors.filter((c) => !sameSource(next, c)), next];
}

function empty(version: number | null, unread: readonly ReadMessage[]): LearnResult {
	return {
		extracted: false,
		unreadTurns: turnsIn(unread),
		unreadTokens: unread.reduce((n, m) => n + tokensOf(m), 0),
		readTurns: 0,
		added: [],
		updated: [],
		retired: [],
		dropped: noDrops(),
		version,
	};
}

/** The summary of a version made by an extraction (fact IDs only: history shows no personal words). */
function summaryOf(a: Applied, turns: number): string {
	const parts = [
		a.added.length ? `added ${a.added.map((f) => f.id).join(', ')}` : '',
		a.updated.length
			? `updated ${a.updated.map((u) => `${u.from.id} → ${u.to.id}`).join(', ')}`
			: '',
		a.retired.length ? `retired ${a.retired.map((f) => f.id).join(', ')}` : '',
	].filter(Boolean);
	return `Read ${turns} turn${turns === 1 ? '' : 's'}: ${parts.length ? parts.join('; ') : 'nothing new'}`;
}

/**
 * Learns from the unread turns of `input.messages` when they pass the threshold (or `force`): see
 * the module comment. Never throws for a failed or malformed extraction or a failed save: the result
 * says why and the turns stay unread. Bad options and IDs are errors before anything is read.
 */
export async function learn(store: FactsStore, input: LearnInput): Promise<LearnResult> {
	const source = checkSource(input.source);
	const messages = checkMessages(input.messages);
	const threshold = checkCount('facts.threshold', input.threshold, DEFAULT_FACTS_THRESHOLD);
	const maxTurns = checkCount(
		'facts.maxUnreadTurns',
		input.maxUnreadTurns,
		DEFAULT_MAX_UNREAD_TURNS,
	);
	const cap = checkCount('facts.maxInputTokens', input.maxInputTokens, DEFAULT_MAX_INPUT_TOKENS);
	const roles = new Set<string>(input.evidenceRoles ?? ['user']);
	const state = await store.read();
	const unread = unreadOf(state.doc, source, messages);
	const result = empty(state.version, unread);
	if (unread.length === 0) return { ...result, reason: 'no unread turns' };
	const due = result.unreadTokens >= threshold || result.unreadTurns >= maxTurns;
	if (!input.force && !due)
		return {
			...result,
			reason: `${result.unreadTurns} unread turn(s), ${result.unreadTokens} tokens: below the threshold of ${threshold} tokens`,
		};
	const taken = firstTurns(unread, cap);
	const request = extractionRequest(state.doc, taken, roles);
	const requestTokens = request.reduce((n, m) => n + approxTokens(String(m.content)), 0);
	const called = { ...result, extracted: true, readTurns: turnsIn(taken), requestTokens };
	let parsed;
	try {
		parsed = parseReply(await callModel(input.extract, request));
	} catch (error) {
		return {
			...called,
			readTurns: 0,
			error: (error as Error).message,
			reason: 'nothing was applied',
		};
	}
	return save(
		store,
		{ ...called, dropped: { ...noDrops(), invalid: parsed.invalid } },
		{
			ops: parsed.operations,
			taken,
			source,
			roles,
		},
	);
}

async function callModel(extract: Extractor, request: PromptMessage[]): Promise<string> {
	try {
		return await extract(request);
	} catch (error) {
		if (error instanceof FactsReplyError) throw error;
		throw new FactsExtractionError((error as Error)?.message ?? String(error), { cause: error });
	}
}

/** Applies the checked operations and moves the read position in one version, by compare-and-swap. */
async function save(
	store: FactsStore,
	result: LearnResult,
	work: {
		ops: Parameters<typeof applyExtracted>[1];
		taken: ReadMessage[];
		source: FactsSource;
		roles: Set<string>;
	},
): Promise<LearnResult> {
	let applied: Applied | undefined;
	try {
		const out = await store.change((doc) => {
			const now = store.now().toISOString();
			const ctx = { messages: work.taken, source: work.source, now, roles: work.roles };
			const r = applyExtracted(doc, work.ops, ctx);
			applied = r.applied;
			r.doc.cursors = advanced(doc.cursors, work.source, work.taken[work.taken.length - 1]);
			return { doc: r.doc, summary: summaryOf(r.applied, result.readTurns) };
		});
		const a = applied as Applied;
		const dropped = { ...a.dropped, invalid: a.dropped.invalid + result.dropped.invalid };
		return { ...result, ...a, dropped, version: out.state.version, attempts: out.attempts };
	} catch (error) {
		return {
			...result,
			readTurns: 0,
			error: `The facts could not be saved: ${(error as Error).message}`,
			reason: 'nothing was applied',
		};
	}
}
