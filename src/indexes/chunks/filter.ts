// Which captured chunks a search may return.
import type { IndexedChunk } from './chunk';

/** Which chunks a search may return: one conversation, one user, a time range. */
export interface ChunkFilter {
	sessionId?: string;
	userId?: string;
	/** ISO times, inclusive. */
	since?: string;
	until?: string;
}

export function passes(c: IndexedChunk, f: ChunkFilter): boolean {
	if (f.sessionId !== undefined && c.session_id !== f.sessionId) return false;
	if (f.userId !== undefined && c.user_id !== f.userId) return false;
	if (f.since !== undefined && c.created_at < f.since) return false;
	if (f.until !== undefined && c.created_at > f.until) return false;
	return true;
}

export function isUnfiltered(f: ChunkFilter): boolean {
	return (
		f.sessionId === undefined &&
		f.userId === undefined &&
		f.since === undefined &&
		f.until === undefined
	);
}
