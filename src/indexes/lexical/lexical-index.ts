// The lexical index of a memory base: a manifest (compare-and-swap) holding chunks inline (the tail),
// the list of write-once segments, and the open sources whose newest chunks a search reads from the
// sources themselves through the reader its owner injects (open-sources.ts), so adding to a
// conversation needs no write here. A full tail is sealed into a segment, and FAN segments of one
// level merge into one of the next: the manifest stays bounded, the segments few, on disk and S3.
import { randomBytes } from 'node:crypto';

import { BoundedCache } from '../../common/bounded-cache';
import { deleteParts } from '../../common/parallel';
import { IndexDamagedError } from '../../errors';
import { validateKeyPrefix } from '../../keys/ids';
import { bloomMayHave, bloomPositions } from '../../store/bloom';
import { DocumentStore } from '../../store/document-store';
import type { Versioned } from '../../store/document-store';
import { forEachKey, storageIdentity } from '../../store/storage';
import type { MemoryStorage } from '../../store/storage';
import type { IndexedChunk } from '../chunks/chunk';
import type { ChunkFilter } from '../chunks/filter';
import { checkListed, ListedKeys, missingFrom } from '../chunks/listed';
import type { ListedSegment } from '../chunks/listed';
import { checkOwner, guarded } from '../chunks/manifest-guard';
import type { SearchReads } from '../chunks/search-reads';
import { retireParts, RETIRE_GRACE_MS } from '../chunks/retiring';
import type { RetirePolicy } from '../chunks/retiring';
import type { Touched } from '../chunks/touched';
import type { LexicalMatch } from './bm25';
import { emptyMoved, resetIndex } from './emptying';
import { forgetFrom, termTierParts } from './forget';
import { listedBy, sweepUnlisted } from '../chunks/orphans';
import { FAN, mergeDue } from './merge';
import { emptyManifest, lexicalManifestCodec } from './manifest';
import type { LexicalManifest } from './manifest';
import { relist } from './open-sources';
import type { Listing, SourceReader, SourceTail } from './open-sources';
import { build, decode, encode, overflows, refOf } from './segment';
import { clearBucketCache, LEXICAL_CACHE_BYTES } from './tiers';
import { upkeepAfterAdd } from './tier-maintenance';
import type { LexicalRef, LexicalSegment } from './segment';
import type { LexicalStats, LexicalView } from './types';
import { clearViewCache, lexicalStats, lexicalView } from './view';
import type { LoadedIndex } from './view';

/** Chunks the manifest holds inline before they are sealed into a segment. */
export const TAIL_MAX = 64;
/** …or this many bytes of their text, whichever comes first. */
export const TAIL_BYTES = 48 * 1024;
export { FAN };
/** A single segment holds at most this many chunks (a larger add is split). */
const SEGMENT_MAX = 4096;

export { LEXICAL_CACHE_BYTES };
/** Decoded segments by storage and key: random names, never reused (as vector segments). */
const segments = new BoundedCache<LexicalSegment>({
	name: 'lexical segments',
	maxWeight: LEXICAL_CACHE_BYTES,
});
/** The tail as a segment, per manifest version; an open source's newest chunks, per source version. */
const tails = new BoundedCache<LexicalSegment>({ name: 'lexical tails', maxEntries: 256 });

export function clearLexicalCache(): void {
	segments.clear();
	tails.clear();
	clearBucketCache();
	clearViewCache();
}

const levelOf = (count: number) =>
	Math.max(0, Math.floor(Math.log(count / TAIL_MAX) / Math.log(FAN) + 1e-9));

/** How an index is opened besides its folder. */
export interface LexicalIndexOptions {
	/** The partition's owner when it is one (a manifest of another owner is refused). */
	owner?: string;
	/** The manifest reads of the search it is opened for (one read of the manifest per search). */
	reads?: SearchReads;
	/** Segments merge up to this many chunks (no limit by default): one read a segment at a time keeps each small. */
	segmentChunks?: number;
	/** Keeps term tiers over its settled segments (tiers.ts), for searches of an index too large to read. */
	tiers?: boolean;
	/** Rows of a tier's bucket of conversations (default SESSION_BUCKET_ROWS; tests split them sooner). */
	sessionBucketRows?: number;
}

export class LexicalIndex {
	readonly manifestKey: string;
	readonly segmentsPrefix: string;
	readonly owner?: string;
	private readonly manifests: DocumentStore<LexicalManifest>;
	/** The reads of the search it is opened for: its manifest once, its parts within the search's bytes. */
	readonly reads?: SearchReads;
	readonly segmentChunks: number;
	readonly sessionBucketRows?: number;
	private readonly tiered: boolean;

	/** `name` is for errors; `prefix` the folder of its manifest and segments (its owner's choice). */
	constructor(
		readonly storage: MemoryStorage,
		readonly name: string,
		prefix: string,
		maxAttempts = 12,
		/** Reads the open sources (none without it: an index read on its own). */
		readonly readSources: SourceReader = async () => [],
		options: LexicalIndexOptions = {},
	) {
		const folder = validateKeyPrefix('lexical index folder', prefix);
		this.manifestKey = `${folder}manifest.json`;
		this.segmentsPrefix = `${folder}segments/`;
		this.manifests = new DocumentStore(storage, lexicalManifestCodec, { maxAttempts });
		this.owner = options.owner;
		this.reads = options.reads;
		this.segmentChunks = options.segmentChunks ?? Infinity;
		this.tiered = options.tiers ?? false;
		this.sessionBucketRows = options.sessionBucketRows;
	}

	private cacheId(key: string): string {
		return `${storageIdentity(this.storage)}\n${key}`;
	}

	/** How it deletes what a swap replaced (chunks/retiring.ts): after a grace when searches stream it. */
	get retiring(): RetirePolicy {
		return { prefix: this.segmentsPrefix, graceMs: this.tiered ? RETIRE_GRACE_MS : 0 };
	}

	/** The manifest: this search's read of it (see SearchReads), or a new one with `fresh`. */
	async readManifest(fresh = false): Promise<Versioned<LexicalManifest>> {
		const read = async () =>
			checkOwner(this.manifestKey, this.owner, await this.manifests.read(this.manifestKey));
		return this.reads ? this.reads.once(this.manifestKey, read, fresh) : read();
	}

	/**
	 * One compare-and-swap of the manifest (refused once the index was moved, unless `onMoved`).
	 * `known` is a guess of the current version to start from: only for a change that always writes
	 * (a decision to change nothing must be taken on what is stored).
	 */
	update(
		fn: (
			cur: Versioned<LexicalManifest>,
		) => Promise<LexicalManifest | undefined> | LexicalManifest | undefined,
		options: { onMoved?: 'refuse' | 'allow'; known?: boolean } = {},
	) {
		return this.manifests.update(
			this.manifestKey,
			guarded(this.manifestKey, this.owner, fn, options.onMoved),
			options.known ? this.manifests.lastKnown(this.manifestKey) : undefined,
		);
	}

	/** Creates the (empty) index when it does not exist: from then on, a missing manifest is a lost one. */
	async ensure(): Promise<void> {
		await this.update((cur) => (cur.version === null ? emptyManifest() : undefined));
	}

	/**
	 * Marks the index moved to the partitioned layout (its content stays for readers until `retire`):
	 * from then on every write is refused, and its writer writes to the partitions instead. A missing
	 * index is created marked, so a late writer cannot start one where nobody reads.
	 */
	async markMoved(at: string): Promise<Versioned<LexicalManifest>> {
		const result = await this.update(
			(cur) => {
				if (cur.version === null) return { ...emptyManifest(), moved_at: at };
				return cur.doc.moved_at !== undefined ? undefined : { ...cur.doc, moved_at: at };
			},
			{ onMoved: 'allow' },
		);
		return result.current;
	}

	/** Empties a moved index for good (its marker stays, so a late writer is still refused). */
	retire(): Promise<string[]> {
		return emptyMoved(this);
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

	/** A listed segment, decoded once per process (checkListed); null when storage does not hold it. */
	async readSegment(ref: ListedSegment): Promise<LexicalSegment | null> {
		const cached = segments.get(this.cacheId(ref.key));
		if (cached) {
			checkListed(ref, cached.lengths.length);
			return cached;
		}
		const got = await this.storage.get(ref.key);
		if (!got) return null;
		const segment = decode(ref.key, got.body);
		checkListed(ref, segment.lengths.length, got.body.byteLength);
		return segments.set(this.cacheId(ref.key), segment, { weight: segment.bytes });
	}

	async deleteSegment(key: string): Promise<void> {
		this.uncacheSegment(key);
		await this.storage.delete(key);
	}

	uncacheSegment(key: string): void {
		segments.delete(this.cacheId(key));
	}

	/**
	 * Deletes segments and term tier buckets the manifest does not list and nobody wrote for
	 * `olderThanMs` (chunks/orphans.ts): what a killed writer left, which may hold a conversation's words.
	 */
	sweepOrphans(olderThanMs: number): Promise<string[]> {
		return sweepUnlisted(this, termTierParts, olderThanMs);
	}

	/**
	 * Adds chunks (a chunk ID already indexed is superseded by the new copy) and lists or unlists open
	 * sources. Small adds go into the tail; a full tail becomes a level-0 segment, and FAN segments of one
	 * level are merged into one of the next, all in the one compare-and-swap of the manifest that lists
	 * them. Returns the manifest as stored after it.
	 */
	async add(docs: IndexedChunk[], listing: Listing = {}): Promise<Added> {
		const written: string[] = [];
		let due: string[] = [];
		const ids = new Set(docs.map((d) => d.id));
		let created = false;
		const result = await this.update(
			async (cur) => {
				due = [];
				created = cur.version === null;
				const found = cur.version === null ? emptyManifest() : cur.doc;
				const open = relist(found.open ?? [], listing, new Date());
				if (docs.length === 0 && open === undefined) return undefined;
				const m = open ? { ...found, open } : found;
				const tail = [...m.tail.filter((d) => !ids.has(d.id)), ...docs];
				if (!overflows(tail, TAIL_MAX, TAIL_BYTES))
					return { ...m, tail, updated_at: new Date().toISOString() };
				let refs = [...m.segments];
				const size = Math.min(SEGMENT_MAX, this.segmentChunks);
				for (let i = 0; i < tail.length; i += size) {
					const part = tail.slice(i, i + size);
					const ref = await this.writeSegment(levelOf(part.length), part);
					written.push(ref.key);
					refs.push(ref);
				}
				const out = { written, merged: [] as string[], cap: this.segmentChunks };
				refs = await mergeDue(this, refs, out);
				// What the merges replaced is kept a while for searches reading it (retiring.ts).
				const retired = retireParts(
					{ ...m, tail: [], segments: refs, updated_at: new Date().toISOString() },
					// Written by this add, a part was never listed (it is deleted below).
					m.segments
						.filter((r) => out.merged.includes(r.key))
						.map((r) => ({ key: r.key, bytes: r.bytes })),
					this.retiring,
				);
				due = retired.due;
				return retired.doc;
			},
			{ known: true },
		);
		const listed = new Set(result.current.doc.segments.map((r) => r.key));
		// Segments of attempts that lost their swap are listed nowhere; retired ones past their grace go.
		await deleteParts(
			[...written.filter((k) => !listed.has(k)), ...(result.written ? due : [])],
			(key) => this.deleteSegment(key),
		);
		if (this.tiered && result.written) await upkeepAfterAdd(this, result.current.doc);
		return { ...result.current, created: result.written && created };
	}

	/**
	 * Adds chunks as older than all the index holds (an upgrade copying a moved index's chunks into a
	 * partition that may hold newer copies already): written once as segments listed first.
	 */
	async addOlder(docs: IndexedChunk[]): Promise<void> {
		const refs: LexicalRef[] = [];
		const size = Math.min(SEGMENT_MAX, this.segmentChunks);
		for (let i = 0; i < docs.length; i += size) {
			const part = docs.slice(i, i + size);
			refs.push(await this.writeSegment(levelOf(part.length), part));
		}
		if (refs.length === 0) return;
		await this.update((cur) => {
			const m = cur.version === null ? emptyManifest() : cur.doc;
			return { ...m, segments: [...refs, ...m.segments], updated_at: new Date().toISOString() };
		});
	}

	/** The tail of one manifest version as a segment. */
	tailOf(manifest: Versioned<LexicalManifest>): LexicalSegment {
		const id = `${this.cacheId(this.manifestKey)}\n${manifest.version}`;
		return tails.getOrSet(id, () => build(`${this.manifestKey}#tail`, manifest.doc.tail));
	}

	/** An open source's newest chunks as a segment, built once per source version. */
	sourceSegment(tail: SourceTail): LexicalSegment {
		return tails.getOrSet(this.cacheId(tail.key), () => build(tail.key, tail.docs()));
	}

	/**
	 * The segments a filter may need (the tail among them), from the manifest as read now (or `listed`,
	 * one read already); retried once on a newer manifest when a segment is missing. `id` names what
	 * was loaded (for cached masks).
	 */
	async loadSegments(
		filter: ChunkFilter,
		fresh = false,
		listed?: Versioned<LexicalManifest>,
	): Promise<LoadedIndex> {
		const want = [
			...(filter.sessionId !== undefined ? [bloomPositions(`s:${filter.sessionId}`)] : []),
			...(filter.userId !== undefined ? [bloomPositions(`u:${filter.userId}`)] : []),
		];
		for (let attempt = 0; ; attempt++) {
			const manifest =
				attempt === 0 && listed && !fresh ? listed : await this.readManifest(fresh || attempt > 0);
			if (manifest.version === null) return { manifest, loaded: [], id: this.manifestKey };
			const refs = manifest.doc.segments.filter(
				(r) =>
					want.every((p) => bloomMayHave(r.bloom, p)) &&
					(filter.since === undefined || r.to >= filter.since) &&
					(filter.until === undefined || r.from <= filter.until),
			);
			const loaded = await Promise.all(refs.map((r) => this.readSegment(r)));
			const missing = refs.filter((_, i) => loaded[i] === null).map((r) => r.key);
			if (missing.length === 0) {
				const all = [...(loaded as LexicalSegment[]), this.tailOf(manifest)];
				const id = [this.cacheId(this.manifestKey), manifest.version, ...refs.map((r) => r.key)];
				return { manifest, loaded: all, id: id.join('\n') };
			}
			// A merge may have replaced them since the manifest was read: look once more.
			if (attempt >= 1) throw new IndexDamagedError(this.name, missing);
		}
	}

	/** The manifest, and the segments and tier buckets it lists that storage lost (one listing). */
	async lostSegments(): Promise<{ manifest: Versioned<LexicalManifest>; missing: string[] }> {
		const manifest = await this.readManifest(true);
		const doc = manifest.version === null ? emptyManifest() : manifest.doc;
		const listed = listedBy(this.segmentsPrefix, termTierParts, doc);
		return { manifest, missing: await missingFrom(this.storage, listed) };
	}

	/** Every segment the manifest lists that storage holds (the tail among them), and those it lost. */
	async loadAll(fresh = false): Promise<LoadedIndex & { missing: string[]; segments: number }> {
		const manifest = await this.readManifest(fresh);
		if (manifest.version === null)
			return { manifest, loaded: [], id: this.manifestKey, missing: [], segments: 0 };
		const refs = manifest.doc.segments;
		const keys = refs.map((r) => r.key);
		const missing = await missingFrom(this.storage, new ListedKeys(this.segmentsPrefix, keys));
		const lost = new Set(missing);
		const loaded: LexicalSegment[] = [];
		for (const r of refs) {
			const seg = lost.has(r.key) ? null : await this.readSegment(r);
			if (seg) loaded.push(seg);
		}
		loaded.push(this.tailOf(manifest));
		const id = [this.cacheId(this.manifestKey), manifest.version, ...loaded.map((x) => x.key)];
		return { manifest, loaded, id: id.join('\n'), missing, segments: refs.length };
	}

	/**
	 * Removes one conversation's chunks for good (or only those `only` picks: say, the messages of an
	 * expired conversation, or chunks put back of a source gone since): the tail without them, and
	 * each segment that may hold them rewritten without them (or dropped), in one compare-and-swap of
	 * the manifest that also unlists the conversation (unless `only`); the old segments are deleted
	 * after it. Returns the chunks removed.
	 */
	forgetSession(
		sessionId: string,
		only?: (d: IndexedChunk) => boolean,
		touched?: Touched,
	): Promise<number> {
		return forgetFrom(this, sessionId, only, touched);
	}

	/** See resetIndex. */
	reset(): Promise<void> {
		return resetIndex(this);
	}

	/** Deletes the manifest (a writer holding it fails its swap), then every segment; counts them (as vector clear). */
	async clear(deleted?: (key: string) => void): Promise<number> {
		await this.manifests.delete(this.manifestKey);
		deleted?.(this.manifestKey);
		let n = 1;
		await forEachKey(this.storage, this.segmentsPrefix, async (key) => {
			await this.deleteSegment(key);
			deleted?.(key);
			n++;
		});
		return n;
	}

	/** The `k` chunks that best match `query` (BM25), best first, among those the filter allows. */
	async search(query: string, k: number, filter: ChunkFilter = {}): Promise<LexicalMatch[]> {
		return await (await this.view(filter)).search(query, k);
	}

	/** The index as one search sees it: loaded once for its ranking and the names of its matches. */
	view(filter: ChunkFilter): Promise<LexicalView> {
		return lexicalView([this], filter);
	}

	/** What the index holds (every segment is read), and which listed segments storage lost. */
	stats(): Promise<LexicalStats> {
		return lexicalStats([this]);
	}
}

/** The manifest after an add, and whether that add created the index. */
export type Added = Versioned<LexicalManifest> & { created: boolean };

export type { LexicalStats, LexicalView } from './types';
