// The locks of a base: one per session (a sync of it) and one for the whole base (sync of every
// session, regenerate, delete). Expiring leases, so a crashed holder blocks others for a while only.
import { SyncRunningError } from '../errors';
import { listSessions } from './capture-log';
import { acquireLease, isFresh, readLease } from './lease';
import type { HeldLease } from './lease';
import type { BaseParts } from './parts';
import { PARALLEL } from './types';

export type Leases = { base?: HeldLease; sessions: Map<string, HeldLease> };

/** What a running sync holds, as another caller finds it. */
export interface RunningSync {
	sessionId: string | null;
	lease: { acquired_at: string; expires_at: string; operation: string };
}

export function runningError(
	p: BaseParts,

	sessionId: string | null,
	lease: { acquired_at: string; expires_at: string; operation: string } | undefined,
): SyncRunningError {
	return new SyncRunningError(
		p.baseId,
		sessionId,
		lease?.acquired_at,
		lease?.expires_at,
		lease?.operation,
	);
}

async function takeSession(p: BaseParts, sessionId: string, operation: string): Promise<HeldLease> {
	return acquireLease(
		p.storage,
		p.sessionLeaseKey(sessionId),
		{ ttlMs: p.leaseMs, operation },
		(lease) => runningError(p, sessionId, lease),
	);
}

async function release(leases: Leases): Promise<void> {
	await Promise.all([...leases.sessions.values()].map((l) => l.release().catch(() => {})));
	await leases.base?.release().catch(() => {});
}

/**
 * Runs `fn` holding the locks a sync needs: for one session, that session's lock (and no whole-base
 * operation running); for the whole base, the base's lock and every session's. Any of them held by
 * another sync: SyncRunningError, with nothing changed.
 */
export async function locked<T>(
	p: BaseParts,
	sessionId: string | undefined,
	operation: string,
	fn: (sessions: string[], leases: Leases) => Promise<T>,
): Promise<T> {
	const leases: Leases = { sessions: new Map() };
	try {
		if (sessionId !== undefined) {
			leases.sessions.set(sessionId, await takeSession(p, sessionId, operation));
			const base = await readLease(p.storage, p.baseLeaseKey);
			if (base && isFresh(base.lease)) throw runningError(p, null, base.lease);
			return await fn([sessionId], leases);
		}
		leases.base = await acquireLease(
			p.storage,
			p.baseLeaseKey,
			{ ttlMs: p.leaseMs, operation },
			(lease) => runningError(p, null, lease),
		);
		const sessions = await listSessions(p);
		for (let i = 0; i < sessions.length; i += PARALLEL) {
			const batch = sessions.slice(i, i + PARALLEL);
			const taken = await Promise.allSettled(batch.map((s) => takeSession(p, s, operation)));
			taken.forEach((t, j) => {
				if (t.status === 'fulfilled') leases.sessions.set(batch[j], t.value);
			});
			const failed = taken.find((t) => t.status === 'rejected');
			if (failed) throw (failed as PromiseRejectedResult).reason;
		}
		return await fn(sessions, leases);
	} finally {
		await release(leases);
	}
}

export async function runningSyncs(p: BaseParts): Promise<RunningSync[]> {
	const out: RunningSync[] = [];
	const base = await readLease(p.storage, p.baseLeaseKey);
	if (base && isFresh(base.lease)) out.push({ sessionId: null, lease: base.lease });
	const sessions = await listSessions(p);
	for (let i = 0; i < sessions.length; i += PARALLEL) {
		const batch = sessions.slice(i, i + PARALLEL);
		const found = await Promise.all(batch.map((s) => readLease(p.storage, p.sessionLeaseKey(s))));
		found.forEach((l, j) => {
			if (l && isFresh(l.lease)) out.push({ sessionId: batch[j], lease: l.lease });
		});
	}
	return out;
}
