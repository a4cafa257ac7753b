// The base-wide index beside the partitions: every conversation's chunks in one word index and one
// vector index, so a search of every conversation reads a few manifests and their segments instead of
// every partition. Every write of a partition goes into it too (base-indexes.ts); here: filling it from
// the partitions a base already has (an upgrade), and what a search of it covers.
import { IndexDamagedError } from '../errors';
import {
	isBucketKey,
	isCellKey,
	SEGMENT_MAX_VECTORS,
	settleCellTiers,
	settleTiers,
} from '../indexes';
import type {
	EmbeddedIndex,
	IndexedChunk,
	LexicalIndex,
	LexicalManifest,
	VectorManifest,
} from '../indexes';
import type { Versioned } from '../store/document-store';
import { BaseIndexes, WIDE_SEGMENT_CHUNKS } from './base-indexes';
import { sessionPages } from './capture-log';
import { fold, FOLD_BATCH } from './log-folding';
import type { BaseParts } from './parts';
import type { MemoryBaseConfig, SessionLog } from './records';
import { registerHashes } from './registry';
import type { WideCoverage } from './types';

/** The live chunks of loaded segments (a later copy of an ID wins), in their order. */
export function liveChunks(segments: Array<{ docs: IndexedChunk[] }>): IndexedChunk[] {
	const seen = new Set<string>();
	const out: IndexedChunk[] = [];
	for (let s = segments.length - 1; s >= 0; s--)
		for (let d = segments[s].docs.length - 1; d >= 0; d--) {
			const doc = segments[s].docs[d];
			if (seen.has(doc.id)) continue;
			seen.add(doc.id);
			out.push(doc);
		}
	return out.reverse();
}

/** The live rows of loaded vector segments: their chunks, in order, and each one's row. */
export function rowsOf(
	segments: Array<{ chunks: IndexedChunk[]; vectors: Float32Array; dimensions: number }>,
	masks: Uint8Array[],
): { chunks: IndexedChunk[]; rows: Map<IndexedChunk, number[]> } {
	const rows = new Map<IndexedChunk, number[]>();
	const chunks: IndexedChunk[] = [];
	segments.forEach((seg, s) =>
		seg.chunks.forEach((c, r) => {
			if (!masks[s][r]) return;
			chunks.push(c);
			const at = r * seg.dimensions;
			rows.set(c, Array.from(seg.vectors.subarray(at, at + seg.dimensions)));
		}),
	);
	return { chunks, rows };
}

/**
 * Chunks copied into the base-wide index as older than what it holds, a segment's worth at a time
 * (an upgrade copies many small partitions: one segment each would leave it thousands).
 */
export class WideBatches {
	private words: IndexedChunk[] = [];
	private vectorChunks: IndexedChunk[] = [];
	private rows: number[][] = [];

	constructor(
		private readonly lexical: LexicalIndex,
		private readonly vectors: EmbeddedIndex,
	) {}

	// Whole segments only until the end: a batch of 4,100 written at once would leave a segment of 4
	// beside each full one, which nothing merges later (twice the reads for every search of the base).
	async addWords(chunks: readonly IndexedChunk[]): Promise<void> {
		this.words.push(...chunks);
		if (this.words.length >= WIDE_SEGMENT_CHUNKS) await this.flushWords(WIDE_SEGMENT_CHUNKS);
	}

	async addVectors(chunks: readonly IndexedChunk[], rows: readonly number[][]): Promise<void> {
		this.vectorChunks.push(...chunks);
		this.rows.push(...rows);
		if (this.vectorChunks.length >= 4 * SEGMENT_MAX_VECTORS)
			await this.flushVectors(SEGMENT_MAX_VECTORS);
	}

	/** Writes the chunks gathered, in multiples of `whole` (all of them with 1). */
	private async flushWords(whole = 1): Promise<void> {
		const n = this.words.length - (this.words.length % whole);
		if (n > 0) await this.lexical.addOlder(this.words.splice(0, n));
	}

	private async flushVectors(whole = 1): Promise<void> {
		const n = this.vectorChunks.length - (this.vectorChunks.length % whole);
		if (n > 0)
			await this.vectors.add(this.vectorChunks.splice(0, n), this.rows.splice(0, n), {
				older: true,
			});
	}

	async flush(): Promise<void> {
		await this.flushWords();
		await this.flushVectors();
	}
}

/**
 * Every partition's words into the base-wide index (one partition read at a time), then the logs
 * they list as open folded (with `open`, those another index listed), so the base-wide index holds
 * or lists them. Returns the chunks copied.
 */
export async function copyWordsToWide(
	p: BaseParts,
	indexes: BaseIndexes,
	alsoOpen: readonly string[] = [],
): Promise<number> {
	const batches = new WideBatches(indexes.wideLexical(), indexes.wideVectors());
	const open = new Set<string>(alsoOpen);
	let copied = 0;
	const hashes = await indexes.partHashes('lexical');
	// Partitions made before the registry (or by the copy of a single index) are registered now.
	await registerHashes(p, 'lexical', hashes);
	for (const hash of hashes) {
		const part = await indexes.lexicalPart('', hash).loadAll();
		if (part.missing.length > 0) throw new IndexDamagedError(p.baseId, part.missing, 'lexical');
		const chunks = liveChunks(part.loaded);
		copied += chunks.length;
		await batches.addWords(chunks);
		for (const o of part.manifest.doc.open ?? []) open.add(o.session_id);
	}
	await batches.flush();
	// The copied segments regrouped by word now, not one tier per later sync.
	await settleTiers(indexes.wideLexical());
	// Folded after the copy: what they add goes in once (and a fold lists nothing in partitions only).
	const ids = [...open];
	for (let i = 0; i < ids.length; i += FOLD_BATCH) await fold(p, ids.slice(i, i + FOLD_BATCH));
	return copied;
}

/** Every partition's vectors into the base-wide index (nothing is embedded again); returns how many. */
export async function copyVectorsToWide(p: BaseParts, indexes: BaseIndexes): Promise<number> {
	const batches = new WideBatches(indexes.wideLexical(), indexes.wideVectors());
	let copied = 0;
	const hashes = await indexes.partHashes('vector');
	await registerHashes(p, 'vector', hashes);
	for (const hash of hashes) {
		const { segments, masks } = await indexes.vectorPart('', hash).loadFor({});
		const { chunks, rows } = rowsOf(segments, masks);
		copied += chunks.length;
		await batches.addVectors(
			chunks,
			chunks.map((c) => rows.get(c)!),
		);
	}
	await batches.flush();
	// Regrouped by cell now, once they are all there (not one tier per later sync).
	await settleCellTiers(indexes.wideVectors());
	return copied;
}

/** What a manifest of the base-wide word index holds: chunks, and the newest capture among them. */
function wordsOf(m: Versioned<LexicalManifest>): { chunks: number; newest: string | null } {
	if (m.version === null) return { chunks: 0, newest: null };
	let chunks = m.doc.tail.length;
	let newest: string | null = null;
	const later = (t: string) => (newest === null || t > newest ? t : newest);
	for (const r of m.doc.segments) {
		chunks += r.count - (r.gone ?? 0);
		newest = later(r.to);
	}
	for (const d of m.doc.tail) newest = later(d.created_at);
	return { chunks, newest };
}

function vectorsOf(m: Versioned<VectorManifest> | undefined) {
	if (!m || m.version === null) return { vectors: 0, lastSync: null };
	const vectors = m.doc.segments.reduce((n, r) => n + r.count, 0);
	return { vectors, lastSync: m.doc.segments.length > 0 ? m.doc.updated_at : null };
}

/**
 * What a search of every conversation read: the base-wide index (its manifests as this search read
 * them: no request of its own) and the conversations it read from their capture logs, or every
 * partition while the base-wide index is being built.
 */
export async function coverageOf(
	indexes: BaseIndexes,
	config: MemoryBaseConfig | null,
	vectorsSearched: boolean,
): Promise<WideCoverage> {
	if (indexes.wide !== 'ready')
		return {
			source: 'partitions',
			state: indexes.wide,
			chunks: null,
			newestCapture: null,
			recentConversations: null,
			vectors: null,
			lastSync: null,
		};
	const lexical = await indexes.wideLexical().readManifest();
	const vector = vectorsSearched ? await indexes.wideVectors().readManifest() : undefined;
	const words = wordsOf(lexical);
	return {
		source: 'base-wide index',
		state: 'ready',
		since: config?.wide?.since ?? null,
		...(config?.wide?.refill ? { refill: config.wide.refill } : {}),
		chunks: words.chunks,
		newestCapture: words.newest,
		recentConversations: lexical.version === null ? 0 : (lexical.doc.open?.length ?? 0),
		...(vectorsSearched ? vectorsOf(vector) : { vectors: null, lastSync: null }),
	};
}

/** What the capture logs say, for the base-wide index's check. */
interface Logged {
	processed: number;
	captured: number;
	logs: Array<SessionLog | null>;
}

/** Why the base-wide word index cannot be trusted (or null): gone, or segments or tier buckets lost. */
async function wideWordsLacking(indexes: BaseIndexes, captured: number): Promise<string | null> {
	const { manifest, missing } = await indexes.wideLexical().lostSegments();
	if (manifest.version === null) return captured > 0 ? 'the base-wide word index is missing' : null;
	const buckets = missing.filter(isBucketKey).length;
	const segments = missing.length - buckets;
	if (segments > 0)
		return `the base-wide word index lost ${segments} of its ${manifest.doc.segments.length} segment(s)`;
	if (buckets > 0)
		return `the base-wide word index lost ${buckets} bucket(s) of its term tiers (Regenerate rebuilds them)`;
	return null;
}

/** Why the base-wide vector index cannot be trusted (or null): gone, segments lost, conversations absent. */
async function wideVectorsLacking(indexes: BaseIndexes, logged: Logged): Promise<string | null> {
	const { manifest, missing } = await indexes.wideVectors().lostSegments();
	if (logged.processed === 0) return null;
	if (manifest.version === null) return 'the base-wide vector index is missing';
	const cells = missing.filter(isCellKey).length;
	if (missing.length > cells)
		return `the base-wide vector index lost ${missing.length - cells} of its ${manifest.doc.segments.length} segment(s)`;
	if (cells > 0)
		return `the base-wide vector index lost ${cells} part(s) of its cell tiers (Regenerate rebuilds them)`;
	// Only the conversations asked about are looked for: the manifest names every conversation.
	const lacking = new Set(
		logged.logs.flatMap((l) => (l && l.total_processed > 0 ? [l.session_id] : [])),
	);
	for (const r of manifest.doc.segments) for (const s of r.sessions) lacking.delete(s);
	const absent = logged.logs.filter((l) => l && lacking.has(l.session_id));
	if (absent.length === 0) return null;
	const names = absent.map((l) => JSON.stringify(l!.session_id)).join(', ');
	return `the base-wide vector index holds nothing of conversation(s) ${names}, which the capture log says were processed`;
}

/**
 * The base-wide index against the capture logs (a Status of the whole base): why it cannot be
 * trusted (or null), and what a search of every conversation reads, as a search reports it.
 */
export async function wideHealth(
	p: BaseParts,
	indexes: BaseIndexes,
	config: MemoryBaseConfig | null,
	logged: Logged,
): Promise<{ reason: string | null; coverage: WideCoverage | null }> {
	if (config === null) return { reason: null, coverage: null };
	const vectors = !p.external();
	const coverage = await coverageOf(indexes, config, vectors);
	if (indexes.wide !== 'ready') return { reason: null, coverage };
	const reason =
		(await wideWordsLacking(indexes, logged.captured)) ??
		// While Regenerate refills it, its vectors come at the end (coverage.refill says since when).
		(vectors && !config.wide?.refill ? await wideVectorsLacking(indexes, logged) : null);
	return { reason, coverage };
}

/** Whether a base captured any conversation: its first page of them (never the whole listing). */
async function anySession(p: BaseParts): Promise<boolean> {
	for await (const page of sessionPages(p)) if (page.length > 0) return true;
	return false;
}

/** Whether a base holds no captured message (see MemoryBase.isEmpty). */
export async function holdsNothing(p: BaseParts): Promise<boolean> {
	const indexes = await BaseIndexes.open(p);
	if (indexes.wide !== 'ready') return !(await anySession(p));
	const m = await indexes.wideLexical().readManifest();
	if (m.version === null) return true;
	return m.doc.tail.length === 0 && m.doc.segments.length === 0 && !m.doc.open?.length;
}
