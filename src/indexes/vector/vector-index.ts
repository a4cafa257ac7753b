// The embedded vector index: segments of Float32 vectors with their chunks, write-once on the package's
// storage, listed by a small manifest moved by compare-and-swap; loaded lazily and searched exactly
// (cosine similarity over L2-normalised vectors). Pure TypeScript: no native module, no server.

import { DimensionMismatchError, IndexDamagedError } from '../../errors';
import { validateKeyPrefix } from '../../keys/ids';
import { DocumentStore } from '../../store/document-store';
import type { Versioned } from '../../store/document-store';
import { forEachKey, storageIdentity } from '../../store/storage';
import type { MemoryStorage } from '../../store/storage';
import type { IndexedChunk } from '../chunks/chunk';
import type { ChunkFilter } from '../chunks/filter';
import { checkListed, ListedKeys, missingFrom } from '../chunks/listed';
import { listedBy } from '../chunks/orphans';
import type { ListedSegment } from '../chunks/listed';
import { checkOwner, guarded } from '../chunks/manifest-guard';
import type { SearchReads } from '../chunks/search-reads';
import { RETIRE_GRACE_MS } from '../chunks/retiring';
import type { RetirePolicy } from '../chunks/retiring';
import { manifestCodec } from './manifest';
import type { IndexManifest, SegmentRef } from './manifest';
import { cellBuckets, readCellBucket, segments } from './caches';
import { cellTierParts, cellUpkeepAfterAdd } from './cell-upkeep';
import { clearLiveMasks, liveMask } from './live-masks';
import { emptyMovedIndex, forgetSessionRows, sweepOrphanSegments } from './vector-maintenance';
import { compactIndex, stillListed } from './vector-merge';
import { rankOver } from './ranking';
import type { LoadedVectors, VectorRanking } from './ranking';
import { rowsOf, writeSegmentRows } from './segment-writer';
import type { RowToStore } from './segment-writer';
import { decodeSegment } from './stored-vectors';
import { normaliseRows, prepare, partsOf, rowCount, weightOf } from './vector-segment';
import type { Segment, VectorMatch } from './vector-segment';
import type { Touched } from '../chunks/touched';

/** Forgets every decoded segment and cell bucket (benchmarks of cold searches, tests). */
export function clearVectorCache(): void {
	segments.clear();
	cellBuckets.clear();
	clearLiveMasks();
}

export interface IndexStats {
	dimensions: number | null;
	segments: number;
	/** Distinct chunks (vectors) searchable, superseded copies not counted. */
	vectors: number;
	/** Live vectors per session. */
	bySession: Record<string, number>;
	/** Segments the manifest lists that storage does not hold. */
	missing: string[];
	/** Whether the manifest exists at all. */
	exists: boolean;
}

/** Readings of the manifest a load makes at most while merges replace what it read. */
const LOAD_ATTEMPTS = 8;

/** The embedded vector index of one knowledge base. */
export class EmbeddedIndex {
	/** Internal to the index and its maintenance (vector-maintenance.ts). */
	readonly manifests: DocumentStore<IndexManifest>;
	/** The folder of everything the index stores: its manifest, and its segments under `segments/`. */
	readonly prefix: string;
	readonly manifestKey: string;
	readonly segmentsPrefix: string;
	/** This index's cap within the process-wide segment cache (its own setting; others keep theirs). */
	private readonly cacheBytes?: number;
	/** What the cap covers: this index, or every partition of its knowledge base. */
	private readonly cacheGroup: string;
	/** The partition's owner when it is one (a manifest of another owner is refused). */
	readonly owner?: string;
	/** The reads of the search it is opened for: its manifest once, its parts within the search's bytes. */
	readonly reads?: SearchReads;
	/** Bytes a segment may take, about (no limit unless set): see partsOf. */
	readonly segmentBytes: number;
	/** Whether its settled segments are kept in cell tiers (cell-upkeep.ts: the base-wide index). */
	readonly tiered: boolean;
	/** Bytes of vectors a cell bucket it writes holds, at most (cell-tiers.ts: BUCKET_BYTES unless set). */
	readonly bucketBytes?: number;

	/** `kbId` names the index in errors; `prefix` is its folder (its owner's key layout decides where). */
	constructor(
		readonly storage: MemoryStorage,
		readonly kbId: string,
		prefix: string,
		readonly maxAttempts = 12,
		options: {
			cacheBytes?: number;
			cacheGroup?: string;
			owner?: string;
			reads?: SearchReads;
			segmentBytes?: number;
			tiers?: boolean;
			bucketBytes?: number;
		} = {},
	) {
		this.prefix = validateKeyPrefix('vector index folder', prefix);
		this.manifestKey = `${this.prefix}manifest.json`;
		this.segmentsPrefix = `${this.prefix}segments/`;
		this.manifests = new DocumentStore(storage, manifestCodec, { maxAttempts });
		this.cacheBytes = options.cacheBytes;
		this.cacheGroup = this.cacheId(options.cacheGroup ?? this.manifestKey);
		this.owner = options.owner;
		this.reads = options.reads;
		this.segmentBytes = options.segmentBytes ?? Infinity;
		this.tiered = options.tiers === true;
		this.bucketBytes = options.bucketBytes;
	}

	private cacheId(key: string): string {
		return `${storageIdentity(this.storage)}\n${key}`;
	}

	/** How it deletes what a swap replaced (chunks/retiring.ts): after a grace when searches stream it. */
	get retiring(): RetirePolicy {
		return { prefix: this.segmentsPrefix, graceMs: this.tiered ? RETIRE_GRACE_MS : 0 };
	}

	/** Keeps a decoded segment for searches of this process (within this index's cap), made ready to search. */
	cacheSegment(segment: Segment): void {
		this.keep(prepare(segment));
	}

	private keep(segment: Segment): void {
		segments.set(this.cacheId(segment.key), segment, {
			weight: weightOf(segment),
			group: this.cacheGroup,
			groupMax: this.cacheBytes,
		});
	}

	/** Forgets a segment or cell bucket that was deleted (or is about to be). */
	uncacheSegment(key: string): void {
		segments.delete(this.cacheId(key));
		cellBuckets.delete(this.cacheId(key));
	}

	/**
	 * A cell tier's bucket for a search, decoded (and checked) by `decode` once per process; null when
	 * storage does not hold it. Within this index's cap, a quarter of it for buckets.
	 */
	readCellBucket(key: string, decode: (body: Uint8Array) => Segment): Promise<Segment | null> {
		return readCellBucket(this.storage, this.cacheId(key), key, decode, {
			group: this.cacheGroup,
			groupMax: this.cacheBytes,
		});
	}

	/** The manifest (version null: no index yet): this search's read of it, or a new one with `fresh`. */
	async readManifest(fresh = false): Promise<Versioned<IndexManifest>> {
		const read = async () =>
			checkOwner(this.manifestKey, this.owner, await this.manifests.read(this.manifestKey));
		return this.reads ? this.reads.once(this.manifestKey, read, fresh) : read();
	}

	/** One compare-and-swap of the manifest (refused once the index was moved, unless `onMoved`). */
	updateManifest(
		fn: (cur: Versioned<IndexManifest>) => IndexManifest | undefined,
		onMoved: 'refuse' | 'allow' = 'refuse',
	) {
		return this.manifests.update(
			this.manifestKey,
			guarded(this.manifestKey, this.owner, fn, onMoved),
		);
	}

	/** Marks the index moved to the partitioned layout: its content stays for readers until `retire`. */
	async markMoved(at: string): Promise<Versioned<IndexManifest>> {
		const result = await this.updateManifest(
			(cur) =>
				cur.version === null || cur.doc.moved_at !== undefined
					? undefined
					: { ...cur.doc, moved_at: at },
			'allow',
		);
		return result.current;
	}

	/** See emptyMovedIndex. */
	retire(): Promise<string[]> {
		return emptyMovedIndex(this);
	}

	/**
	 * A listed segment, decoded once per process (checkListed); null when storage does not hold it.
	 * With `quantize: false` a segment read from storage is kept without its int8 rows (prepare): a
	 * search that streams an index too large to keep reads most segments once, and an exact pass over
	 * a segment's rows costs less than making them.
	 */
	async readSegment(
		ref: ListedSegment,
		options: { quantize?: boolean } = {},
	): Promise<Segment | null> {
		const cached = segments.get(this.cacheId(ref.key));
		const got = cached ? undefined : await this.storage.get(ref.key);
		if (got === null) return null;
		const segment = cached ?? decodeSegment(ref.key, got!.body);
		checkListed(ref, rowCount(segment), got?.body.byteLength);
		if (cached) return cached;
		const ready = options.quantize === false ? segment : prepare(segment);
		this.keep(ready);
		return ready;
	}

	/** Writes chunks and their rows as a new write-once segment; returns its manifest entry and the decoded segment. */
	async writeSegment(
		dims: number,
		chunks: IndexedChunk[],
		vectors: Float32Array,
	): Promise<{ ref: SegmentRef; segment: Segment }> {
		const ref = await this.writeRows(dims, rowsOf(chunks, vectors), chunks.length);
		if (!ref) throw new RangeError('a segment needs a row at least');
		return { ref, segment: { key: ref.key, dimensions: dims, chunks, vectors, bytes: ref.bytes } };
	}

	/** Writes rows taken one at a time (at most `capacity`) as a new segment (writeSegmentRows). */
	writeRows(dims: number, rows: Iterable<RowToStore>, capacity: number) {
		return writeSegmentRows(this, dims, rows, capacity);
	}

	/**
	 * Adds chunks with their vectors (rows as the embedding model returned them): write-once segments
	 * (partsOf), each appended to the manifest by compare-and-swap. A chunk ID already indexed is
	 * superseded (searches and counts see it once). Returns when every chunk is listed in the manifest.
	 * With `older`, they are listed before everything the index holds (an upgrade's copies).
	 */
	async add(
		chunks: IndexedChunk[],
		rows: unknown,
		options: { older?: boolean } = {},
	): Promise<{ created: boolean }> {
		if (chunks.length === 0) return { created: false };
		const current = await this.readManifest(true);
		const stored = current.version === null ? undefined : current.doc.dimensions;
		const vectors = normaliseRows(rows, chunks.length);
		const dims = vectors.length / chunks.length;
		if (stored !== undefined && stored !== dims)
			throw new DimensionMismatchError(this.kbId, stored, dims);
		let created = false;
		const ends = partsOf(chunks, dims, this.segmentBytes);
		for (let from = 0, at = 0; at < ends.length; from = ends[at++]) {
			const part = chunks.slice(from, ends[at]);
			const { ref, segment } = await this.writeSegment(
				dims,
				part,
				vectors.subarray(from * dims, (from + part.length) * dims),
			);
			let first = false;
			const result = await this.updateManifest((cur) => {
				first = cur.version === null;
				const m = cur.version === null ? undefined : cur.doc;
				if (m && m.dimensions !== dims)
					throw new DimensionMismatchError(this.kbId, m.dimensions, dims);
				const list = [...(m?.segments ?? [])];
				list.splice(options.older ? at : list.length, 0, ref);
				return { ...m, dimensions: dims, segments: list, updated_at: ref.created_at };
			});
			created ||= result.written && first;
			// A search of this process finds it without reading it back (names are never reused).
			this.cacheSegment(segment);
		}
		await this.compact();
		if (this.tiered) await cellUpkeepAfterAdd(this, (await this.readManifest(true)).doc);
		return { created };
	}

	/**
	 * The segments a manifest lists for a filter, loaded, with the rows the filter lets through (live
	 * ones); read again on a newer manifest when one is missing, while merges replaced what was missing.
	 */
	async loadFor(filter: ChunkFilter): Promise<LoadedVectors> {
		for (let attempt = 0; ; attempt++) {
			const manifest = await this.readManifest(attempt > 0);
			if (manifest.version === null) return { manifest, segments: [], masks: [] };
			const refs = manifest.doc.segments.filter(
				(s) =>
					(filter.sessionId === undefined || s.sessions.includes(filter.sessionId)) &&
					(filter.userId === undefined || !s.users || s.users.includes(filter.userId)),
			);
			const loaded: Array<Segment | null> = [];
			for (let i = 0; i < refs.length; i += 8)
				loaded.push(...(await Promise.all(refs.slice(i, i + 8).map((r) => this.readSegment(r)))));
			const missing = refs.filter((_, i) => loaded[i] === null).map((r) => r.key);
			if (missing.length === 0) {
				const masks = liveMask(
					this.cacheId(this.manifestKey),
					manifest.version,
					refs,
					loaded,
					filter,
				);
				return { manifest, segments: loaded as Segment[], masks };
			}
			// A merge may have replaced them since the manifest was read (syncs merge the newest as
			// they come): look again while the newest manifest no longer lists them; one it still
			// lists is lost.
			if (attempt >= 1 && (attempt >= LOAD_ATTEMPTS || (await stillListed(this, missing))))
				throw new IndexDamagedError(this.kbId, missing);
		}
	}

	/**
	 * The `k` chunks most similar to `query` (cosine), best first; only one session's with `sessionId`.
	 * Exact: every live vector is compared (an int8 first pass, then an exact rerank of every row it
	 * could have misranked: see topRows). Segments are read once per process, then served from memory.
	 */
	async search(
		query: unknown,
		k: number,
		scope?: string | ChunkFilter,
		options: { withVectors?: boolean } = {},
	): Promise<VectorMatch[]> {
		const filter: ChunkFilter = typeof scope === 'string' ? { sessionId: scope } : (scope ?? {});
		return (await rankOver([this], query, k, filter, options)).matches;
	}

	/**
	 * As search, with a way to score more chunks of the same scope against the query afterwards
	 * (similarities), without reading anything again.
	 */
	ranking(
		query: unknown,
		k: number,
		filter: ChunkFilter,
		options: { withVectors?: boolean } = {},
	): Promise<VectorRanking> {
		return rankOver([this], query, k, filter, options);
	}

	/** The manifest, and the segments, codebook and tier buckets it lists that storage lost (one listing). */
	async lostSegments(): Promise<{ manifest: Versioned<IndexManifest>; missing: string[] }> {
		const manifest = await this.readManifest(true);
		const doc = manifest.version === null ? undefined : manifest.doc;
		const listed = listedBy(this.segmentsPrefix, cellTierParts, doc);
		return { manifest, missing: await missingFrom(this.storage, listed) };
	}

	/** What the index holds, and which listed segments storage lost (one listing of the index folder). */
	async stats(): Promise<IndexStats> {
		const manifest = await this.readManifest();
		if (manifest.version === null)
			return {
				dimensions: null,
				segments: 0,
				vectors: 0,
				bySession: {},
				missing: [],
				exists: false,
			};
		const refs = manifest.doc.segments;
		const keys = refs.map((r) => r.key);
		const missing = await missingFrom(this.storage, new ListedKeys(this.segmentsPrefix, keys));
		const lost = new Set(missing);
		const loaded: Array<Segment | null> = [];
		for (const r of refs) loaded.push(lost.has(r.key) ? null : await this.readSegment(r));
		const masks = liveMask(this.cacheId(this.manifestKey), manifest.version, refs, loaded, 'stats');
		const bySession: Record<string, number> = {};
		let vectors = 0;
		loaded.forEach((seg, s) => {
			if (!seg) return;
			seg.chunks.forEach((c, r) => {
				if (!masks[s][r]) return;
				vectors++;
				bySession[c.session_id] = (bySession[c.session_id] ?? 0) + 1;
			});
		});
		return {
			dimensions: manifest.doc.dimensions,
			segments: refs.length,
			vectors,
			bySession,
			missing,
			exists: true,
		};
	}

	/**
	 * Deletes the whole index: the manifest first (a writer holding it then fails its swap), then every
	 * segment, a page of keys at a time (a base-wide index holds tens of thousands). Returns how many
	 * keys went, the manifest's counted; `deleted` is told each.
	 */
	async clear(deleted?: (key: string) => void): Promise<number> {
		await this.manifests.delete(this.manifestKey);
		deleted?.(this.manifestKey);
		let n = 1;
		await forEachKey(this.storage, this.prefix, async (key) => {
			this.uncacheSegment(key);
			await this.storage.delete(key);
			if (key === this.manifestKey) return;
			deleted?.(key);
			n++;
		});
		return n;
	}

	/** See forgetSessionRows. */
	forgetSession(
		sessionId: string,
		maxAttempts = this.maxAttempts,
		touched?: Touched,
	): Promise<number> {
		return forgetSessionRows(this, sessionId, maxAttempts, touched);
	}

	/** See sweepOrphanSegments. */
	sweepOrphans(olderThanMs: number): Promise<string[]> {
		return sweepOrphanSegments(this, olderThanMs);
	}

	/** See compactIndex. */
	compact(): Promise<boolean> {
		return compactIndex(this);
	}
}
