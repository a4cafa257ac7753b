// Open sources: conversations whose newest chunks the lexical index does not hold but reads, at search
// time, from where their owner keeps them (the Memory Base: the conversation's capture log), so
// adding to a conversation needs no write of the index. The manifest lists them; a search asks the
// reader its owner injected (SourceReader) for the listed ones in its scope, beside the segments.
// The index knows nothing of what a source is: only its listing (OpenSource) and what the reader
// gives back. The owner keeps every chunk findable by two rules (src/README.md, "Flat capture"):
//   - a source is listed before it holds chunks the index lacks;
//   - it is unlisted only after those chunks went into the index and the source was closed, and
//     only for the opening it closed (`gen`).
import type { ChunkFilter } from '../chunks/filter';
import type { IndexedChunk } from '../chunks/chunk';
import type { OpenSource } from './manifest';

/** Users listed per open source; past it, a search of any user reads the source. */
const USERS_MAX = 16;
/** A listing whose opening never came (its owner failed or crashed before it) goes after this. */
export const OPEN_STALE_MS = 15 * 60_000;

/** Where a source stands, as its owner read it: its opening, and what it says the manifests hold. */
export interface SourceState {
	gen: number;
	through: number;
}

/**
 * The chunks one source holds that the index does not, named by a key that changes whenever they
 * may (the Memory Base: the log's key and stored version); the index caches their segment under it.
 */
export interface SourceTail {
	/** The conversation. */
	id: string;
	key: string;
	docs: () => IndexedChunk[];
	/** Where it stands (null: gone); a search compares it with the listing (movedPast). */
	state: SourceState | null;
}

/** Reads the sources of these conversations: one tail each that exists (its chunks may be none). */
export type SourceReader = (sessionIds: string[]) => Promise<SourceTail[]>;

/** A source its owner closed at opening `gen` (null: the source is gone). */
export interface ClosedSource {
	session_id: string;
	gen: number | null;
}

/** What a manifest update lists and unlists beside the chunks it adds. */
export interface Listing {
	open?: OpenSource[];
	closed?: ClosedSource[];
	/**
	 * Sources whose chunks up to `through` this update adds: a listing of the same opening moves its
	 * `through` there; nothing is listed anew (the source may have been closed meanwhile).
	 */
	moved?: Array<{ session_id: string; gen: number; through: number }>;
}

/** The users of an opening: both lists together, null (any user) past USERS_MAX. */
export function mergeUsers(a: string[] | null, b: string[] | null): string[] | null {
	if (a === null || b === null) return null;
	const all = [...new Set([...a, ...b])];
	return all.length > USERS_MAX ? null : all;
}

const covers = (listed: OpenSource, entry: OpenSource) =>
	listed.gen >= entry.gen &&
	(listed.users === null ||
		(entry.users !== null && entry.users.every((u) => listed.users?.includes(u)))) &&
	(listed.gen > entry.gen ||
		entry.through === undefined ||
		(listed.through !== undefined && listed.through >= entry.through));

/** What the manifest holds of an opening: the newer opening's, or the further of one's two. */
function throughOf(listed: OpenSource, entry: OpenSource): number | undefined {
	if (entry.gen > listed.gen) return entry.through;
	if (listed.through === undefined) return entry.through;
	return entry.through === undefined ? listed.through : Math.max(listed.through, entry.through);
}

/**
 * Whether a source moved past its listing in a manifest read before it: folded further (or closed and
 * opened again), or gone. The manifest read then may lack what moved out of the source: read it again.
 * (A source at an older opening than its listing was read closed by the capture that listed it, after
 * its fold wrote the manifest: nothing moved.)
 */
export function movedPast(listed: OpenSource, state: SourceState | null): boolean {
	if (state === null || listed.through === undefined) return true;
	return state.gen > listed.gen || (state.gen === listed.gen && state.through > listed.through);
}

/** The open sources with `listing` applied; undefined when nothing changes. */
export function relist(
	open: readonly OpenSource[],
	listing: Listing,
	now: Date,
): OpenSource[] | undefined {
	let next = [...open];
	let changed = false;
	for (const entry of listing.open ?? []) {
		const i = next.findIndex((o) => o.session_id === entry.session_id);
		if (i < 0) next.push(entry);
		else if (!covers(next[i], entry)) {
			const through = throughOf(next[i], entry);
			const merged: OpenSource = {
				...next[i],
				gen: Math.max(next[i].gen, entry.gen),
				users: mergeUsers(next[i].users, entry.users),
			};
			if (through === undefined) delete merged.through;
			else merged.through = through;
			next[i] = merged;
		} else continue;
		changed = true;
	}
	for (const m of listing.moved ?? []) {
		const i = next.findIndex((o) => o.session_id === m.session_id && o.gen === m.gen);
		if (i < 0 || (next[i].through ?? -1) >= m.through) continue;
		next[i] = { ...next[i], through: m.through };
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

/** The listings of the sources a search in `filter` reads: its conversation's, or its user's (or all). */
export function sourcesInScope(
	open: readonly OpenSource[] | undefined,
	filter: ChunkFilter,
): OpenSource[] {
	const { sessionId, userId } = filter;
	return (open ?? []).filter(
		(o) =>
			(sessionId === undefined || o.session_id === sessionId) &&
			(userId === undefined || o.users === null || o.users.includes(userId)),
	);
}
