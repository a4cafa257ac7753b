import { CorruptDocumentError, UnknownParentMessageError } from '../errors';
import type { ThreadFacts } from '../store/message-log';
import type { StoredMessage } from '../store/schema';
import { selectHistory } from './truncate';
import type { HistorySelection, SelectOptions } from './truncate';

/** Dify's legacy marker: "my parent is simply the message stored before me". */
export const UUID_NIL = '00000000-0000-0000-0000-000000000000';

const indexes = new WeakMap<readonly StoredMessage[], Map<string, number>>();

/** Position of a message by ID; the index is built once per (immutable) message array. */
export function indexOfMessage(messages: readonly StoredMessage[], id: string): number | undefined {
	const last = messages.length - 1;
	if (last >= 0 && messages[last].message_id === id) return last;
	let index = indexes.get(messages);
	if (!index) {
		index = new Map(messages.map((m, i) => [m.message_id, i]));
		indexes.set(messages, index);
	}
	return index.get(id);
}

/**
 * Where the walk for a new turn starts: the explicit parent, or the newest stored message when the
 * parent is undefined or ''. `null` is the root: the new turn starts a thread of its own, with no
 * history (regenerating the first answer). Returns -1 for no history. An explicit parent that is not
 * stored is an error, never a guess.
 */
export function threadStart(
	key: string,
	messages: readonly StoredMessage[],
	parentMessageId?: string | null,
): number {
	if (parentMessageId === null) return -1;
	if (parentMessageId === undefined || parentMessageId === '') return messages.length - 1;
	const i = indexOfMessage(messages, parentMessageId);
	if (i === undefined) throw new UnknownParentMessageError(key, parentMessageId);
	return i;
}

/**
 * Yields the thread ending at `start`, newest first, by following parent_message_id.
 * Messages on other branches, parentless or not, are never visited: a regenerated first message (a
 * second root) neither cuts the live thread short nor joins it.
 * Stops at a root (null parent) or at a parent that is not stored (history loaded partially).
 */
export function* walkThread(
	key: string,
	messages: readonly StoredMessage[],
	start: number,
): Generator<StoredMessage> {
	let i = start;
	let steps = 0;
	while (i >= 0) {
		const m = messages[i];
		yield m;
		if (++steps > messages.length)
			throw new CorruptDocumentError(key, 'parent_message_id links form a cycle');
		const parent = m.parent_message_id;
		if (parent === null) return;
		if (parent === UUID_NIL) {
			i -= 1;
		} else if (i > 0 && messages[i - 1].message_id === parent) {
			i -= 1; // linear history: no index needed
		} else {
			const j = indexOfMessage(messages, parent);
			if (j === undefined) return;
			i = j;
		}
	}
}

/** The whole thread ending at the given parent (or the newest message), oldest first. */
export function extractThread(
	key: string,
	messages: readonly StoredMessage[],
	parentMessageId?: string | null,
): StoredMessage[] {
	const start = threadStart(key, messages, parentMessageId);
	return [...walkThread(key, messages, start)].reverse();
}

// ---------------------------------------------------------------------------------------------------
// Threads over a conversation whose older messages are sealed into segments loaded on demand.

/**
 * Where a walk left the messages loaded so far: a parent by ID (`below`: the position of the message
 * whose parent it is, so the message just before it is the first place to look), or (UUID_NIL) a
 * position.
 */
export type ThreadGap = { id: string; below: number } | { ordinal: number };

/** A run of stored messages and the position (ordinal) of its first one in the whole conversation. */
export interface MessageChunk {
	start: number;
	messages: readonly StoredMessage[];
}

/**
 * The messages of one conversation loaded so far, by position: the head's own (and pending turns),
 * plus whatever sealed segments a walk needed. Positions are stable: messages are only ever appended.
 */
export class ThreadSpan {
	private readonly chunks: MessageChunk[] = [];
	private readonly ids = new Map<string, number>();
	private unindexed: MessageChunk[] = [];
	private readonly absent = new Set<string>();

	/** `total`: how many messages the conversation holds (bounds every walk: more steps is a cycle). */
	constructor(
		readonly key: string,
		readonly total: number,
	) {}

	/** Adds a chunk (ignored when it is already here). */
	add(chunk: MessageChunk): void {
		if (chunk.messages.length === 0 || this.chunkAt(chunk.start)) return;
		let i = this.chunks.length;
		while (i > 0 && this.chunks[i - 1].start > chunk.start) i--;
		this.chunks.splice(i, 0, chunk);
		this.unindexed.push(chunk);
	}

	/** Indexes chunks by ID on the first lookup that needs it (a linear walk never does). */
	private index(): Map<string, number> {
		for (const chunk of this.unindexed)
			chunk.messages.forEach((m, k) => {
				const o = chunk.start + k;
				const known = this.ids.get(m.message_id);
				if (known === undefined || known < o) this.ids.set(m.message_id, o);
			});
		this.unindexed = [];
		return this.ids;
	}

	private chunkAt(ordinal: number): MessageChunk | undefined {
		let lo = 0;
		let hi = this.chunks.length - 1;
		while (lo <= hi) {
			const mid = (lo + hi) >> 1;
			const c = this.chunks[mid];
			if (ordinal < c.start) hi = mid - 1;
			else if (ordinal >= c.start + c.messages.length) lo = mid + 1;
			else return c;
		}
		return undefined;
	}

	/** The message at this position, if loaded. */
	at(ordinal: number): StoredMessage | undefined {
		const c = this.chunkAt(ordinal);
		return c?.messages[ordinal - c.start];
	}

	/** Position of a loaded message by ID (the newest, should IDs repeat). */
	find(id: string): number | undefined {
		return this.index().get(id);
	}

	/** Records that no stored message has this ID (a search found none): walks end there. */
	markAbsent(id: string): void {
		this.absent.add(id);
	}

	isAbsent(id: string): boolean {
		return this.absent.has(id);
	}
}

/**
 * walkThread over a span: yields the thread ending at position `start`, newest first. When the next
 * message is not loaded it stops and sets `out.gap` to what is missing; at a root, or at a parent no
 * stored message has (history loaded partially, as walkThread), it stops without one.
 */
export function* walkSpan(
	span: ThreadSpan,
	start: number,
	out: { gap?: ThreadGap },
): Generator<StoredMessage> {
	let o = start;
	let steps = 0;
	out.gap = undefined;
	while (o >= 0) {
		const m = span.at(o) as StoredMessage;
		yield m;
		if (++steps > span.total)
			throw new CorruptDocumentError(span.key, 'parent_message_id links form a cycle');
		const parent = m.parent_message_id;
		if (parent === null) return;
		if (parent === UUID_NIL) {
			if (o === 0) return;
			if (!span.at(o - 1)) {
				out.gap = { ordinal: o - 1 };
				return;
			}
			o -= 1;
		} else if (span.at(o - 1)?.message_id === parent) {
			o -= 1; // linear history: no index needed
		} else {
			const j = span.find(parent);
			if (j !== undefined) {
				o = j;
				continue;
			}
			if (!span.isAbsent(parent)) out.gap = { id: parent, below: o };
			return;
		}
	}
}

/** Fetches sealed messages for a walk. Implemented by the store's message log. */
export interface ThreadLoader {
	/** The sealed segment holding the message (by ID or position); undefined when no stored message has that ID. */
	load(gap: ThreadGap): Promise<MessageChunk | undefined>;
	/**
	 * A sealed run of messages ending at `gap` that is one linear thread starting with a user message,
	 * described without loading it: its answered turns, its size and what precedes its first message
	 * (null: a root). Undefined when there is none.
	 */
	skip(
		gap: ThreadGap,
	): Promise<{ turns: number; count: number; next: ThreadGap | null } | undefined>;
}

/** Loads the chunk a gap names into the span; false when no stored message has that ID. */
async function fill(span: ThreadSpan, loader: ThreadLoader, gap: ThreadGap): Promise<boolean> {
	if ('id' in gap ? span.find(gap.id) !== undefined : span.at(gap.ordinal) !== undefined)
		return true;
	if ('id' in gap && span.isAbsent(gap.id)) return false;
	const chunk = await loader.load(gap);
	if (!chunk) {
		if ('id' in gap) span.markAbsent(gap.id);
		return false;
	}
	span.add(chunk);
	return true;
}

/** Answered turns among messages walked newest first (each turn closed by its user message). */
function answeredTurns(newestFirst: readonly StoredMessage[]): number {
	// Every answered turn is either kept or dropped, so their sum counts them (stored counts only).
	const s = selectHistory(newestFirst, { maxTokenLimit: 0 });
	return s.turns.length + s.droppedTurns;
}

/**
 * The position of the message a new turn's history starts at (the parent), loading its segment when
 * it is sealed: -1 for the root (null) or an empty conversation; the newest message when undefined or
 * ''. An explicit parent that no stored message has is an error, never a guess.
 */
export async function threadStartIn(
	span: ThreadSpan,
	loader: ThreadLoader,
	parentMessageId?: string | null,
): Promise<number> {
	if (parentMessageId === null) return -1;
	if (parentMessageId === undefined || parentMessageId === '') return span.total - 1;
	let o = span.find(parentMessageId);
	if (o === undefined && (await fill(span, loader, { id: parentMessageId, below: span.total })))
		o = span.find(parentMessageId);
	if (o === undefined) throw new UnknownParentMessageError(span.key, parentMessageId);
	return o;
}

/**
 * selectHistory over the thread ending at `start`, loading sealed segments only while the selection
 * still has room (window and budget not reached) and the thread runs on past what is loaded. Once
 * the selection is full, the rest of the thread only adds to droppedTurns: linear sealed runs are
 * counted from their references, without loading them.
 */
export async function selectThread(
	span: ThreadSpan,
	loader: ThreadLoader,
	start: number,
	options: SelectOptions = {},
): Promise<HistorySelection> {
	for (;;) {
		const out: { gap?: ThreadGap } = {};
		let sinceUser: StoredMessage[] = [];
		function* tracked(): Generator<StoredMessage> {
			for (const m of walkSpan(span, start, out)) {
				if (m.role === 'user') sinceUser = [];
				else sinceUser.push(m);
				yield m;
			}
		}
		const selection = selectHistory(start >= 0 ? tracked() : [], options);
		if (!out.gap) return selection;
		if (selection.droppedTurns > 0)
			return {
				...selection,
				droppedTurns: selection.droppedTurns + (await countRest(span, loader, out.gap, sinceUser)),
			};
		await fill(span, loader, out.gap); // when nothing has that ID, the next walk ends there
	}
}

/** Answered turns on the rest of a thread, from `gap` on; `acc` holds replies whose user message lies beyond. */
async function countRest(
	span: ThreadSpan,
	loader: ThreadLoader,
	first: ThreadGap,
	acc: StoredMessage[],
): Promise<number> {
	let gap: ThreadGap | undefined = first;
	let turns = 0;
	let steps = 0;
	while (gap) {
		if (acc.length === 0) {
			const run = await loader.skip(gap);
			if (run) {
				turns += run.turns;
				steps += run.count;
				if (steps > span.total)
					throw new CorruptDocumentError(span.key, 'parent_message_id links form a cycle');
				gap = run.next ?? undefined;
				continue;
			}
		}
		if (!(await fill(span, loader, gap))) break;
		const at: number = 'id' in gap ? (span.find(gap.id) as number) : gap.ordinal;
		const out: { gap?: ThreadGap } = {};
		for (const m of walkSpan(span, at, out)) {
			if (++steps > span.total)
				throw new CorruptDocumentError(span.key, 'parent_message_id links form a cycle');
			acc.push(m);
			if (m.role === 'user') {
				turns += answeredTurns(acc);
				acc = [];
			}
		}
		gap = out.gap;
	}
	return turns;
}

/**
 * What a reference records about the thread through a run of messages (oldest first): whether it is
 * one linear thread starting with a user message, and if so how many answered turns it holds.
 */
export function threadSummary(messages: readonly StoredMessage[]): {
	linear: boolean;
	turns: number;
} {
	let linear = messages.length > 0 && messages[0].role === 'user';
	for (let i = 1; linear && i < messages.length; i++)
		linear = follows(messages[i - 1].message_id, messages[i].parent_message_id);
	return { linear, turns: linear ? answeredTurns([...messages].reverse()) : 0 };
}

/** Whether a message whose parent is `parent` follows the message `previousId` directly. */
export function follows(previousId: string, parent: string | null): boolean {
	return parent === previousId || parent === UUID_NIL;
}

/**
 * The thread ending at position `start`, newest first, loading sealed segments only as the walk reaches
 * them: a caller that stops early reads no further. Ends at a root, or at a parent no stored message has.
 */
export async function* walkThreadIn(
	span: ThreadSpan,
	loader: ThreadLoader,
	start: number,
): AsyncGenerator<StoredMessage> {
	let at = start;
	let steps = 0;
	while (at >= 0) {
		const out: { gap?: ThreadGap } = {};
		for (const m of walkSpan(span, at, out)) {
			if (++steps > span.total)
				throw new CorruptDocumentError(span.key, 'parent_message_id links form a cycle');
			yield m;
		}
		const gap = out.gap;
		if (!gap || !(await fill(span, loader, gap))) return;
		at = 'id' in gap ? (span.find(gap.id) as number) : gap.ordinal;
	}
}

/**
 * The thread ending at position `start`, oldest first: all of it, or its newest `max` messages, loading
 * sealed segments only as far as that needs.
 */
export async function collectThread(
	span: ThreadSpan,
	loader: ThreadLoader,
	start: number,
	max = Number.POSITIVE_INFINITY,
): Promise<StoredMessage[]> {
	const got: StoredMessage[] = [];
	if (max <= 0) return got;
	for await (const m of walkThreadIn(span, loader, start)) if (got.push(m) >= max) break;
	return got.reverse();
}

/** What the history layer tells the store about threads, for sealed references. */
export const THREAD_FACTS: ThreadFacts = {
	summarize: threadSummary,
	follows,
	isPrevious: (parent) => parent === UUID_NIL,
};
