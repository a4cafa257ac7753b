// Status: where each conversation's sync stands, whether a sync runs, and whether the indexes still
// hold what the logs say was processed (a mismatch that Regenerate repairs). A Status of the whole
// base checks a page of its conversations against their own partitions, and the base-wide index
// (which holds every conversation) from its manifests: what it reads does not grow with the base.
import { InvalidInputError } from '../errors';
import { validateId } from '../keys/ids';
import { isFresh, readLease } from '../store/lease';
import { BaseIndexes } from './base-indexes';
import { sessionsPage } from './capture-log';
import type { BaseParts } from './parts';
import { emptyLog } from './records';
import type { MemoryBaseConfig, SessionLog } from './records';
import {
	indexFigures,
	indexHealth,
	lexicalFigures,
	lexicalHealth,
	mismatchReason,
} from './status-health';
import type { IndexHealth } from './status-health';
import { inBatches } from './types';
import type { BaseStatus, SessionStatus, StatusOptions } from './types';
import type { LexicalStats } from '../indexes';
import { wideHealth } from './wide';

/** Conversations a Status of the whole base checks by default, and at most. */
export const STATUS_PAGE = 100;
export const STATUS_PAGE_MAX = 1_000;

interface Found {
	sessionId: string;
	log: SessionLog | null;
	running: boolean;
}

/** Each session's log (null when it has none) and whether a sync of it runs. */
async function readSessions(p: BaseParts, ids: string[]): Promise<Found[]> {
	return inBatches(ids, async (sessionId) => {
		const [log, lease] = await Promise.all([
			p.logs.read(p.logKey(sessionId)),
			readLease(p.storage, p.sessionLeaseKey(sessionId)),
		]);
		return {
			sessionId,
			log: log.version === null ? null : log.doc,
			running: !!lease && isFresh(lease.lease),
		};
	});
}

function sessionStatus(
	p: BaseParts,
	found: Found,
	health: IndexHealth,
	lexical: LexicalStats | null,
): SessionStatus {
	const { sessionId } = found;
	const log = found.log ?? emptyLog(sessionId, '');
	const vectorsLacking = p.external()
		? health.externalEmpty || health.missingSessions.has(sessionId)
		: (health.stats?.bySession[sessionId] ?? 0) === 0 || health.missingSessions.has(sessionId);
	const lexicalLacking =
		lexical !== null && log.next_seq > 1 && (lexical.bySession[sessionId] ?? 0) === 0;
	const lacking = (log.total_processed > 0 && vectorsLacking) || lexicalLacking;
	return {
		sessionId,
		cursor: log.cursor,
		cursorMessageId: log.cursor_message_id,
		totalProcessed: log.total_processed,
		lastSyncAt: log.last_sync_at,
		captured: log.next_seq - 1,
		pending: log.next_seq - 1 - log.cursor,
		syncRunning: found.running,
		mismatch: lacking,
	};
}

/** What a Status found: the conversations checked, the figures it gives, and why not to trust them. */
interface Checked {
	sessions: SessionStatus[];
	index: BaseStatus['index'];
	lexical: BaseStatus['lexical'];
	dims: number | null;
	/** Why the indexes cannot be trusted, or null. */
	reason: string | null;
	/** Which conversations an index holds nothing of, or null. */
	lacking: string | null;
}

/** What the capture logs found say: messages processed and captured, and the logs. */
interface Logged {
	processed: number;
	captured: number;
	logs: Array<SessionLog | null>;
}

const sum = (found: Found[], of: (log: SessionLog) => number) =>
	found.reduce((n, f) => n + (f.log ? of(f.log) : 0), 0);

function lackingReason(sessions: SessionStatus[], processed: number): string | null {
	const lacking = sessions.filter((s) => s.mismatch).map((s) => JSON.stringify(s.sessionId));
	if (lacking.length === 0) return null;
	const said = processed > 0 ? 'were processed' : 'were captured';
	return `an index holds nothing of session(s) ${lacking.join(', ')}, which the capture log says ${said}`;
}

/**
 * The conversations found, checked against the indexes that hold them: the partitions of those
 * `sessions` (each once), or, when undefined, every index but the base-wide one (a base without a
 * base-wide index: its single index, or its partitions while an upgrade moves them).
 */
async function check(
	p: BaseParts,
	config: MemoryBaseConfig | null,
	indexes: BaseIndexes,
	found: Found[],
	sessions: string[] | undefined,
	{ processed, captured, logs }: Logged,
): Promise<Checked> {
	const health = await indexHealth(p, indexes, logs, sessions);
	const lexical = await lexicalHealth(p, config, indexes, captured, sessions);
	const checked = found.map((f) => sessionStatus(p, f, health, lexical.stats));
	return {
		sessions: checked,
		index: health.stats ? indexFigures(health.stats) : null,
		lexical: lexical.stats ? lexicalFigures(lexical.stats) : null,
		dims: health.dims,
		reason: mismatchReason(processed, health) ?? lexical.reason,
		lacking: lackingReason(checked, processed),
	};
}

function pageLimit(limit: number | undefined): number {
	const n = limit ?? STATUS_PAGE;
	if (!Number.isSafeInteger(n) || n < 1 || n > STATUS_PAGE_MAX)
		throw new InvalidInputError('limit', `must be a whole number from 1 to ${STATUS_PAGE_MAX}`);
	return n;
}

/**
 * Per conversation: cursor, total processed, last sync time, pending count, whether a sync runs; and
 * a mismatch flag when metadata says messages were processed but an index is missing, empty, lost
 * segments, or holds none of a conversation's chunks (Regenerate rebuilds it). Of one conversation,
 * or of a page of the base's conversations (`after`, `limit`), with the base-wide index's coverage.
 */
export async function status(p: BaseParts, options: StatusOptions = {}): Promise<BaseStatus> {
	const config = await p.config();
	const kbId = await p.knowledgeBaseId(config);
	const indexes = await BaseIndexes.open(p, config);
	const one = options.sessionId !== undefined;
	const page = one
		? { ids: [validateId('session_id', options.sessionId)], next: null }
		: await sessionsPage(p, options.after, pageLimit(options.limit));
	// A folder without a log (a capture that stopped before writing it) is not a conversation yet.
	const found = (await readSessions(p, page.ids)).filter((f) => one || f.log !== null);
	// Each conversation against its own partitions once the base-wide index holds the whole base.
	const own = one || (indexes.kind === 'partitioned' && indexes.wide === 'ready');
	const logged: Logged = {
		processed: sum(found, (l) => l.total_processed),
		captured: sum(found, (l) => l.next_seq - 1),
		logs: found.map((f) => f.log),
	};
	const sessions = own ? found.map((f) => f.sessionId) : undefined;
	const checked = await check(p, config, indexes, found, sessions, logged);
	const wide = one ? undefined : await wideHealth(p, indexes, config, logged);
	const reason = checked.reason ?? wide?.reason ?? checked.lacking;
	const baseLease = await readLease(p.storage, p.baseLeaseKey);
	return {
		baseId: p.baseId,
		knowledgeBaseId: kbId,
		exists: config !== null,
		threshold: config?.threshold ?? null,
		autoCapture: config?.auto_capture ?? null,
		vectorStore: p.vectorStoreKind,
		index: checked.index,
		lexical: checked.lexical,
		dimensions: checked.dims,
		syncRunning: (!!baseLease && isFresh(baseLease.lease)) || found.some((f) => f.running),
		mismatch: reason !== null,
		mismatchReason: reason,
		wide: wide?.coverage ?? null,
		sessions: checked.sessions,
		nextAfter: page.next,
	};
}
