// The lexical index of a memory base: a manifest (compare-and-swap) holding chunks inline (the tail),
// the list of write-once segments, and the open sources whose newest chunks a search reads from the
// sources themselves through the reader its owner injects (open-sources.ts), so adding to a
// conversation needs no write here. A full tail is sealed into a segment, and FAN segments of one
// level merge into one of the next: the manifest stays bounded, the segments few, on disk and S3.
import { randomBytes } from 'node:crypto';

import { BoundedCache } from '../../common/bounded-cache';
import { IndexDamagedError } from '../../errors';
import { validateKeyPrefix } from '../../keys/ids';
import { bloomMayHave, bloomPositions } from '../../store/bloom';
import { DocumentStore } from '../../store/document-store';
import type { Versioned } from '../../store/document-store';
import { storageIdentity } from '../../store/storage';
import type { MemoryStorage } from '../../store/storage';
import type { IndexedChunk } from '../chunks/chunk';
import { bm25, scopeOf } from './bm25';
import type { LexicalMatch, SearchScope } from './bm25';
import type { LexicalStats, LexicalView } from './types';
import type { ChunkFilter } from '../chunks/filter';
import { namesOf } from './names';
import { emptyManifest, lexicalManifestCodec } from './manifest';
import type { LexicalManifest } from './manifest';
import { OPEN_STALE_MS, relist, sourcesInScope } from './open-sources';
import type { Listing, SourceReader } from './open-sources';
import { build, decode, encode, refOf, scopeKeys } from './segment';
import type { LexicalRef, LexicalSegment } from './segment';
import type { Touched } from '../chunks/touched';

/** Chunks the manifest holds inline before they are sealed into a segment. */
export const TAIL_MAX = 64;
/** …or this many bytes of their text, whichever comes first. */
export const TAIL_BYTES = 48 * 1024;
/** Segments of one level merged into one of the next. */
export const FAN = 8;
/** A single segment holds at most this many chunks (a larger add is split). */
const SEGMENT_MAX = 4096;

/** Bytes of decoded lexical segments this process keeps, for every base together (LLM_MEMORY_LEXICAL_CACHE_MB). */
export const LEXICAL_CACHE_BYTES =
	(Number(process.env.LLM_MEMORY_LEXICAL_CACHE_MB) || 256) * 2 ** 20;
/** Decoded segments by storage and key: random names, never reused (as vector segments). */
const segments = new BoundedCache<LexicalSegment>({
	name: 'lexical segments',
	maxWeight: LEXICAL_CACHE_BYTES,
});
/** The tail as a segment, per manifest version; an open source's newest chunks, per source version. */
const tails = new BoundedCache<LexicalSegment>({ name: 'lexical tails', maxEntries: 256 });
/** Which documents are live, per manifest version and set of loaded segments. */
const masks = new BoundedCache<Uint8Array[]>({ name: 'lexical live masks', maxEntries: 128 });
/** Which documents a filter lets through, per live mask and filter (a user's searches reuse it). */
const scopes = new BoundedCache<SearchScope>({ name: 'lexical search scopes', maxEntries: 256 });

export function clearLexicalCache(): void {
	segments.clear();
	tails.clear();
	masks.clear();
	scopes.clear();
}

const levelOf = (count: number) =>
	Math.max(0, Math.floor(Math.log(count / TAIL_MAX) / Math.log(FAN) + 1e-9));

export class LexicalIndex {
	readonly manifestKey: string;
	readonly segmentsPrefix: string;
	private readonly manifests: DocumentStore<LexicalManifest>;

	/** `name` is for errors; `prefix` the folder of its manifest and segments (its owner's choice). */
	constructor(
		readonly storage: MemoryStorage,
		readonly name: string,
		prefix: string,
		maxAttempts = 12,
		/** Reads the open sources (none without it: an index read on its own). */
		private readonly readSources: SourceReader = async () => [],
	) {
		const folder = validateKeyPrefix('lexical index folder', prefix);
		this.manifestKey = `${folder}manifest.json`;
		this.segmentsPrefix = `${folder}segments/`;
		this.manifests = new DocumentStore(storage, lexicalManifestCodec, { maxAttempts });
	}

	private cacheId(key: string): string {
		return `${storageIdentity(this.storage)}\n${key}`;
	}

	readManifest(): Promise<Versioned<LexicalManifest>> {
		return this.manifests.read(this.manifestKey);
	}

	/** Creates the (empty) index when it does not exist: from then on, a missing manifest is a lost one. */
	async ensure(): Promise<void> {
		await this.manifests.update(this.manifestKey, (cur) =>
			cur.version === null ? emptyManifest() : undefined,
		);
	}

	/** Writes chunks as a new write-once segment of `level`; returns its manifest entry. */
	async writeSegment(level: number, docs: IndexedChunk[]): Promise<LexicalRef> {
		const key = `${this.segmentsPrefix}${randomBytes(12).toString('hex')}.lex`;
		const segment = build(key, docs);
		const body = encode(segment);
		await this.storage.put(key, body, { ifVersion: null, contentType: 'application/gzip' });
		segments.set(this.cacheId(key), segment, { weight: segment.bytes });
		return refOf(key, level, docs, body);
	}

	/** A segment, decoded once per process; null when storage does not hold it. */
	async readSegment(key: string): Promise<LexicalSegment | null> {
		const cached = segments.get(this.cacheId(key));
		if (cached) return cached;
		const got = await this.storage.get(key);
		if (!got) return null;
		const segment = decode(key, got.body);
		return segments.set(this.cacheId(key), segment, { weight: segment.bytes });
	}

	async deleteSegment(key: string): Promise<void> {
		segments.delete(this.cacheId(key));
		await this.storage.delete(key);
	}

	/**
	 * Adds chunks (a chunk ID already indexed is superseded by the new copy) and lists or unlists open
	 * sources. Small adds go into the tail; a full tail becomes a level-0 segment, and FAN segments of one
	 * level are merged into one of the next, all in the one compare-and-swap of the manifest that lists
	 * them. Returns the manifest as stored after it.
	 */
	async add(docs: IndexedChunk[], listing: Listing = {}): Promise<Versioned<LexicalManifest>> {
		const written: string[] = [];
		const merged: string[] = [];
		const ids = new Set(docs.map((d) => d.id));
		const result = await this.manifests.update(
			this.manifestKey,
			async (cur) => {
				const found = cur.version === null ? emptyManifest() : cur.doc;
				const open = relist(found.open ?? [], listing, new Date());
				if (docs.length === 0 && open === undefined) return undefined;
				const m = open ? { ...found, open } : found;
				const tail = [...m.tail.filter((d) => !ids.has(d.id)), ...docs];
				if (!tooBig(tail)) return { ...m, tail, updated_at: new Date().toISOString() };
				let refs = [...m.segments];
				for (let i = 0; i < tail.length; i += SEGMENT_MAX) {
					const part = tail.slice(i, i + SEGMENT_MAX);
					const ref = await this.writeSegment(levelOf(part.length), part);
					written.push(ref.key);
					refs.push(ref);
				}
				refs = await this.mergeDue(refs, written, merged);
				return { ...m, tail: [], segments: refs, updated_at: new Date().toISOString() };
			},
			this.manifests.lastKnown(this.manifestKey),
		);
		const listed = new Set(result.current.doc.segments.map((r) => r.key));
		// Segments of attempts that lost their swap, and segments a merge replaced, are listed nowhere.
		for (const key of [...written, ...merged])
			if (!listed.has(key)) await this.deleteSegment(key).catch(() => {});
		return result.current;
	}

	/**
	 * While the newest FAN segments are of one level, or of two next to each other (adds of mixed
	 * sizes, as many conversations' chunks at once beside a few, must not stop merging), merges them into
	 * one of the level above.
	 */
	private async mergeDue(refs: LexicalRef[], written: string[], merged: string[]) {
		while (refs.length >= FAN) {
			const group = refs.slice(-FAN);
			const top = Math.max(...group.map((r) => r.level));
			if (group.some((r) => r.level < top - 1)) break;
			const loaded = await Promise.all(group.map((r) => this.readSegment(r.key)));
			if (loaded.some((s) => s === null))
				throw new IndexDamagedError(
					this.name,
					group.map((r) => r.key),
				);
			const byId = new Map<string, IndexedChunk>();
			for (const seg of loaded as LexicalSegment[])
				for (const d of seg.docs) {
					byId.delete(d.id); // a later copy wins and takes the later place
					byId.set(d.id, d);
				}
			const ref = await this.writeSegment(top + 1, [...byId.values()]);
			written.push(ref.key);
			merged.push(...group.map((r) => r.key));
			refs = [...refs.slice(0, -FAN), ref];
		}
		return refs;
	}

	/** The tail of one manifest version as a segment. */
	private tailOf(manifest: Versioned<LexicalManifest>): LexicalSegment {
		const id = `${this.cacheId(this.manifestKey)}\n${manifest.version}`;
		return tails.getOrSet(id, () => build(`${this.manifestKey}#tail`, manifest.doc.tail));
	}

	/**
	 * The newest chunks of the open sources a filter reads (its conversation's, or those `manifest`
	 * lists), as segments built once per source version.
	 */
	private async openSources(manifest: LexicalManifest | undefined, filter: ChunkFilter) {
		const read = await this.readSources(sourcesInScope(manifest?.open, filter));
		return read.map((t) => tails.getOrSet(this.cacheId(t.key), () => build(t.key, t.docs())));
	}

	/**
	 * The open sources in a filter's scope, then the segments it may need from the manifest read after
	 * them (retried once on a newer manifest when a segment is missing). Sources first: a chunk its
	 * owner takes out of a source is in every manifest read after it (that manifest write came first).
	 */
	private async load(filter: ChunkFilter) {
		const listing = filter.sessionId === undefined ? await this.readManifest() : undefined;
		const sources = await this.openSources(listing?.doc, filter);
		const want = [
			...(filter.sessionId !== undefined ? [bloomPositions(`s:${filter.sessionId}`)] : []),
			...(filter.userId !== undefined ? [bloomPositions(`u:${filter.userId}`)] : []),
		];
		for (let attempt = 0; ; attempt++) {
			const manifest = await this.readManifest();
			if (manifest.version === null) return { manifest, loaded: [] as LexicalSegment[] };
			const refs = manifest.doc.segments.filter(
				(r) =>
					want.every((p) => bloomMayHave(r.bloom, p)) &&
					(filter.since === undefined || r.to >= filter.since) &&
					(filter.until === undefined || r.from <= filter.until),
			);
			const loaded = await Promise.all(refs.map((r) => this.readSegment(r.key)));
			const missing = refs.filter((_, i) => loaded[i] === null).map((r) => r.key);
			if (missing.length === 0)
				return {
					manifest,
					loaded: [...(loaded as LexicalSegment[]), this.tailOf(manifest), ...sources],
				};
			// A merge may have replaced them since the manifest was read: look once more.
			if (attempt >= 1) throw new IndexDamagedError(this.name, missing);
		}
	}

	/** What a filtered search may return, from the live masks (cached as they are). */
	private scopeOf(
		manifest: Versioned<LexicalManifest>,
		loaded: LexicalSegment[],
		filter: ChunkFilter,
	): SearchScope {
		const f = [filter.sessionId, filter.userId, filter.since, filter.until];
		const id = [this.loadedId(manifest, loaded), JSON.stringify(f)].join('\n');
		return scopes.getOrSet(id, () => scopeOf(loaded, this.liveOf(manifest, loaded), filter));
	}

	/** Names a manifest version and the segments loaded from it (what cached masks depend on). */
	private loadedId(manifest: Versioned<LexicalManifest>, loaded: LexicalSegment[]): string {
		const id = [this.cacheId(this.manifestKey), manifest.version, ...loaded.map((x) => x.key)];
		return id.join('\n');
	}

	/** Live documents per loaded segment: a later copy of a chunk ID supersedes earlier ones. */
	private liveOf(manifest: Versioned<LexicalManifest>, loaded: LexicalSegment[]): Uint8Array[] {
		return masks.getOrSet(this.loadedId(manifest, loaded), () => {
			const seen = new Set<string>();
			const out: Uint8Array[] = new Array(loaded.length);
			for (let s = loaded.length - 1; s >= 0; s--) {
				const docs = loaded[s].docs;
				const mask = new Uint8Array(docs.length);
				for (let d = docs.length - 1; d >= 0; d--)
					if (!seen.has(docs[d].id)) {
						seen.add(docs[d].id);
						mask[d] = 1;
					}
				out[s] = mask;
			}
			return out;
		});
	}

	/** What the index holds (every segment is read), and which listed segments storage lost. */
	async stats(): Promise<LexicalStats> {
		const sources = await this.openSources((await this.readManifest()).doc, {}); // sources first, as load()
		const manifest = await this.readManifest();
		const none = { exists: false, chunks: 0, bySession: {}, segments: 0, missing: [] };
		if (manifest.version === null) return none;
		const refs = manifest.doc.segments;
		const present = new Set((await this.storage.list(this.segmentsPrefix)).map((o) => o.key));
		const missing = refs.filter((r) => !present.has(r.key)).map((r) => r.key);
		const loaded: LexicalSegment[] = [];
		for (const r of refs) {
			const seg = present.has(r.key) ? await this.readSegment(r.key) : null;
			if (seg) loaded.push(seg);
		}
		loaded.push(this.tailOf(manifest), ...sources);
		const live = this.liveOf(manifest, loaded);
		const bySession: Record<string, number> = {};
		let chunks = 0;
		loaded.forEach((seg, s) =>
			seg.docs.forEach((d, i) => {
				if (!live[s][i]) return;
				chunks++;
				bySession[d.session_id] = (bySession[d.session_id] ?? 0) + 1;
			}),
		);
		return { exists: true, chunks, bySession, segments: refs.length, missing };
	}

	/**
	 * Removes one conversation's chunks for good (or only those `only` picks: say, the messages of an
	 * expired conversation, or chunks put back of a source gone since): the tail without them, and
	 * each segment that may hold them rewritten without them (or dropped), in one compare-and-swap of
	 * the manifest that also unlists the conversation (unless `only`); the old segments are deleted
	 * after it. Returns the chunks removed.
	 */
	async forgetSession(
		sessionId: string,
		only?: (d: IndexedChunk) => boolean,
		touched?: Touched,
	): Promise<number> {
		const keep = (d: IndexedChunk) =>
			d.session_id !== sessionId || (only !== undefined && !only(d));
		const key = `s:${sessionId}`;
		const position = bloomPositions(key);
		let removed = 0;
		const written: string[] = [];
		let replaced: string[] = [];
		const result = await this.manifests.update(this.manifestKey, async (cur) => {
			if (cur.version === null) return undefined;
			removed = 0;
			replaced = [];
			const tail = cur.doc.tail.filter(keep);
			removed += cur.doc.tail.length - tail.length;
			const open = only ? cur.doc.open : cur.doc.open?.filter((o) => o.session_id !== sessionId);
			const refs: LexicalRef[] = [];
			for (const ref of cur.doc.segments) {
				if (!bloomMayHave(ref.bloom, position)) {
					refs.push(ref);
					continue;
				}
				const seg = await this.readSegment(ref.key);
				if (!seg) throw new IndexDamagedError(this.name, [ref.key]);
				const kept = seg.docs.filter(keep);
				if (kept.length === seg.docs.length) {
					refs.push(ref);
					continue;
				}
				removed += seg.docs.length - kept.length;
				replaced.push(ref.key);
				if (kept.length === 0) continue;
				const fresh = await this.writeSegment(ref.level, kept);
				written.push(fresh.key);
				refs.push(fresh);
			}
			if (removed === 0 && open?.length === cur.doc.open?.length) return undefined;
			return {
				...cur.doc,
				tail,
				segments: refs,
				...(open ? { open } : {}),
				updated_at: new Date().toISOString(),
			};
		});
		const listed = new Set(result.current.doc.segments.map((r) => r.key));
		for (const k of [...written, ...(result.written ? replaced : [])])
			if (!listed.has(k)) await this.deleteSegment(k).catch(() => {});
		if (!result.written) return 0;
		touched?.deleted.push(...replaced);
		touched?.rewritten.push(this.manifestKey, ...written.filter((k) => listed.has(k)));
		return removed;
	}

	/**
	 * Empties the index for a rebuild in one compare-and-swap to a new manifest that keeps the open
	 * sources (one listed meanwhile is never lost), then deletes the segments the old one listed, and
	 * unlisted ones older than OPEN_STALE_MS (left by crashed writers; a running write is younger).
	 */
	async reset(): Promise<void> {
		let listed: LexicalRef[] = [];
		await this.manifests.update(this.manifestKey, (cur) => {
			listed = cur.doc.segments; // a missing manifest reads as an empty one
			return { ...emptyManifest(), ...(cur.doc.open ? { open: cur.doc.open } : {}) };
		});
		const old = Date.now() - OPEN_STALE_MS;
		const all = await this.storage.list(this.segmentsPrefix);
		const stale = all.filter((o) => o.lastModified.getTime() < old).map((o) => o.key);
		for (const key of new Set([...listed.map((r) => r.key), ...stale]))
			await this.deleteSegment(key);
	}

	/** Deletes the whole index: the manifest first (a writer holding it then fails its swap), then every segment. */
	async clear(): Promise<string[]> {
		await this.manifests.delete(this.manifestKey);
		const listed = await this.storage.list(this.segmentsPrefix);
		for (const o of listed) await this.deleteSegment(o.key);
		return [this.manifestKey, ...listed.map((o) => o.key)];
	}

	/** The `k` chunks that best match `query` (BM25), best first, among those the filter allows. */
	async search(query: string, k: number, filter: ChunkFilter = {}): Promise<LexicalMatch[]> {
		return (await this.view(filter)).search(query, k);
	}

	/** The index as one search sees it: loaded once for its ranking and the names of its matches. */
	async view(filter: ChunkFilter): Promise<LexicalView> {
		const { manifest, loaded } = await this.load(filter);
		if (manifest.version === null) return { search: () => [], names: () => [] };
		const scope = this.scopeOf(manifest, loaded, filter);
		return {
			search: (query, k) => bm25(query, loaded, scope, k),
			names: (chunk) => namesOf(chunk, loaded, scope),
		};
	}
}

function tooBig(tail: IndexedChunk[]): boolean {
	if (tail.length > TAIL_MAX) return true;
	let bytes = 0;
	for (const d of tail) bytes += d.text.length;
	return bytes > TAIL_BYTES;
}

export { scopeKeys };
export type { LexicalStats, LexicalView } from './types';
