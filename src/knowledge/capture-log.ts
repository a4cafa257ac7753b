// A session's capture log across its head (log.json) and its write-once sealed blocks: reading ranges
// of messages, writing blocks, merging processed blocks, and the chunks messages are indexed as.
import { randomBytes } from 'node:crypto';

import { CorruptDocumentError } from '../errors';
import type { IndexedChunk } from '../indexes';
import { captureSealedKey, memoryBaseSessionsPrefix } from './keys';
import { encodeJson } from '../store/codec';
import { folderNames, keyPages } from '../store/storage';
import { validateId } from '../keys/ids';
import { chunkId, chunkText } from './chunking';
import type { BaseParts } from './parts';
import { decodeSealedMessages, emptyLog, usersOf } from './records';
import type { CapturedMessage, SealedRange, SessionLog } from './records';
import { SEAL_AT } from './types';

/** Sealed blocks are merged up to this many messages; larger ones stay as they are. */
export const MERGED_BLOCK_MAX = 1024;

/** The session's log, or an empty one (version null) when it has none. */
export async function readLog(p: BaseParts, sessionId: string) {
	const got = await p.logs.read(p.logKey(sessionId));
	return { log: got.version === null ? emptyLog(sessionId, '') : got.doc, version: got.version };
}

async function readRange(p: BaseParts, log: SessionLog, from: number, to: number) {
	const out: CapturedMessage[] = [];
	for (const block of log.sealed) {
		if (block.last < from || block.first > to) continue;
		const sealed = await p.blocks.readWriteOnce(block.key, (bytes) =>
			decodeSealedMessages(block.key, bytes, block),
		);
		if (!sealed) return undefined;
		out.push(...sealed.messages.filter((m) => m.seq >= from && m.seq <= to));
	}
	out.push(...log.messages.filter((m) => m.seq >= from && m.seq <= to));
	return out;
}

/**
 * Messages `from` … `to` of a session, from its sealed blocks and its log. A block a sync merged away
 * after `log` was read is found by reading the log again, once; still missing is corruption.
 */
export async function readMessages(
	p: BaseParts,
	log: SessionLog,
	from: number,
	to: number,
): Promise<CapturedMessage[]> {
	const first = await readRange(p, log, from, to);
	if (first) return first;
	const again = await readLog(p, log.session_id);
	const second = await readRange(p, again.log, from, to);
	if (second) return second;
	const missing = again.log.sealed.find((b) => b.last >= from && b.first <= to);
	throw new CorruptDocumentError(
		p.logKey(log.session_id),
		`its sealed block "${missing?.key ?? '?'}" is missing`,
	);
}

/** Writes messages (consecutive, in order) as a new write-once block; returns its reference. */
export async function writeBlock(
	p: BaseParts,
	sessionId: string,
	messages: readonly CapturedMessage[],
): Promise<SealedRange> {
	const first = messages[0].seq;
	const last = messages[messages.length - 1].seq;
	const random = randomBytes(8).toString('hex');
	const key = captureSealedKey(p.baseId, sessionId, first, last, random, p.keyPrefix);
	const body = { session_id: sessionId, first, last, messages };
	await p.blocks.create(key, encodeJson(body), body);
	return { key, first, last };
}

/**
 * After a sync up to `to`: the trailing small blocks and the inline messages it processed, merged
 * into one block when they hold at least SEAL_AT messages, so the log keeps few references. Returns
 * the new block and the blocks it replaces (the caller swaps them in the cursor's compare-and-swap).
 */
export async function mergeProcessed(
	p: BaseParts,
	sessionId: string,
	log: SessionLog,
	to: number,
): Promise<{ block: SealedRange; replaces: SealedRange[] } | undefined> {
	const inline = log.messages.filter((m) => m.seq <= to);
	const replaces: SealedRange[] = [];
	let count = inline.length;
	for (let i = log.sealed.length - 1; i >= 0; i--) {
		const b = log.sealed[i];
		const size = b.last - b.first + 1;
		if (b.last > to || size >= MERGED_BLOCK_MAX || count + size > MERGED_BLOCK_MAX) break;
		replaces.unshift(b);
		count += size;
	}
	if (count < SEAL_AT || (replaces.length === 1 && inline.length === 0)) return undefined;
	const from = replaces[0]?.first ?? inline[0].seq;
	const last = inline.length ? inline[inline.length - 1].seq : replaces[replaces.length - 1].last;
	const messages = await readMessages(p, log, from, last);
	return { block: await writeBlock(p, sessionId, messages), replaces };
}

/** The chunks a session's messages are indexed as (chunk IDs derive from `scope` and the message IDs). */
export function chunksOf(
	p: BaseParts,
	scope: string,
	sessionId: string,
	messages: readonly CapturedMessage[],
): IndexedChunk[] {
	return messages.flatMap((m) =>
		chunkText(m.text, p.chunkSize, p.chunkOverlap).map((text, i) => ({
			id: chunkId(scope, sessionId, m.id, i),
			session_id: sessionId,
			...(m.user_id !== undefined ? { user_id: m.user_id } : {}),
			message_id: m.id,
			seq: m.seq,
			run_id: m.run_id,
			chunk_index: i,
			created_at: m.created_at,
			text,
			...(m.role !== undefined ? { role: m.role } : {}),
			...(m.metadata !== undefined ? { metadata: m.metadata } : {}),
		})),
	);
}

/**
 * The chunks in the base's lexical index: their IDs derive from the base (the lexical index is the
 * base's own), so the vector and the lexical copy of a chunk meet by message and chunk number.
 */
export function lexicalChunks(
	p: BaseParts,
	sessionId: string,
	messages: readonly CapturedMessage[],
): IndexedChunk[] {
	return chunksOf(p, `lexical:${p.baseId}`, sessionId, messages);
}

/**
 * How many messages a session captured (sealed blocks included), the IDs of their chunks, and their
 * users (the partitions they are indexed in).
 */
export async function capturedChunks(
	p: BaseParts,
	kbId: string,
	sessionId: string,
): Promise<{ messages: number; chunkIds: string[]; users: string[] }> {
	const { log, version } = await readLog(p, sessionId);
	if (version === null) return { messages: 0, chunkIds: [], users: [] };
	const messages = await readMessages(p, log, 1, log.next_seq - 1);
	return {
		messages: messages.length,
		chunkIds: chunksOf(p, kbId, sessionId, messages).map((c) => c.id),
		users: [...new Set([...(log.users ?? []), ...usersOf(messages)])],
	};
}

/**
 * The users whose messages a conversation holds: its log keeps them (a log from before it did is
 * read through). None for a conversation never captured.
 */
export async function sessionUsers(p: BaseParts, sessionId: string): Promise<string[]> {
	const { log, version } = await readLog(p, sessionId);
	if (version === null) return [];
	if (log.users !== undefined) return log.users;
	return usersOf(await readMessages(p, log, 1, log.next_seq - 1));
}

/**
 * A page of the conversations a base captured, in folder order (sortFolders), after `after`: one
 * listing of at most `limit` + 1 folders, never the whole folder. `next` is the last of the page
 * when more follow (pass it as `after`), else null. A folder may hold no log yet (a capture that
 * stopped before writing it): readers skip those.
 */
export async function sessionsPage(
	p: BaseParts,
	after: string | undefined,
	limit: number,
): Promise<{ ids: string[]; next: string | null }> {
	const prefix = memoryBaseSessionsPrefix(p.baseId, p.keyPrefix);
	const from = after === undefined ? undefined : validateId('after', after);
	const names = await folderNames(p.storage, prefix, { after: from, limit: limit + 1 });
	const ids = names.slice(0, limit);
	return { ids, next: names.length > limit ? ids[ids.length - 1] : null };
}

/**
 * The sessions with a capture log, a page of the sessions folder's listing at a time (each once), in
 * no set order: a folder of 100,000 conversations is never read whole to sort it. Results that list
 * conversations keep their first in folder order (SyncTally).
 */
export async function* sessionPages(p: BaseParts): AsyncGenerator<string[]> {
	const prefix = memoryBaseSessionsPrefix(p.baseId, p.keyPrefix);
	for await (const page of keyPages(p.storage, prefix)) {
		const ids: string[] = [];
		for (const key of page) {
			const rest = key.slice(prefix.length).split('/');
			if (rest.length === 2 && rest[1] === 'log.json') ids.push(rest[0]);
		}
		if (ids.length > 0) yield ids;
	}
}

/** Every session with a capture log, by ID. One listing of the sessions folder. */
export async function listSessions(p: BaseParts): Promise<string[]> {
	const ids: string[] = [];
	for await (const page of sessionPages(p)) ids.push(...page);
	return ids.sort();
}
