// How a base's indexes are laid out. A base created now keeps one partition per user (and one per
// conversation for messages captured without a user): its own word-index manifest and segments, its
// own vector manifest and segments, merged only within it. So what one user's search reads is bounded
// by that user's chunks, whatever the base holds. Bases created before partitions keep one index for
// the whole base ("single") until an upgrade moves them ("moving" while it copies: upgrade.ts).
import { createHash } from 'node:crypto';

import type { ChunkFilter } from '../indexes';
import { lexicalPartsPrefix, partitionFolder, vectorPartsPrefix } from './keys';
import type { MemoryBaseConfig } from './records';

export type LayoutKind = 'single' | 'moving' | 'partitioned';

/** A base's layout: a base not created yet is created partitioned. */
export function layoutKind(config: MemoryBaseConfig | null): LayoutKind {
	if (config === null) return 'partitioned';
	return config.layout ?? 'single';
}

/** Where the base-wide index stands (records.ts): none yet, taking every write, or searched. */
export type WideState = 'none' | 'building' | 'ready';

/** The base-wide index's state: a base not created yet is created with it. */
export function wideState(config: MemoryBaseConfig | null): WideState {
	if (config === null) return 'ready';
	return config.wide?.state ?? 'none';
}

/** The partition of a user's messages. */
export const userPart = (userId: string) => `u:${userId}`;
/** The partition of a conversation's messages captured without a user. */
export const sessionPart = (sessionId: string) => `s:${sessionId}`;

/** The partition a chunk (or message) belongs to. */
export function partOf(c: { user_id?: string; session_id: string }): string {
	return c.user_id !== undefined ? userPart(c.user_id) : sessionPart(c.session_id);
}

/** A partition's folder name: 32 hex digits of the SHA-256 of its owner (the owner is checked on read). */
export function partHash(part: string): string {
	return createHash('sha256').update(part, 'utf8').digest('hex').slice(0, 32);
}

/** The folder of one partition's word index (manifest and segments), or the one at `hash`. */
export function lexicalPartFolder(
	baseId: string,
	at: { part?: string; hash?: string },
	prefix?: string,
) {
	const hash = at.hash ?? partHash(at.part!);
	return `${lexicalPartsPrefix(baseId, prefix)}${partitionFolder(hash)}lexical/`;
}

/** The folder of one partition's vector index (manifest and segments), or the one at `hash`. */
export function vectorPartFolder(
	kbId: string,
	at: { part?: string; hash?: string },
	prefix?: string,
) {
	const hash = at.hash ?? partHash(at.part!);
	return `${vectorPartsPrefix(kbId, prefix)}${partitionFolder(hash)}index/`;
}

/** Items by the partition each belongs to, in their order. */
export function byPart<T extends { user_id?: string; session_id: string }>(
	items: readonly T[],
): Map<string, T[]> {
	const out = new Map<string, T[]>();
	for (const item of items) {
		const part = partOf(item);
		const list = out.get(part);
		if (list) list.push(item);
		else out.set(part, [item]);
	}
	return out;
}

/**
 * The partitions a search reads: its user's (a user's search returns that user's chunks only), or
 * its conversation's (its own and each of its users'); null: every partition (all users).
 */
export function partsOfFilter(
	filter: ChunkFilter,
	sessionUsers: readonly string[],
): string[] | null {
	if (filter.userId !== undefined) return [userPart(filter.userId)];
	if (filter.sessionId !== undefined)
		return [sessionPart(filter.sessionId), ...sessionUsers.map(userPart)];
	return null;
}

/** The partitions of one conversation's messages: its own and each of its users'. */
export function partsOfSession(sessionId: string, users: readonly string[]): string[] {
	return [sessionPart(sessionId), ...[...new Set(users)].map(userPart)];
}
