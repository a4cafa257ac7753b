import { CorruptDocumentError, UnknownParentMessageError } from '../errors';
import type { StoredMessage } from '../store/schema';

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
export function threadStart(key: string, messages: readonly StoredMessage[], parentMessageId?: string | null): number {
	if (parentMessageId === null) return -1;
	if (parentMessageId === undefined || parentMessageId === '') return messages.length - 1;
	const i = indexOfMessage(messages, parentMessageId);
	if (i === undefined) throw new UnknownParentMessageError(key, parentMessageId);
	return i;
}

/**
 * Yields the thread ending at `start`, newest first, by following parent_message_id.
 * Messages on other branches, parentless or not, are never visited (Dify #39031).
 * Stops at a root (null parent) or at a parent that is not stored (history loaded partially).
 */
export function* walkThread(key: string, messages: readonly StoredMessage[], start: number): Generator<StoredMessage> {
	let i = start;
	let steps = 0;
	while (i >= 0) {
		const m = messages[i];
		yield m;
		if (++steps > messages.length) throw new CorruptDocumentError(key, 'parent_message_id links form a cycle');
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
