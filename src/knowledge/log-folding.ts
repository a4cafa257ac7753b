// The capture logs' side of the lexical index: a capture writes only its log, whose newest messages
// a search reads from the log itself (the index lists the open logs as its open sources and reads
// them through readTails); a fold later puts them into the manifest and closes the log. Here: where a
// log stands (LexicalState), what a capture changes in it, what a search reads from it, and the fold.
import type { IndexedChunk, OpenSource, SourceTail } from '../indexes';
import { BaseIndexes } from './base-indexes';
import type { PartClosed } from './listings';
import { lexicalChunks, readLog } from './capture-log';
import type { BaseParts } from './parts';
import { inBatches } from './types';
import { usersOf } from './records';
import type { CapturedMessage, LexicalState, SessionLog } from './records';

/** Open logs the lexical manifest lists; the capture that lists one more folds the longest listed first. */
export const OPEN_MAX = 64;
/** How many open logs that capture folds at once. */
export const FOLD_BATCH = 32;

/** Where a log stands; a log from before LexicalState had every message indexed at capture: closed. */
export function lexicalState(log: SessionLog): LexicalState {
	return log.lexical ?? { through: log.next_seq - 1, open: false, gen: 0, users: [] };
}

/** The messages of `messages` the manifest does not hold (all inline: see LexicalState). */
export function unfolded(messages: readonly CapturedMessage[], through: number) {
	return messages.filter((m) => m.seq > through);
}

/**
 * How the manifests list an opening: by its users, and by the conversation itself when messages
 * without a user came (a partitioned base lists it in those partitions: base-indexes.ts).
 */
export type OpenEntry = OpenSource & { anon?: boolean };

/** The listing of an open log: what the manifests hold of it is `through` (see movedPast). */
export const entryOf = (sessionId: string, s: LexicalState, at: number): OpenEntry => ({
	session_id: sessionId,
	gen: s.gen,
	users: s.users,
	at: new Date(at).toISOString(),
	through: s.through,
	...(s.anon ? { anon: true } : {}),
});

/** Whether an open log is listed for this capture's user (or, without one, for the conversation). */
function listedFor(s: LexicalState, userId: string | undefined): boolean {
	if (userId === undefined) return s.anon === true || s.users === null; // null: a single index's "any"
	return s.users === null || s.users.includes(userId);
}

/**
 * What a capture by `userId` does to the log's state: nothing when the log is open for that user;
 * otherwise it opens it (a new `gen`) or adds the user, and `list` is what the manifest must list
 * before the log is written. Users are not capped here: a partition per user lists the log.
 */
export function opening(
	log: SessionLog,
	userId: string | undefined,
	now = Date.now(),
): { state: LexicalState; list?: OpenEntry } {
	const s = lexicalState(log);
	if (s.open && listedFor(s, userId)) return { state: s };
	const { anon: wasAnon, ...rest } = s;
	const opened = s.open
		? { ...rest, users: s.users ?? [] }
		: { ...rest, open: true, gen: Math.max(s.gen + 1, now), users: [] as string[] };
	const anon = userId === undefined || (s.open && wasAnon === true);
	const users = userId === undefined ? opened.users : [...new Set([...opened.users, userId])];
	const state: LexicalState = { ...opened, users, ...(anon ? { anon: true } : {}) };
	return { state, list: entryOf(log.session_id, state, now) };
}

/**
 * The log's state once its messages up to `to` are in the manifest: `through` moves there, and with
 * `close` an open log with nothing newer closes (a fold then unlists it). Logs without a state keep none.
 */
export function foldedTo(log: SessionLog, to: number, close = false): Pick<SessionLog, 'lexical'> {
	const s = log.lexical;
	if (!s) return {};
	const through = Math.max(s.through, to);
	return { lexical: { ...s, through, open: s.open && !(close && log.next_seq - 1 === through) } };
}

/** A closing as the manifests unlist it: in the partitions the opening `s` was listed in. */
const closedOf = (sessionId: string, gen: number | null, s: LexicalState): PartClosed => ({
	session_id: sessionId,
	gen,
	users: s.users,
	...(s.anon ? { anon: true } : {}),
});

/**
 * How the manifests must list a log: still open, or closed at its opening (gen null: gone, and
 * unlisted where the log as it was read was listed).
 */
function listingOf(
	sessionId: string,
	log: SessionLog | null,
	read: SessionLog,
): { open?: OpenEntry; closed?: PartClosed } {
	if (log === null) return { closed: closedOf(sessionId, null, lexicalState(read)) };
	const s = lexicalState(log);
	if (s.open) return { open: entryOf(sessionId, s, Date.now()) };
	return { closed: closedOf(sessionId, s.gen, s) };
}

/**
 * What a search reads of these conversations' logs: each one's unfolded messages, as chunks, and where
 * the log stands (a log gone has state null).
 */
export async function readTails(p: BaseParts, sessionIds: string[]): Promise<SourceTail[]> {
	const logs = await inBatches(sessionIds, (s) => p.logs.read(p.logKey(s)));
	return logs.map(({ doc, version }, i) => {
		const id = sessionIds[i];
		if (version === null) return { id, key: `${p.logKey(id)}#gone`, docs: () => [], state: null };
		const state = lexicalState(doc);
		const messages = unfolded(doc.messages, state.through);
		const key = `${p.logKey(id)}#${version}`;
		return {
			id,
			key,
			docs: () => lexicalChunks(p, id, messages),
			state: { gen: state.gen, through: state.through },
		};
	});
}

/**
 * One log after its messages up to `folded` (as it was read) went into the manifest: `through`
 * moves there, and the log closes unless newer messages came meanwhile. Says how the manifest must
 * list it: still open, or closed at its opening (gen null: the log is gone).
 */
async function closeLog(
	p: BaseParts,
	folded: SessionLog,
): Promise<{ open?: OpenEntry; closed?: PartClosed; gone: boolean }> {
	const sessionId = folded.session_id;
	const result = await p.logs.update(p.logKey(sessionId), (cur) => {
		// Gone, or a new log since (forgotten and captured again): its numbers are not these.
		if (cur.version === null || cur.doc.created_at !== folded.created_at) return undefined;
		const { lexical } = foldedTo(cur.doc, folded.next_seq - 1, true);
		const s = cur.doc.lexical;
		if (!lexical || !s || (lexical.through === s.through && lexical.open === s.open))
			return undefined;
		return { ...cur.doc, lexical };
	});
	const now = result.current.version === null ? null : result.current.doc;
	return { ...listingOf(sessionId, now, folded), gone: now?.created_at !== folded.created_at };
}

/**
 * After the logs' messages (as read) went into the manifest: each log's `through` moves up and it
 * closes if nothing newer came, then one manifest update unlists the closed ones and lists those
 * still open (after a Regenerate, whose new manifest may miss them). Returns the conversations whose
 * log is gone since it was read (forgotten, perhaps captured into anew).
 */
export async function settle(
	p: BaseParts,
	logs: readonly SessionLog[],
	indexes?: BaseIndexes,
): Promise<Set<string>> {
	const after = await Promise.all(logs.map((log) => closeLog(p, log)));
	await (indexes ?? (await BaseIndexes.open(p))).addLexical([], {
		open: after.flatMap((a) => (a.open ? [a.open] : [])),
		closed: after.flatMap((a) => (a.closed ? [a.closed] : [])),
	});
	return new Set(logs.filter((_, i) => after[i].gone).map((l) => l.session_id));
}

/**
 * Takes out again what a fold or a seal put into the manifest from a log that is gone since it was
 * read: a Forget removed the conversation's chunks before, and must not find them back.
 */
export async function unfold(
	p: BaseParts,
	sessionId: string,
	chunks: readonly IndexedChunk[],
	indexes?: BaseIndexes,
) {
	if (chunks.length === 0) return;
	const ids = new Set(chunks.map((c) => c.id));
	const users = usersOf(chunks);
	const all = indexes ?? (await BaseIndexes.open(p));
	await all.forgetLexical(sessionId, users, (d) => ids.has(d.id));
}

/**
 * Folds open logs: their unfolded messages into the manifest, then each log closed and unlisted. It
 * holds no lock: what it put back of a conversation forgotten meanwhile it takes out again.
 */
export async function fold(p: BaseParts, sessionIds: string[]): Promise<void> {
	const read = await Promise.all(sessionIds.map((s) => readLog(p, s)));
	const added = read.map(({ log }) =>
		lexicalChunks(p, log.session_id, unfolded(log.messages, lexicalState(log).through)),
	);
	const indexes = await BaseIndexes.open(p);
	if (added.some((a) => a.length > 0)) await indexes.addLexical(added.flat());
	// A log read as missing has no creation time: one created since is not taken for it.
	const gone = await settle(
		p,
		read.map((r) => r.log),
		indexes,
	);
	for (const [i, { log }] of read.entries())
		if (gone.has(log.session_id)) await unfold(p, log.session_id, added[i], indexes);
}

/**
 * Folds every open log the manifests list, FOLD_BATCH at a time (a whole-base sync, before it
 * ingests): the base-wide index lists every one, otherwise each partition its own.
 */
export async function foldListed(p: BaseParts): Promise<void> {
	const indexes = await BaseIndexes.open(p);
	const all = indexes.wide === 'ready' ? [indexes.wideLexical()] : await indexes.allLexical();
	const manifests = await Promise.all(all.map((i) => i.readManifest()));
	const ids = [...new Set(manifests.flatMap((m) => (m.doc.open ?? []).map((o) => o.session_id)))];
	for (let i = 0; i < ids.length; i += FOLD_BATCH) await fold(p, ids.slice(i, i + FOLD_BATCH));
}

/** Logs listed this long are folded, IDLE_FOLD_AT or more at once (chats that ended with messages pending). */
export const IDLE_FOLD_MS = 15 * 60_000;
export const IDLE_FOLD_AT = 8;

/**
 * The open logs a capture that listed one folds, given what the manifests it wrote list: the longest
 * listed past OPEN_MAX, or, once IDLE_FOLD_AT have been listed longer than IDLE_FOLD_MS, those (up to
 * FOLD_BATCH). Without the second, a base whose chats end with a few messages pending would keep 32
 * to 64 logs listed, each read by every search of every conversation.
 */
export function toFold(listed: OpenSource[][], except: string, now = Date.now()): string[] {
	const crowded = listed.find((o) => o.length > OPEN_MAX);
	if (crowded) return longestListed(crowded, FOLD_BATCH, except);
	for (const open of listed) {
		const idle = open.filter(
			(o) => o.session_id !== except && now - Date.parse(o.at) > IDLE_FOLD_MS,
		);
		if (idle.length >= IDLE_FOLD_AT) return longestListed(idle, FOLD_BATCH, except);
	}
	return [];
}

/** The `n` longest listed open logs, other than `except`. */
export function longestListed(open: readonly OpenSource[], n: number, except: string): string[] {
	return [...open]
		.filter((o) => o.session_id !== except)
		.sort((a, b) => a.at.localeCompare(b.at))
		.slice(0, n)
		.map((o) => o.session_id);
}
