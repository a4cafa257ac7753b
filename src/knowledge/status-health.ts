// What Status checks of a set of indexes (one conversation's, or every index a whole-base Status reads
// before the base-wide index holds them all): whether they hold what the capture logs say was
// processed, with their figures.
import { lexicalStats } from '../indexes';
import type { ChunkFilter, EmbeddedIndex, IndexStats, LexicalStats } from '../indexes';
import type { BaseIndexes } from './base-indexes';
import { sessionUsers } from './capture-log';
import { knowledgeBaseMetadataKey } from './keys';
import type { BaseParts } from './parts';
import type { MemoryBaseConfig, SessionLog } from './records';
import { inBatches, PARALLEL } from './types';

/** What the index holds against what the logs say was processed. */
export interface IndexHealth {
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
 * The indexes a Status reads: the partitions of the conversations named (each once), or every index
 * but the base-wide one (what searches of a user or a conversation read; the base-wide index is
 * checked apart, wideHealth).
 */
async function inScope<T extends { manifestKey: string }>(
	p: BaseParts,
	sessions: readonly string[] | undefined,
	of: (filter: ChunkFilter, users: string[]) => Promise<T[]>,
	all: () => Promise<T[]>,
): Promise<T[]> {
	if (sessions === undefined) return all();
	const each = await inBatches(sessions, async (s) =>
		of({ sessionId: s }, await sessionUsers(p, s)),
	);
	const byKey = new Map<string, T>();
	for (const index of each.flat()) byKey.set(index.manifestKey, index);
	return [...byKey.values()];
}

export async function indexHealth(
	p: BaseParts,
	indexes: BaseIndexes,
	logs: Array<SessionLog | null>,
	sessions: readonly string[] | undefined,
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
		sessions,
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
export async function lexicalHealth(
	p: BaseParts,
	config: MemoryBaseConfig | null,
	indexes: BaseIndexes,
	captured: number,
	sessions: readonly string[] | undefined,
): Promise<{ stats: LexicalStats | null; reason: string | null }> {
	if (!config) return { stats: null, reason: null };
	const scoped = await inScope(
		p,
		sessions,
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

/** Why the index does not hold what metadata says was processed; null when it does. */
export function mismatchReason(processed: number, health: IndexHealth): string | null {
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

export const indexFigures = (stats: IndexStats) => ({
	exists: stats.exists,
	vectors: stats.vectors,
	segments: stats.segments,
	missingSegments: stats.missing.length,
});

export const lexicalFigures = (stats: LexicalStats) => ({
	exists: stats.exists,
	chunks: stats.chunks,
	segments: stats.segments,
	missingSegments: stats.missing.length,
});
