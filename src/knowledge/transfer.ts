// One conversation's captured messages out of a base and into one (whole-conversation export and
// import live in admin/, which calls these).
import { ConversationExistsError, CorruptDocumentError, InvalidExportError } from '../errors';
import { validateId } from '../keys/ids';
import { encodeJson } from '../store/codec';
import { readLog, readMessages, writeBlock } from './capture-log';
import { forget } from './lifecycle';
import type { BaseParts } from './parts';
import { emptyLog, usersOf, logCodec } from './records';
import type { CapturedMessage, SealedRange, SessionLog } from './records';
import { configure } from './settings';
import { SEAL_AT } from './types';

/** Every message a conversation captured in this base, in order; null when it captured nothing. */
export async function exportSession(
	p: BaseParts,
	sessionId: string,
): Promise<CapturedMessage[] | null> {
	const { log, version } = await readLog(p, validateId('session_id', sessionId));
	if (version === null) return null;
	return readMessages(p, log, 1, log.next_seq - 1);
}

/** The log an import writes: every message pending again (the next sync indexes them), IDs kept. */
function importedLog(sessionId: string, messages: CapturedMessage[], sealed: SealedRange[]) {
	const now = new Date().toISOString();
	const inline = messages.slice(sealed.length ? sealed[sealed.length - 1].last : 0);
	return {
		...emptyLog(sessionId, now),
		next_seq: messages.length + 1,
		sealed,
		messages: inline,
		users: usersOf(messages),
	} satisfies SessionLog;
}

/** Checks exported messages as the reader would read them: an InvalidExportError naming `path` if not. */
export function checkCapturedMessages(
	path: string,
	sessionId: string,
	messages: unknown,
): CapturedMessage[] {
	if (!Array.isArray(messages)) throw new InvalidExportError(path, 'must be an array');
	const log = { ...emptyLog(sessionId, new Date(0).toISOString()), next_seq: messages.length + 1 };
	try {
		logCodec.decode(path, encodeJson({ ...log, messages }));
	} catch (error) {
		if (error instanceof CorruptDocumentError) throw new InvalidExportError(path, error.detail);
		throw error;
	}
	return messages as CapturedMessage[];
}

/**
 * Stores exported messages as a conversation of this base, message IDs kept (so chunk IDs and the
 * caller's metadata still match), all pending until the next sync. A conversation that captured
 * anything is refused unless `overwrite`, which forgets it first (log, blocks and index rows).
 */
export async function importSession(
	p: BaseParts,
	sessionId: string,
	value: unknown,
	options: { overwrite?: boolean; path?: string } = {},
): Promise<{ messages: number; replaced: string[] }> {
	const id = validateId('session_id', sessionId);
	const messages = checkCapturedMessages(options.path ?? 'messages', id, value);
	await configure(p);
	let replaced: string[] = [];
	const { version } = await readLog(p, id);
	if (version !== null) {
		if (!options.overwrite) throw new ConversationExistsError(p.baseId, id, [p.logKey(id)]);
		replaced = (await forget(p, id)).deleted;
	}
	const sealed: SealedRange[] = [];
	const full = messages.length - (messages.length % SEAL_AT || SEAL_AT);
	for (let i = 0; i < full; i += SEAL_AT)
		sealed.push(await writeBlock(p, id, messages.slice(i, i + SEAL_AT)));
	await p.logs.update(p.logKey(id), (cur) => {
		if (cur.version !== null) throw new ConversationExistsError(p.baseId, id, [p.logKey(id)]);
		return messages.length ? importedLog(id, messages, sealed) : undefined;
	});
	return { messages: messages.length, replaced };
}
