// A conversation's captures past their Expire After (stored in its capture log, counted from the last
// capture): left out of search at once, and deleted with their index entries by the next capture into
// the conversation or by Prune Expired. Only the log as judged goes (a conditional delete).
import { InvalidOptionError, SyncRunningError } from '../errors';
import { validateId } from '../keys/ids';
import { locked } from '../store/lease-locks';
import { deleteIfUnchanged, isExpired } from '../store/retention';
import { chunksOf, readLog, readMessages } from './capture-log';
import { storeToForgetFrom } from './lifecycle';
import type { BaseParts } from './parts';
import { usersOf } from './records';
import type { SessionLog } from './records';
import { BaseIndexes } from './base-indexes';
import { PARALLEL } from './types';
import type { ExpireResult } from './types';

export function clockOf(p: BaseParts): Date {
	return (p.options.now ?? (() => new Date()))();
}

/** Whether a capture log is past its rule at `now`, counted from its last capture (not its last sync). */
export function isLogExpired(log: SessionLog, now: Date): boolean {
	return isExpired({ expire_after_days: log.expire_after_days, updated_at: log.captured_at }, now);
}

const nothingExpired = (p: BaseParts, sessionId: string): ExpireResult => ({
	baseId: p.baseId,
	sessionId,
	expired: false,
	messages: 0,
	vectors: 0,
	lexical: 0,
	deleted: [],
});

/**
 * Deletes one conversation's captures if its log is past its rule at `now`. Holding the session's
 * lock (so no sync adds its vectors meanwhile), it reads the log again, removes the index entries of
 * the messages that log holds (vectors; lexical entries by message, so a capture since keeps its own),
 * then deletes the log only if it is still the version judged, then its sealed blocks. The log goes
 * last, so an interrupted pass is finished by the next one; a capture that came first keeps it (and
 * is reported as skipped). A sync holding the lock is skipped too, not waited for.
 */
export async function expireSession(
	p: BaseParts,
	sessionId: string,
	now: Date,
	options: { dryRun?: boolean } = {},
): Promise<ExpireResult> {
	const id = validateId('session_id', sessionId);
	const result = nothingExpired(p, id);
	const first = await readLog(p, id);
	if (first.version === null || !isLogExpired(first.log, now)) return result;
	result.expired = true;
	if (options.dryRun) {
		result.messages = first.log.next_seq - 1;
		result.deleted.push(p.logKey(id), ...first.log.sealed.map((b) => b.key));
		return result;
	}
	const config = await p.config();
	const external = config ? await storeToForgetFrom(p, config.kb_id) : undefined;
	try {
		return await locked(p.locks, id, 'expire', async () => {
			const { log, version } = await readLog(p, id);
			if (version === null || !isLogExpired(log, now))
				return { ...result, expired: false, skipped: 'captured again since it was judged' };
			const messages = await readMessages(p, log, 1, log.next_seq - 1);
			result.messages = messages.length;
			if (config) {
				if (external) {
					const ids = chunksOf(p, config.kb_id, id, messages).map((c) => c.id);
					if (!(await external.remove(ids, { strict: true })))
						throw new InvalidOptionError(
							'vectorStore',
							'the connected vector store cannot delete by ID, so expired captures cannot be deleted from it',
						);
					result.vectors = ids.length;
				}
				const indexes = await BaseIndexes.open(p, config);
				const users = [...new Set([...(log.users ?? []), ...usersOf(messages)])];
				if (!external) result.vectors = await indexes.forgetVectors(id, users);
				const held = new Set(messages.map((m) => m.id));
				result.lexical = await indexes.forgetLexical(id, users, (d) => held.has(d.message_id));
			}
			if (!(await deleteIfUnchanged(p.storage, p.logKey(id), version)))
				return { ...result, expired: false, skipped: 'captured again since it was judged' };
			result.deleted.push(p.logKey(id));
			for (const b of log.sealed) {
				await p.blocks.deleteWriteOnce(b.key);
				result.deleted.push(b.key);
			}
			return result;
		});
	} catch (error) {
		if (!(error instanceof SyncRunningError)) throw error;
		return { ...result, expired: false, skipped: error.message };
	}
}

/**
 * Which of these conversations are not past their rule at `now`: one conditional read of each capture
 * log, side by side. Search drops the hits of the others, which stay indexed until their captures are
 * deleted.
 */
export async function liveSessions(
	p: BaseParts,
	sessionIds: readonly string[],
	now: Date,
): Promise<Set<string>> {
	const unique = [...new Set(sessionIds)];
	const live = new Set<string>();
	for (let i = 0; i < unique.length; i += PARALLEL) {
		const batch = unique.slice(i, i + PARALLEL);
		const logs = await Promise.all(batch.map((s) => readLog(p, s)));
		logs.forEach((l, j) => {
			if (l.version === null || !isLogExpired(l.log, now)) live.add(batch[j]);
		});
	}
	return live;
}
