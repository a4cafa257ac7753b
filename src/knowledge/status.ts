// Status: where each session's sync stands, whether a sync runs, and whether the index still holds
// what the logs say was processed (a mismatch that Regenerate repairs).
import { lexicalStats } from '../indexes';
import type { EmbeddedIndex, IndexStats, LexicalStats } from '../indexes';
import { BaseIndexes } from './base-indexes';
import { knowledgeBaseMetadataKey } from './keys';
import { validateId } from '../keys/ids';
import { isFresh, readLease } from '../store/lease';
import { listSessions, sessionUsers } from './capture-log';
import type { BaseParts } from './parts';
import { emptyLog } from './records';
import type { MemoryBaseConfig, SessionLog } from './records';
import { inBatches, PARALLEL } from './types';
import type { BaseStatus, SessionStatus } from './types';
import type { ChunkFilter } from '../indexes';
import { wideHealth } from './wide';

/** Each session's log (null when it has none) and whether a sync of it runs. */
async function readSessions(p: BaseParts, ids: string[]) {
	const out: Array<{ log: SessionLog | null; running: boolean }> = [];
	for (let i = 0; i < ids.length; i += PARALLEL) {
		const batch = ids.slice(i, i + PARALLEL);
		const read = await Promise.all(
			batch.map(async (s) => {
				const [log, lease] = await Promise.all([
					p.logs.read(p.logKey(s)),
					readLease(p.storage, p.sessionLeaseKey(s)),
				]);
				return {
					log: log.version === null ? null : log.doc,
					running: !!lease && isFresh(lease.lease),
				};
			}),
		);
		out.push(...read);
	}
	return out;
}

/** What the index holds against what the logs say was processed. */
interface IndexHealth {
	stats?: IndexStats;
	/** A connected store that holds nothing of this base although messages were processed. */
	externalEmpty: boolean;
	/** Sessions with rows in segments storage lost, or none of their chunks in the connected store. */
	missingSessions: Set<string>;
	dims: number | null;
}

/** What the vector indexes hold together, and the sessions with rows in segments storage lost. */
async function vectorStats(indexes: EmbeddedIndex[]) {
	const all = await inBatches(
		indexes,
		async (i) => [await i.stats(), await i.readManifest()] as const,
	);
	const stats: IndexStats = {
		dimensions: all.find(([s]) => s.dimensions !== null)?.[0].dimensions ?? null,
		segments: 0,
		vectors: 0,
		bySession: {},
		missing: [],
		exists: all.some(([s]) => s.exists),
	};
	const missingSessions = new Set<string>();
	for (const [one, manifest] of all) {
		stats.segments += one.segments;
		stats.vectors += one.vectors;
		stats.missing.push(...one.missing);
		for (const [s, n] of Object.entries(one.bySession))
			stats.bySession[s] = (stats.bySession[s] ?? 0) + n;
		const missing = new Set(one.missing);
		for (const ref of manifest.version === null ? [] : manifest.doc.segments)
			if (missing.has(ref.key)) ref.sessions.forEach((s) => missingSessions.add(s));
	}
	return { stats, missingSessions };
}

/**
 * The indexes a Status reads: one conversation's partitions, or all of them (what searches of a user
 * or a conversation read; the base-wide index is checked apart, wideHealth).
 */
async function inScope<T>(
	p: BaseParts,
	sessionId: string | undefined,
	of: (filter: ChunkFilter, users: string[]) => Promise<T[]>,
	all: () => Promise<T[]>,
): Promise<T[]> {
	if (sessionId === undefined) return all();
	return of({ sessionId }, await sessionUsers(p, sessionId));
}

async function indexHealth(
	p: BaseParts,
	indexes: BaseIndexes,
	logs: Array<SessionLog | null>,
	sessionId: string | undefined,
): Promise<IndexHealth> {
	const processed = logs.reduce((n, l) => n + (l?.total_processed ?? 0), 0);
	const meta = await p.metadata.read(knowledgeBaseMetadataKey(indexes.kbId, p.keyPrefix));
	const dims = meta.version === null ? null : meta.doc.dimensions;
	const external = p.external();
	if (external) {
		const missingSessions = new Set<string>();
		const externalEmpty = processed > 0 && (dims === null || !(await external.holdsAny(dims)));
		if (!externalEmpty && dims !== null)
			await probeSessions(logs, missingSessions, (s) => external.holdsAny(dims, s));
		return { externalEmpty, missingSessions, dims };
	}
	const scoped = await inScope(
		p,
		sessionId,
		(f, u) => indexes.vectorsFor(f, u),
		() => indexes.partsVectors(),
	);
	const { stats, missingSessions } = await vectorStats(scoped);
	return { stats, externalEmpty: false, missingSessions, dims };
}

/**
 * One nearest-neighbour query per conversation with embedded messages, filtered to it, a few side by
 * side: the conversations a connected store holds none of (rows deleted behind the base's back).
 */
async function probeSessions(
	logs: Array<SessionLog | null>,
	missing: Set<string>,
	holds: (sessionId: string) => Promise<boolean>,
): Promise<void> {
	const embedded = logs.filter((l): l is SessionLog => !!l && l.total_processed > 0);
	for (let i = 0; i < embedded.length; i += PARALLEL) {
		const batch = embedded.slice(i, i + PARALLEL);
		const held = await Promise.all(batch.map((l) => holds(l.session_id)));
		batch.forEach((l, j) => held[j] || missing.add(l.session_id));
	}
}

/** The lexical index against the capture logs: what it holds, and why it cannot be trusted (or null). */
async function lexicalHealth(
	p: BaseParts,
	config: MemoryBaseConfig | null,
	indexes: BaseIndexes,
	captured: number,
	sessionId: string | undefined,
): Promise<{ stats: LexicalStats | null; reason: string | null }> {
	if (!config) return { stats: null, reason: null };
	const scoped = await inScope(
		p,
		sessionId,
		(f, u) => indexes.lexicalFor(f, u),
		() => indexes.partsLexical(),
	);
	const stats = await lexicalStats(scoped);
	let reason: string | null = null;
	if (captured > 0 && config.lexical_since === undefined)
		reason = `the base was created before captures went into a lexical index: it holds none of its ${captured} older message(s)`;
	else if (captured > 0 && !stats.exists)
		reason = `${captured} message(s) were captured, but the lexical index is missing`;
	else if (stats.missing.length > 0)
		reason = `the lexical index lost ${stats.missing.length} of its ${stats.segments} segment(s)`;
	return { stats, reason };
}

function sessionStatus(
	p: BaseParts,
	sessionId: string,
	found: { log: SessionLog | null; running: boolean },
	health: IndexHealth,
	lexical: LexicalStats | null,
): SessionStatus {
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

/** Why the index does not hold what metadata says was processed; null when it does. */
function mismatchReason(processed: number, health: IndexHealth): string | null {
	const { stats } = health;
	if (processed === 0) return null;
	const said = `metadata says ${processed} message(s) were processed, but`;
	if (health.externalEmpty) return `${said} the vector store holds none of this base`;
	if (stats && !stats.exists) return `${said} the vector index is missing`;
	if (stats && stats.missing.length > 0)
		return `the vector index lost ${stats.missing.length} of its ${stats.segments} segment(s)`;
	if (stats && stats.vectors === 0) return `${said} the vector index is empty`;
	return null;
}

/**
 * Per session: cursor, total processed, last sync time, pending count, whether a sync runs; and a
 * mismatch flag when metadata says messages were processed but the index is missing, empty, lost
 * segments, or holds none of a session's chunks (Regenerate rebuilds it).
 */
export async function status(
	p: BaseParts,
	options: { sessionId?: string } = {},
): Promise<BaseStatus> {
	const config = await p.config();
	const kbId = await p.knowledgeBaseId(config);
	const ids =
		options.sessionId !== undefined
			? [validateId('session_id', options.sessionId)]
			: await listSessions(p);
	const found = await readSessions(p, ids);
	const baseLease = await readLease(p.storage, p.baseLeaseKey);
	const processed = found.reduce((n, f) => n + (f.log?.total_processed ?? 0), 0);
	const captured = found.reduce((n, f) => n + (f.log ? f.log.next_seq - 1 : 0), 0);
	const indexes = await BaseIndexes.open(p, config);
	const health = await indexHealth(
		p,
		indexes,
		found.map((f) => f.log),
		options.sessionId,
	);
	const lexical = await lexicalHealth(p, config, indexes, captured, options.sessionId);
	const wide =
		options.sessionId === undefined
			? await wideHealth(p, indexes, config, { processed, captured, logs: found.map((f) => f.log) })
			: undefined;
	const sessions = ids.map((id, i) => sessionStatus(p, id, found[i], health, lexical.stats));
	const lacking = sessions.filter((s) => s.mismatch).map((s) => JSON.stringify(s.sessionId));
	const reason =
		mismatchReason(processed, health) ??
		lexical.reason ??
		wide?.reason ??
		(lacking.length
			? `an index holds nothing of session(s) ${lacking.join(', ')}, which the capture log says ${processed > 0 ? 'were processed' : 'were captured'}`
			: null);
	const { stats } = health;
	return {
		baseId: p.baseId,
		knowledgeBaseId: kbId,
		exists: config !== null,
		threshold: config?.threshold ?? null,
		autoCapture: config?.auto_capture ?? null,
		vectorStore: p.vectorStoreKind,
		index: stats ? indexFigures(stats) : null,
		lexical: lexical.stats ? lexicalFigures(lexical.stats) : null,
		dimensions: health.dims,
		syncRunning: (!!baseLease && isFresh(baseLease.lease)) || found.some((f) => f.running),
		mismatch: reason !== null,
		mismatchReason: reason,
		wide: wide?.coverage ?? null,
		sessions,
	};
}

const indexFigures = (stats: IndexStats) => ({
	exists: stats.exists,
	vectors: stats.vectors,
	segments: stats.segments,
	missingSegments: stats.missing.length,
});

const lexicalFigures = (stats: LexicalStats) => ({
	exists: stats.exists,
	chunks: stats.chunks,
	segments: stats.segments,
	missingSegments: stats.missing.length,
});
