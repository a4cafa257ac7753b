// Looking into bases: which memory bases a storage holds, and the messages a base captured, page by
// page, for one conversation or one user.
import { InvalidInputError } from '../errors';
import { validateId, validateKeyPrefix } from '../keys/ids';
import { MEMORY_BASE_ROOT } from './keys';
import { MAX_PARALLEL, mapLimit } from '../common/parallel';
import { documentStored, folderNames } from '../store/storage';
import type { MemoryStorage } from '../store/storage';
import { readLog, readMessages, sessionsPage } from './capture-log';
import type { BaseParts } from './parts';
import { inBatches, PARALLEL } from './types';
import { conversationsOfUser } from './users';
import type { CapturedMessage } from './records';

/** Which captured messages to list: of one conversation, of one user, or of all (`allUsers`); a page. */
export interface CapturedQuery {
	sessionId?: string;
	userId?: string;
	allUsers?: boolean;
	offset?: number;
	limit?: number;
}

export interface CapturedPage {
	/** The messages of this page, oldest first, each with the conversation it belongs to. */
	messages: Array<CapturedMessage & { session_id: string }>;
	/**
	 * Messages in all, of the conversation or of the user across conversations; null for every
	 * conversation (counting them would read every conversation's log).
	 */
	total: number | null;
	/** Pass as `offset` for the next page; null after the last. */
	nextOffset: number | null;
}

/**
 * Every memory base on a storage, by ID: the folders of the memory bases' folder that hold a
 * configuration (one listing of the folders, and one of each configuration's key, never every key).
 */
export async function listMemoryBases(
	storage: MemoryStorage,
	options: { keyPrefix?: string } = {},
): Promise<string[]> {
	const prefix = `${validateKeyPrefix('key prefix', options.keyPrefix)}${MEMORY_BASE_ROOT}/`;
	const folders = await folderNames(storage, prefix);
	const configured = await mapLimit(folders, MAX_PARALLEL, (id) =>
		documentStored(storage, `${prefix}${id}/config.json`),
	);
	return folders.filter((_, i) => configured[i]);
}

function checkPage(offset: number, limit: number): void {
	if (!Number.isSafeInteger(offset) || offset < 0)
		throw new InvalidInputError('offset', 'must be a whole number, 0 or more');
	if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000)
		throw new InvalidInputError('limit', 'must be a whole number from 1 to 10,000');
}

/** One conversation's captured messages, a page (reads only the blocks the page needs). */
async function sessionPage(p: BaseParts, sessionId: string, offset: number, limit: number) {
	const { log } = await readLog(p, sessionId);
	const total = log.next_seq - 1;
	const from = offset + 1;
	const to = Math.min(total, offset + limit);
	const messages = from > to ? [] : await readMessages(p, log, from, to);
	return {
		messages: messages.map((m) => ({ ...m, session_id: sessionId })),
		total,
		nextOffset: to < total ? to : null,
	};
}

/** Conversations listed at a time, and their logs read side by side, by a listing of every conversation. */
const LISTED = 100;

/**
 * Every conversation's captured messages, a page: the conversations in folder order, a hundred
 * listed at a time, each log read for its count until the page is full, and only the blocks the page
 * needs. What it reads follows the offset and the page, never the size of the base; so it does not
 * count every conversation's messages (total null).
 */
async function allPage(p: BaseParts, offset: number, limit: number): Promise<CapturedPage> {
	const messages: CapturedPage['messages'] = [];
	let before = 0; // messages of the conversations passed
	let after: string | undefined;
	do {
		const page = await sessionsPage(p, after, LISTED);
		for (let i = 0; i < page.ids.length; i += PARALLEL) {
			const ids = page.ids.slice(i, i + PARALLEL);
			const logs = await inBatches(ids, async (s) => (await readLog(p, s)).log);
			for (const [j, log] of logs.entries()) {
				const count = log.next_seq - 1;
				if (count === 0) continue;
				// The page is full and another message follows.
				if (messages.length === limit) return { messages, total: null, nextOffset: offset + limit };
				const from = Math.max(offset - before, 0) + 1;
				const to = Math.min(count, from + (limit - messages.length) - 1);
				if (from <= to)
					for (const m of await readMessages(p, log, from, to))
						messages.push({ ...m, session_id: ids[j] });
				if (to < count && messages.length === limit)
					return { messages, total: null, nextOffset: offset + limit };
				before += count;
			}
		}
		after = page.next ?? undefined;
	} while (after !== undefined);
	return { messages, total: null, nextOffset: null };
}

/** One user's captured messages, a page: the conversations their partition names, oldest first each. */
async function userPage(
	p: BaseParts,
	userId: string,
	offset: number,
	limit: number,
): Promise<CapturedPage> {
	const all: CapturedPage['messages'] = [];
	for (const s of await conversationsOfUser(p, userId)) {
		const { log } = await readLog(p, s);
		const mine = (await readMessages(p, log, 1, log.next_seq - 1)).filter(
			(m) => m.user_id === userId,
		);
		all.push(...mine.map((m) => ({ ...m, session_id: s })));
	}
	const end = Math.min(all.length, offset + limit);
	return {
		messages: all.slice(offset, end),
		total: all.length,
		nextOffset: end < all.length ? end : null,
	};
}

/**
 * Captured messages, oldest first, a page at a time: of one conversation, of one user across every
 * conversation of the base, or of every conversation (`allUsers`, asked for by name, as search does);
 * the conversations are read in order of their IDs.
 */
export async function listCaptured(p: BaseParts, options: CapturedQuery): Promise<CapturedPage> {
	const offset = options.offset ?? 0;
	const limit = options.limit ?? 50;
	checkPage(offset, limit);
	if (options.sessionId !== undefined)
		return sessionPage(p, validateId('session_id', options.sessionId), offset, limit);
	if (options.userId === undefined && options.allUsers === true) return allPage(p, offset, limit);
	if (options.userId === undefined)
		throw new InvalidInputError(
			'sessionId',
			'name a conversation or a user to list, or ask for every conversation (allUsers)',
		);
	return userPage(p, validateId('user_id', options.userId), offset, limit);
}
