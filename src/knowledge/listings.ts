// How a lexical write lists and unlists the capture logs it reads from (open sources): in the
// partition of each of a log's users (and the conversation's own for messages without one), or, in an
// index of many users (a base's single index, the base-wide one), once per conversation.
import type { ClosedSource, Listing, OpenSource } from '../indexes';
import { sessionPart, userPart } from './partitions';

/** Users listed per open source in a single index; past it, a search of any user reads the source. */
const SINGLE_USERS_MAX = 16;

/**
 * An open source as the capture logs list it: in the partition of each of its users, and in the
 * conversation's own when messages without a user came (`anon`).
 */
export type PartOpen = OpenSource & { anon?: boolean };

/** A closed source with the users (and `anon`) its opening was listed for: its partitions. */
export type PartClosed = ClosedSource & { users: readonly string[] | null; anon?: boolean };

/** What a lexical write lists and unlists beside the chunks it adds. */
export interface PartListing {
	open?: PartOpen[];
	closed?: PartClosed[];
	/** Open logs whose listing now holds up to `through` (in the partitions of their users). */
	moved?: Array<{
		session_id: string;
		gen: number;
		through: number;
		users: readonly string[] | null;
		anon?: boolean;
	}>;
}

/**
 * The listing as an index of many users keeps it (a single index, the base-wide one): one entry per
 * conversation, its users capped (past it, any user reads the log).
 */
export function singleListing(listing: PartListing): Listing {
	return {
		open: listing.open?.map(({ anon: _anon, ...o }) =>
			o.users !== null && o.users.length > SINGLE_USERS_MAX ? { ...o, users: null } : o,
		),
		closed: listing.closed?.map((c) => ({ session_id: c.session_id, gen: c.gen })),
		moved: listing.moved,
	};
}

/** The listing per partition: each open source in the partition of each of its users. */
export function partListings(listing: PartListing): Map<string, Listing> {
	const out = new Map<string, Listing>();
	const at = (part: string) => out.get(part) ?? out.set(part, { open: [], closed: [] }).get(part)!;
	for (const { anon, ...o } of listing.open ?? []) {
		for (const u of o.users ?? []) at(userPart(u)).open!.push({ ...o, users: [u] });
		if (anon) at(sessionPart(o.session_id)).open!.push({ ...o, users: [] });
	}
	for (const c of listing.closed ?? []) {
		const closed = { session_id: c.session_id, gen: c.gen };
		for (const u of c.users ?? []) at(userPart(u)).closed!.push(closed);
		if (c.anon) at(sessionPart(c.session_id)).closed!.push(closed);
	}
	for (const { users, anon, ...m } of listing.moved ?? []) {
		for (const u of users ?? []) (at(userPart(u)).moved ??= []).push(m);
		if (anon) (at(sessionPart(m.session_id)).moved ??= []).push(m);
	}
	return out;
}
