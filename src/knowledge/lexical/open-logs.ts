// Open capture logs: conversations whose newest messages the lexical index reads from their capture
// logs instead of holding them, so a capture writes its log and nothing else. The manifest lists
// them; a search reads the listed logs in its scope (one conditional read each) beside the segments.
// The rules that keep every captured message findable (src/README.md, "Flat capture"):
//   - a log is listed before it is opened (a capture lists it, then writes the log marked open);
//   - a fold first puts a log's newest messages into the manifest, then closes the log (only if
//     nothing newer came), then unlists it, and only for the opening it closed (`gen`).
import type { ChunkFilter } from '../filter';
import type { IndexedChunk } from '../vector-segment';
import type { OpenLog } from './manifest';

/** Open logs a manifest lists; the capture that lists one more folds the longest listed first. */
export const OPEN_MAX = 64;
/** How many open logs that capture folds at once. */
export const FOLD_BATCH = 32;
/** Users listed per open log; past it, a search of any user reads the log. */
const USERS_MAX = 16;
/** A listing whose opening never came (its capture failed or crashed first) goes after this. */
export const OPEN_STALE_MS = 15 * 60_000;

/** The newest messages of one log as chunks, named by the log's key and stored version (a cached form is valid for that version). */
export interface LogTail {
	key: string;
	docs: () => IndexedChunk[];
}

/** Reads the logs of these conversations and gives each one's newest (unfolded) messages. */
export type LogTails = (sessionIds: string[]) => Promise<LogTail[]>;

/** A log a fold closed at opening `gen` (null: the log is gone). */
export interface ClosedLog {
	session_id: string;
	gen: number | null;
}

/** What a manifest update lists and unlists beside the chunks it adds. */
export interface Listing {
	open?: OpenLog[];
	closed?: ClosedLog[];
}

/** The users of an opening: both lists together, null (any user) past USERS_MAX. */
export function mergeUsers(a: string[] | null, b: string[] | null): string[] | null {
	if (a === null || b === null) return null;
	const all = [...new Set([...a, ...b])];
	return all.length > USERS_MAX ? null : all;
}

const covers = (listed: OpenLog, entry: OpenLog) =>
	listed.gen >= entry.gen &&
	(listed.users === null ||
		(entry.users !== null && entry.users.every((u) => listed.users?.includes(u))));

/** The open logs with `listing` applied; undefined when nothing changes. */
export function relist(
	open: readonly OpenLog[],
	listing: Listing,
	now: Date,
): OpenLog[] | undefined {
	let next = [...open];
	let changed = false;
	for (const entry of listing.open ?? []) {
		const i = next.findIndex((o) => o.session_id === entry.session_id);
		if (i < 0) next.push(entry);
		else if (!covers(next[i], entry))
			next[i] = {
				...next[i],
				gen: Math.max(next[i].gen, entry.gen),
				users: mergeUsers(next[i].users, entry.users),
			};
		else continue;
		changed = true;
	}
	for (const c of listing.closed ?? []) {
		const kept = next.filter(
			(o) =>
				o.session_id !== c.session_id ||
				!((c.gen !== null && o.gen <= c.gen) || now.getTime() - Date.parse(o.at) > OPEN_STALE_MS),
		);
		changed ||= kept.length !== next.length;
		next = kept;
	}
	return changed ? next : undefined;
}

/** The conversations whose logs a search in `filter` reads: its own, or the listed ones of its user (or all). */
export function logsInScope(open: readonly OpenLog[] | undefined, filter: ChunkFilter): string[] {
	if (filter.sessionId !== undefined) return [filter.sessionId];
	const user = filter.userId;
	return (open ?? [])
		.filter((o) => user === undefined || o.users === null || o.users.includes(user))
		.map((o) => o.session_id);
}

/** The `n` longest listed open logs, other than `except`. */
export function longestListed(open: readonly OpenLog[], n: number, except: string): string[] {
	return [...open]
		.filter((o) => o.session_id !== except)
		.sort((a, b) => a.at.localeCompare(b.at))
		.slice(0, n)
		.map((o) => o.session_id);
}
