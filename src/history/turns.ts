import { isMissing } from '../common/missing';
import { validateDerivedId, validateId } from '../keys/ids';
import { DuplicateMessageIdError } from '../errors';
import type { StoredMessage } from '../store/schema';
import { indexOfMessage } from './thread';

/** Suffix of a turn's user message ID: the turn's ID is its assistant message's ID. */
export const USER_SUFFIX = ':user';
/** Suffix of a tool turn's steps: `<id>:step0`, `<id>:step1`, … */
export const STEP_SUFFIX = ':step';

/** One buffered dialogue turn. */
export interface PendingTurn {
	user: StoredMessage;
	/** A tool turn's steps (assistant tool calls and tool results), in order. */
	steps: StoredMessage[];
	assistant: StoredMessage;
	/** The caller gave no parent: the turn follows whatever is newest when it is stored. */
	implicitParent: boolean;
}

/** A turn's messages in stored order. */
export function turnMessages(turn: PendingTurn): StoredMessage[] {
	return [turn.user, ...turn.steps, turn.assistant];
}

function sameMessage(a: StoredMessage, b: StoredMessage): boolean {
	return a.role === b.role && a.content === b.content && a.files.length === b.files.length;
}

/**
 * Appends pending turns to the stored messages (turns are append-only; message IDs identify them).
 * A turn already stored with the same content is skipped (a write whose response was lost); the same ID
 * with other content is a DuplicateMessageIdError. A turn whose parent was implicit follows whatever is
 * newest now, so concurrent turns form one thread instead of hiding each other.
 */
export function mergeTurns(
	key: string,
	stored: readonly StoredMessage[],
	pending: readonly PendingTurn[],
): { messages: StoredMessage[]; added: number } {
	const out = stored.slice();
	let added = 0;
	let newest = out.length ? out[out.length - 1].message_id : null;
	for (const turn of pending) {
		const hasUser = indexOfMessage(stored, turn.user.message_id);
		const hasAssistant = indexOfMessage(stored, turn.assistant.message_id);
		if (hasUser !== undefined || hasAssistant !== undefined) {
			const same =
				hasUser !== undefined &&
				hasAssistant !== undefined &&
				sameMessage(stored[hasUser], turn.user) &&
				sameMessage(stored[hasAssistant], turn.assistant);
			if (!same) throw new DuplicateMessageIdError(key, turn.assistant.message_id);
			continue;
		}
		const user = turn.implicitParent ? { ...turn.user, parent_message_id: newest } : turn.user;
		out.push(user, ...turn.steps, turn.assistant);
		newest = turn.assistant.message_id;
		added++;
	}
	return { messages: out, added };
}

export interface CheckedTurnIds {
	messageId?: string;
	userMessageId?: string;
	parent?: string | null;
}

/** Format of a turn's IDs; its derived user-message ID. No storage access. */
export function checkTurnIds(ids: {
	messageId?: string;
	parentMessageId?: string | null;
}): CheckedTurnIds {
	const messageId =
		ids.messageId === undefined ? undefined : validateId('message_id', ids.messageId);
	const parent = isMissing(ids.parentMessageId)
		? (ids.parentMessageId as null | undefined)
		: validateId('parent_message_id', ids.parentMessageId);
	const userMessageId =
		messageId === undefined
			? undefined
			: validateDerivedId('message_id', `${messageId}${USER_SUFFIX}`);
	return { messageId, userMessageId, parent: parent === undefined ? undefined : parent };
}
