// The embedded vector index: segments of Float32 vectors with their chunks, write-once on the package's
// storage, listed by a small manifest moved by compare-and-swap; loaded lazily and searched exactly
// (cosine similarity over L2-normalised vectors). Pure TypeScript: no native module, no server.
import { randomBytes } from 'node:crypto';
import { endianness } from 'node:os';

import {
	ConflictError,
	CorruptDocumentError,
	DimensionMismatchError,
	EmbeddingError,
	FlushConflictError,
	IndexDamagedError,
} from '../errors';
import {
	vectorIndexPrefix,
	vectorManifestKey,
	vectorSegmentKey,
	vectorSegmentsPrefix,
} from '../keys/layout';
import { DocumentStore } from '../store/document-store';
import type { Versioned } from '../store/document-store';
import type { MemoryStorage } from '../store/storage';
import { manifestCodec } from './records';
import type { IndexManifest, SegmentRef } from './records';
import { simdAvailable, SimdRows } from './simd';

/** One chunk of a captured message, as the index keeps it beside its vector. */
export interface IndexedChunk {
	/** Derived from the message ID (chunkId): the same chunk ingested twice has the same ID. */
	id: string;
	session_id: string;
	message_id: string;
	seq: number;
	run_id: string;
	chunk_index: number;
	created_at: string;
	text: string;
}

export interface VectorMatch extends IndexedChunk {
	/** Cosine similarity with the query, −1 … 1. */
	score: number;
}

/** A sync writes at most this many vectors per segment. */
export const SEGMENT_MAX_VECTORS = 1024;
/** Past this many segments, small neighbouring segments are merged. */
export const MAX_SEGMENTS = 16;
/** Segments below this many vectors are merged (into segments of up to about twice as many). */
const COMPACT_BELOW = 4096;
/** Search results at most (top K). */
export const MAX_TOP_K = 1000;

const MAGIC = Buffer.from('LLMVEC01', 'latin1');
const LITTLE_ENDIAN = endianness() === 'LE';

interface Segment {
	key: string;
	dimensions: number;
	chunks: IndexedChunk[];
	/** count × dimensions, row after row, each row of length 1 (or 0); empty when `simd` holds them. */
	vectors: Float32Array;
	/** The rows in WebAssembly memory, where WebAssembly SIMD is available. */
	simd?: SimdRows;
	bytes: number;
}

/** Row r of a segment (its dimensions floats). */
function rowOf(seg: Segment, r: number): Float32Array {
	return seg.simd
		? seg.simd.row(r)
		: seg.vectors.subarray(r * seg.dimensions, (r + 1) * seg.dimensions);
}

/** The picked rows of loaded segments, copied into one block (for a rewritten or merged segment). */
function copyRows(picks: Array<{ seg: Segment; row: number }>, dims: number): Float32Array {
	const out = new Float32Array(picks.length * dims);
	picks.forEach((p, i) => out.set(rowOf(p.seg, p.row), i * dims));
	return out;
}

/** A decoded segment made ready to search: its rows moved into WebAssembly memory where it can. */
function prepare(seg: Segment): Segment {
	if (seg.simd || !simdAvailable()) return seg;
	const simd = new SimdRows(seg.vectors, seg.chunks.length, seg.dimensions);
	return { ...seg, simd, vectors: new Float32Array(0) };
}

/** Encodes a segment: magic, header length, JSON header (chunks), padding to 4 bytes, Float32 LE rows. */
export function encodeSegment(
	dimensions: number,
	chunks: IndexedChunk[],
	vectors: Float32Array,
): Buffer {
	const header = Buffer.from(JSON.stringify({ dimensions, count: chunks.length, chunks }), 'utf8');
	const start = MAGIC.length + 4 + header.length;
	const pad = (4 - (start % 4)) % 4;
	const out = Buffer.alloc(start + pad + vectors.length * 4);
	MAGIC.copy(out, 0);
	out.writeUInt32LE(header.length, MAGIC.length);
	header.copy(out, MAGIC.length + 4);
	const body = start + pad;
	if (LITTLE_ENDIAN)
		Buffer.from(vectors.buffer, vectors.byteOffset, vectors.byteLength).copy(out, body);
	else for (let i = 0; i < vectors.length; i++) out.writeFloatLE(vectors[i], body + 4 * i);
	return out;
}

/** Decodes a segment; anything inconsistent is a CorruptDocumentError naming its key. */
export function decodeSegment(key: string, bytes: Uint8Array): Segment {
	const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	const fail = (detail: string): never => {
		throw new CorruptDocumentError(key, detail);
	};
	if (buf.length < MAGIC.length + 4 || !buf.subarray(0, MAGIC.length).equals(MAGIC))
		fail('not a vector segment');
	const headerLength = buf.readUInt32LE(MAGIC.length);
	const start = MAGIC.length + 4 + headerLength;
	if (start > buf.length) fail('its header is cut short');
	let header: { dimensions?: unknown; count?: unknown; chunks?: unknown };
	try {
		header = JSON.parse(buf.subarray(MAGIC.length + 4, start).toString('utf8'));
	} catch {
		return fail('its header is not JSON');
	}
	const { dimensions, count, chunks } = header;
	if (!Number.isSafeInteger(dimensions) || (dimensions as number) < 1) fail('bad dimensions');
	if (!Array.isArray(chunks) || chunks.length !== count || chunks.length === 0)
		fail('bad chunk list');
	const dims = dimensions as number;
	const list = chunks as IndexedChunk[];
	for (const c of list)
		if (typeof c?.id !== 'string' || typeof c.session_id !== 'string' || typeof c.text !== 'string')
			fail('a chunk without id, session_id or text');
	const body = start + ((4 - (start % 4)) % 4);
	const n = list.length * dims;
	if (buf.length - body !== n * 4) fail(`${buf.length - body} bytes of vectors, expected ${n * 4}`);
	let vectors: Float32Array;
	if (LITTLE_ENDIAN && (buf.byteOffset + body) % 4 === 0)
		vectors = new Float32Array(buf.buffer, buf.byteOffset + body, n);
	else {
		vectors = new Float32Array(n);
		for (let i = 0; i < n; i++) vectors[i] = buf.readFloatLE(body + 4 * i);
	}
	return { key, dimensions: dims, chunks: list, vectors, bytes: buf.length };
}

/** Decoded segments of this process by storage and key, least recently used dropped past the limit. */
class SegmentCache {
	private readonly map = new Map<string, Segment>();
	private bytes = 0;
	maxBytes = 512 * 2 ** 20;

	get(id: string): Segment | undefined {
		const s = this.map.get(id);
		if (s) {
			this.map.delete(id);
			this.map.set(id, s);
		}
		return s;
	}

	set(id: string, s: Segment): void {
		this.delete(id);
		if (s.bytes > this.maxBytes) return;
		this.map.set(id, s);
		this.bytes += s.bytes;
		for (const [oldest, old] of this.map) {
			if (this.bytes <= this.maxBytes) break;
			this.map.delete(oldest);
			this.bytes -= old.bytes;
		}
	}

	delete(id: string): void {
		const s = this.map.get(id);
		if (!s) return;
		this.map.delete(id);
		this.bytes -= s.bytes;
	}

	clear(): void {
		this.map.clear();
		this.bytes = 0;
	}
}

const segments = new SegmentCache();

/**
 * How many bytes of decoded segments this process keeps (default 512 MiB; 1,536-dimensional vectors
 * take about 6 KB each). Raising it only: several indexes share the cache.
 */
export function ensureVectorCache(bytes: number): void {
	if (Number.isFinite(bytes) && bytes > segments.maxBytes) segments.maxBytes = bytes;
}

/** Forgets every decoded segment (benchmarks of cold searches, tests). */
export function clearVectorCache(): void {
	segments.clear();
	liveMasks.clear();
}

/** Which rows of which segments are live (not superseded by a later chunk with the same ID), per manifest version. */
const liveMasks = new Map<string, Uint8Array[]>();

/** Copies rows into one normalised Float32Array, checking count, dimensions and numbers. */
export function normaliseRows(rows: unknown, count: number, dimensions?: number): Float32Array {
	if (!Array.isArray(rows) || rows.length !== count)
		throw new EmbeddingError(
			`expected ${count} vectors, got ${Array.isArray(rows) ? rows.length : typeof rows}`,
		);
	const dims = dimensions ?? (rows[0] as ArrayLike<number> | undefined)?.length ?? 0;
	if (!Number.isSafeInteger(dims) || dims < 1) throw new EmbeddingError('a vector without numbers');
	const out = new Float32Array(count * dims);
	rows.forEach((row: unknown, r) => {
		const v = row as ArrayLike<number>;
		if (!v || typeof v !== 'object' || v.length !== dims)
			throw new EmbeddingError(`vector ${r} has ${v?.length ?? 'no'} dimensions, not ${dims}`);
		let norm = 0;
		for (let j = 0; j < dims; j++) {
			const x = v[j];
			if (typeof x !== 'number' || !Number.isFinite(x))
				throw new EmbeddingError(`vector ${r} holds ${String(x)} at ${j}`);
			norm += x * x;
		}
		const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
		for (let j = 0; j < dims; j++) out[r * dims + j] = v[j] * scale;
	});
	return out;
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

/** The embedded vector index of one knowledge base. */
export class EmbeddedIndex {
	private readonly manifests: DocumentStore<IndexManifest>;
	readonly manifestKey: string;

	constructor(
		readonly storage: MemoryStorage,
		readonly kbId: string,
		readonly keyPrefix?: string,
		maxAttempts = 12,
	) {
		this.manifestKey = vectorManifestKey(kbId, keyPrefix);
		this.manifests = new DocumentStore(storage, manifestCodec, { maxAttempts });
	}

	private cacheId(key: string): string {
		return `${this.storage.describe()}\n${key}`;
	}

	/** The manifest (version null: no index yet). */
	readManifest(): Promise<Versioned<IndexManifest>> {
		return this.manifests.read(this.manifestKey);
	}

	private async readSegment(key: string): Promise<Segment | null> {
		const id = this.cacheId(key);
		const cached = segments.get(id);
		if (cached) return cached;
		const got = await this.storage.get(key);
		if (!got) return null;
		const segment = prepare(decodeSegment(key, got.body));
		segments.set(id, segment);
		return segment;
	}

	/** Writes chunks and their rows as a new write-once segment; returns its manifest entry and the decoded segment. */
	private async writeSegment(
		dims: number,
		chunks: IndexedChunk[],
		vectors: Float32Array,
	): Promise<{ ref: SegmentRef; segment: Segment }> {
		const body = encodeSegment(dims, chunks, vectors);
		const key = vectorSegmentKey(this.kbId, randomBytes(12).toString('hex'), this.keyPrefix);
		await this.storage.put(key, body, { ifVersion: null, contentType: 'application/octet-stream' });
		return {
			ref: {
				key,
				count: chunks.length,
				sessions: [...new Set(chunks.map((c) => c.session_id))].sort(),
				bytes: body.length,
				created_at: new Date().toISOString(),
			},
			segment: { key, dimensions: dims, chunks, vectors, bytes: body.length },
		};
	}

	/**
	 * Adds chunks with their vectors (rows as the embedding model returned them): write-once segments of
	 * at most SEGMENT_MAX_VECTORS, each appended to the manifest by compare-and-swap. A chunk ID that is
	 * already indexed is superseded (searches and counts see it once). Returns when every chunk is listed
	 * in the manifest: the index has confirmed them.
	 */
	async add(chunks: IndexedChunk[], rows: unknown): Promise<void> {
		if (chunks.length === 0) return;
		const current = await this.readManifest();
		const stored = current.version === null ? undefined : current.doc.dimensions;
		const vectors = normaliseRows(rows, chunks.length);
		const dims = vectors.length / chunks.length;
		if (stored !== undefined && stored !== dims)
			throw new DimensionMismatchError(this.kbId, stored, dims);
		for (let from = 0; from < chunks.length; from += SEGMENT_MAX_VECTORS) {
			const part = chunks.slice(from, from + SEGMENT_MAX_VECTORS);
			const { ref } = await this.writeSegment(
				dims,
				part,
				vectors.subarray(from * dims, (from + part.length) * dims),
			);
			await this.manifests.update(this.manifestKey, (cur) => {
				const m = cur.version === null ? undefined : cur.doc;
				if (m && m.dimensions !== dims)
					throw new DimensionMismatchError(this.kbId, m.dimensions, dims);
				return {
					dimensions: dims,
					segments: [...(m?.segments ?? []), ref],
					updated_at: ref.created_at,
				};
			});
		}
		await this.compact();
	}

	/** Live rows per segment for a manifest version (later segments supersede earlier chunk IDs). */
	private liveMask(
		version: string,
		refs: SegmentRef[],
		loaded: Array<Segment | null>,
		filter: string,
	): Uint8Array[] {
		const id = `${this.cacheId(this.manifestKey)}\n${version}\n${filter}`;
		const cached = liveMasks.get(id);
		if (cached) return cached;
		const seen = new Set<string>();
		const masks: Uint8Array[] = new Array(refs.length);
		for (let s = refs.length - 1; s >= 0; s--) {
			const seg = loaded[s];
			const mask = new Uint8Array(seg ? seg.chunks.length : 0);
			if (seg)
				for (let r = seg.chunks.length - 1; r >= 0; r--) {
					const chunkId = seg.chunks[r].id;
					if (seen.has(chunkId)) continue;
					seen.add(chunkId);
					mask[r] = 1;
				}
			masks[s] = mask;
		}
		liveMasks.set(id, masks);
		if (liveMasks.size > 64) liveMasks.delete(liveMasks.keys().next().value as string);
		return masks;
	}

	/** The segments a manifest lists for a filter, loaded; retried once on a newer manifest when one is missing. */
	private async load(sessionId: string | undefined): Promise<{
		manifest: Versioned<IndexManifest>;
		refs: SegmentRef[];
		loaded: Array<Segment | null>;
	}> {
		for (let attempt = 0; ; attempt++) {
			const manifest = await this.readManifest();
			if (manifest.version === null) return { manifest, refs: [], loaded: [] };
			const refs = manifest.doc.segments.filter(
				(s) => sessionId === undefined || s.sessions.includes(sessionId),
			);
			const loaded: Array<Segment | null> = [];
			for (let i = 0; i < refs.length; i += 8)
				loaded.push(
					...(await Promise.all(refs.slice(i, i + 8).map((r) => this.readSegment(r.key)))),
				);
			const missing = refs.filter((_, i) => loaded[i] === null).map((r) => r.key);
			if (missing.length === 0) return { manifest, refs, loaded };
			// A compaction may have replaced them since the manifest was read: look once more.
			if (attempt >= 1) throw new IndexDamagedError(this.kbId, missing);
		}
	}

	/**
	 * The `k` chunks most similar to `query` (cosine), best first; only one session's with `sessionId`.
	 * Exact: every live vector is compared. Segments are read once per process, then served from memory.
	 */
	async search(query: unknown, k: number, sessionId?: string): Promise<VectorMatch[]> {
		const { manifest, refs, loaded } = await this.load(sessionId);
		if (manifest.version === null || refs.length === 0) return [];
		const dims = manifest.doc.dimensions;
		const q = normaliseRows([query], 1);
		if (q.length !== dims) throw new DimensionMismatchError(this.kbId, dims, q.length);
		const masks = this.liveMask(manifest.version, refs, loaded, sessionId ?? '');
		const top = new TopK(Math.max(1, Math.min(k, MAX_TOP_K)));
		for (let s = 0; s < loaded.length; s++) {
			const seg = loaded[s] as Segment;
			const mask = masks[s];
			const n = seg.chunks.length;
			const scores = seg.simd?.dots(q);
			for (let r = 0; r < n; r++) {
				if (mask[r] === 0) continue;
				if (sessionId !== undefined && seg.chunks[r].session_id !== sessionId) continue;
				const score = scores ? scores[r] : dot(seg.vectors, r * dims, q, dims);
				if (score > top.min) top.push(score, s, r);
			}
		}
		return top.sorted().map(({ score, a, b }) => ({
			...(loaded[a] as Segment).chunks[b],
			score: Math.max(-1, Math.min(1, score)),
		}));
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
		const present = new Set(
			(await this.storage.list(vectorSegmentsPrefix(this.kbId, this.keyPrefix))).map((o) => o.key),
		);
		const missing = refs.filter((r) => !present.has(r.key)).map((r) => r.key);
		const loaded: Array<Segment | null> = [];
		for (const r of refs) loaded.push(present.has(r.key) ? await this.readSegment(r.key) : null);
		const masks = this.liveMask(manifest.version, refs, loaded, '\nstats');
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

	/** Deletes the whole index: the manifest first (a writer holding it then fails its swap), then every segment. */
	async clear(): Promise<string[]> {
		await this.manifests.delete(this.manifestKey);
		const listed = await this.storage.list(vectorIndexPrefix(this.kbId, this.keyPrefix));
		for (const o of listed) {
			segments.delete(this.cacheId(o.key));
			await this.storage.delete(o.key);
		}
		return [this.manifestKey, ...listed.map((o) => o.key).filter((k) => k !== this.manifestKey)];
	}

	/**
	 * Removes one session's chunks for good (text and vectors): each segment listing the session is
	 * rewritten without its rows, or dropped when nothing else is in it, swapped into the manifest by
	 * compare-and-swap, then deleted. Segments are write-once, so a concurrent compaction of one of them
	 * makes the swap fail and the whole pass start over on the new manifest. Returns the rows removed.
	 */
	async forgetSession(sessionId: string, maxAttempts = 12): Promise<number> {
		for (let attempt = 1; ; attempt++) {
			const manifest = await this.readManifest();
			if (manifest.version === null) return 0;
			const refs = manifest.doc.segments.filter((s) => s.sessions.includes(sessionId));
			if (refs.length === 0) return 0;
			const dims = manifest.doc.dimensions;
			const replaced = new Map<string, { ref: SegmentRef; segment: Segment } | null>();
			let removed = 0;
			for (const ref of refs) {
				const seg = await this.readSegment(ref.key);
				if (!seg) throw new IndexDamagedError(this.kbId, [ref.key]);
				const rows = seg.chunks.flatMap((c, r) => (c.session_id === sessionId ? [] : [r]));
				removed += seg.chunks.length - rows.length;
				if (rows.length === 0) {
					replaced.set(ref.key, null);
					continue;
				}
				const chunks = rows.map((r) => seg.chunks[r]);
				const vectors = copyRows(
					rows.map((row) => ({ seg, row })),
					dims,
				);
				replaced.set(ref.key, await this.writeSegment(dims, chunks, vectors));
			}
			const result = await this.manifests.update(this.manifestKey, (cur) => {
				if (cur.version === null) return undefined;
				const keys = new Set(cur.doc.segments.map((s) => s.key));
				if (![...replaced.keys()].every((k) => keys.has(k))) return undefined;
				return {
					...cur.doc,
					segments: cur.doc.segments.flatMap((s) => {
						if (!replaced.has(s.key)) return [s];
						const next = replaced.get(s.key);
						return next ? [next.ref] : [];
					}),
					updated_at: new Date().toISOString(),
				};
			});
			const fresh = [...replaced.values()].flatMap((r) => (r ? [r] : []));
			if (!result.written) {
				for (const r of fresh) await this.storage.delete(r.ref.key).catch(() => {});
				if (result.current.version === null) return 0;
				if (attempt >= maxAttempts) throw new FlushConflictError(this.manifestKey, attempt);
				continue;
			}
			for (const r of fresh) segments.set(this.cacheId(r.ref.key), prepare(r.segment));
			for (const key of replaced.keys()) {
				segments.delete(this.cacheId(key));
				await this.storage.delete(key);
			}
			return removed;
		}
	}

	/**
	 * Deletes segments the manifest does not list and nobody wrote for `olderThanMs`: what a writer
	 * killed between writing a segment and listing it (or between a swap and its deletes) left behind.
	 */
	async sweepOrphans(olderThanMs: number): Promise<string[]> {
		const manifest = await this.readManifest();
		const listed = new Set(
			manifest.version === null ? [] : manifest.doc.segments.map((s) => s.key),
		);
		const cutoff = new Date(Date.now() - olderThanMs);
		const swept: string[] = [];
		const prefix = vectorSegmentsPrefix(this.kbId, this.keyPrefix);
		for (const o of await this.storage.list(prefix)) {
			if (listed.has(o.key) || o.lastModified > cutoff) continue;
			try {
				await this.storage.delete(o.key, { ifUnmodifiedSince: cutoff });
			} catch (error) {
				if (error instanceof ConflictError) continue; // written again meanwhile: not an orphan
				throw error;
			}
			segments.delete(this.cacheId(o.key));
			swept.push(o.key);
		}
		return swept;
	}

	/**
	 * Past MAX_SEGMENTS, merges a run of neighbouring small segments into one (superseded chunks dropped),
	 * swaps it into the manifest in their place, then deletes them. A concurrent change of that run
	 * abandons the merge. Failing to compact never fails the write that triggered it.
	 */
	async compact(): Promise<boolean> {
		try {
			const manifest = await this.readManifest();
			if (manifest.version === null || manifest.doc.segments.length <= MAX_SEGMENTS) return false;
			const refs = manifest.doc.segments;
			const start = refs.findIndex((r) => r.count < COMPACT_BELOW);
			if (start < 0) return false;
			let end = start;
			let total = 0;
			while (end < refs.length && refs[end].count < COMPACT_BELOW && total < 2 * COMPACT_BELOW)
				total += refs[end++].count;
			if (end - start < 2) return false;
			const run = refs.slice(start, end);
			const loaded = await Promise.all(run.map((r) => this.readSegment(r.key)));
			if (loaded.some((s) => s === null)) return false;
			const dims = manifest.doc.dimensions;
			const byId = new Map<string, { chunk: IndexedChunk; seg: Segment; row: number }>();
			for (const seg of loaded as Segment[])
				seg.chunks.forEach((chunk, row) => {
					byId.delete(chunk.id); // a later copy wins, and takes the later place
					byId.set(chunk.id, { chunk, seg, row });
				});
			const kept = [...byId.values()];
			const written = await this.writeSegment(
				dims,
				kept.map((k) => k.chunk),
				copyRows(kept, dims),
			);
			const merged = written.ref;
			const result = await this.manifests.update(this.manifestKey, (cur) => {
				if (cur.version === null) return undefined;
				const at = cur.doc.segments.findIndex((s) => s.key === run[0].key);
				const same = at >= 0 && run.every((r, i) => cur.doc.segments[at + i]?.key === r.key);
				if (!same) return undefined;
				const next = [...cur.doc.segments];
				next.splice(at, run.length, merged);
				return { ...cur.doc, segments: next, updated_at: merged.created_at };
			});
			if (!result.written) {
				await this.storage.delete(merged.key);
				return false;
			}
			segments.set(this.cacheId(merged.key), prepare(written.segment));
			for (const r of run) {
				segments.delete(this.cacheId(r.key));
				await this.storage.delete(r.key).catch(() => {});
			}
			return true;
		} catch {
			// Compaction is an optimisation: the segments it would have merged stay as they are.
			return false;
		}
	}
}

/** Dot product of row `offset` of `v` with `q` (4 accumulators: about twice as fast as one); without SIMD. */
function dot(v: Float32Array, offset: number, q: Float32Array, dims: number): number {
	const row = v.subarray(offset, offset + dims);
	let s0 = 0;
	let s1 = 0;
	let s2 = 0;
	let s3 = 0;
	let j = 0;
	for (; j + 3 < dims; j += 4) {
		s0 += row[j] * q[j];
		s1 += row[j + 1] * q[j + 1];
		s2 += row[j + 2] * q[j + 2];
		s3 += row[j + 3] * q[j + 3];
	}
	for (; j < dims; j++) s0 += row[j] * q[j];
	return s0 + s1 + s2 + s3;
}

/** The k best (score, a, b) seen, kept sorted best first; ties keep the earlier one. */
class TopK {
	private readonly scores: number[] = [];
	private readonly refs: Array<[number, number]> = [];

	constructor(private readonly k: number) {}

	get min(): number {
		return this.scores.length < this.k ? -Infinity : this.scores[this.scores.length - 1];
	}

	push(score: number, a: number, b: number): void {
		let i = this.scores.length;
		while (i > 0 && this.scores[i - 1] < score) i--;
		this.scores.splice(i, 0, score);
		this.refs.splice(i, 0, [a, b]);
		if (this.scores.length > this.k) {
			this.scores.pop();
			this.refs.pop();
		}
	}

	sorted(): Array<{ score: number; a: number; b: number }> {
		return this.scores.map((score, i) => ({ score, a: this.refs[i][0], b: this.refs[i][1] }));
	}
}
