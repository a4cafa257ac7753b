// Term tiers of a word index too large to read whole (a Memory Base's base-wide index): the postings
// of many settled segments regrouped by term, in buckets by the term's hash, so a search reads the
// buckets of its own words instead of every segment. A tier is listed in the manifest and each of its
// segments carries its place in it: a tier is used only while every segment it was built from is still
// listed as it was (a Forget rewriting one drops the tier in the same swap; see tier-maintenance.ts).
import { randomBytes } from 'node:crypto';

import { BoundedCache } from '../../common/bounded-cache';
import { fnv1a32 } from '../../common/hash';
import { CorruptDocumentError } from '../../errors';
import { decodeJsonObject, encodeJson } from '../../store/codec';
import { storageIdentity } from '../../store/storage';
import type { MemoryStorage } from '../../store/storage';
import { isGone, isRecord } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import type { NamedParts } from '../chunks/listed';
import {
	dropStale as dropStaleOfKind,
	tiersOf as tiersOfKind,
	withoutTiers as withoutTiersOfKind,
} from '../chunks/tiering';
import { tierPartKey } from '../chunks/tiering';
import type { PartNames, TierList, TierPlace, Usable } from '../chunks/tiering';
import type { LexicalManifest } from './manifest';
import type { LexicalRef } from './segment';
import { decodeRows, encodeRows } from './binary-rows';
import { allRows, heldPostings, postingsOf } from './postings';
import type { Postings, Rows } from './postings';

/** A tier as the manifest lists it. */
export interface TermTier {
	id: string;
	/** Segments it was built from (each names it in its ref's `tier`). */
	segments: number;
	/** Their documents, and the sum of their lengths (BM25's statistics). */
	n: number;
	total: number;
	/** Buckets of words: a power of two. */
	buckets: number;
	postings: number;
	/**
	 * Buckets of conversations after those (a power of two): for each conversation, the segments that
	 * hold some of its chunks (the messages beside a match are read from those only).
	 */
	sessionBuckets: number;
	/** (conversation, segment) rows in them. */
	sessionRows: number;
	bytes: number;
	/**
	 * Whether its word rows carry a fifth value, each document's capture second (timeKey): tiers built
	 * before have four, and a search reads every document that ties at its k-th best score in them.
	 */
	timed?: boolean;
	/** Whether its buckets of conversations are in the binary form too (tiers built before: JSON). */
	binarySessions?: boolean;
	/** Buckets a Forget wrote again, by number: each one's version (chunks/tiering.ts: PartNames). */
	versions?: PartNames['versions'];
}

export type { TierPlace };

/**
 * Postings of one bucket: per term, (segment ordinal, document, term count, document length, and in a
 * timed tier its capture second) rows; in a bucket of conversations, per conversation, (segment
 * ordinal, its chunks there, their lowest and highest message number).
 */
export type TermBucket = Map<string, Uint32Array>;
/** A bucket as read from storage: each term's rows walked block by block (postings.ts). */
export type StoredBucket = Map<string, Postings>;

/** Values per row of conversations, and of words in a tier that is not timed. */
export const ROW = 4;
/** Values per row of words in a timed tier. */
export const TIMED_ROW = 5;
export const wordRow = (tier: Pick<TermTier, 'timed'>) => (tier.timed ? TIMED_ROW : ROW);

/** A capture time as canonical ISO text (what toISOString writes): one order as text and as time. */
const CANONICAL = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * A document's capture second plus one, 0 when unknown (a time not in canonical form, or outside
 * 1970–2106). For canonical times a lower key means an earlier time as text too, so the first in
 * chunkOrder among documents that rank alike is among those of the lowest keys (tier-search.ts).
 */
export function timeKey(createdAt: string): number {
	if (!CANONICAL.test(createdAt)) return 0;
	const key = Math.floor(Date.parse(createdAt) / 1000) + 1;
	return Number.isSafeInteger(key) && key > 0 && key < 2 ** 32 ? key : 0;
}

/**
 * The bucket of a term among `buckets` (a power of two): the high bits of its hash (the same on every
 * platform), so buckets split in order.
 */
export function bucketOf(term: string, buckets: number): number {
	const bits = Math.log2(buckets);
	return bits === 0 ? 0 : fnv1a32(term) >>> (32 - bits);
}

/** Buckets for `rows` rows of a tier: about `per` rows each (BUCKET_ROWS for words), a power of two. */
export const BUCKET_ROWS = 4096;
export function bucketsFor(rows: number, per = BUCKET_ROWS): number {
	let b = 1;
	while (b * per < rows && b < 1 << 16) b *= 2;
	return b;
}

/**
 * Rows of a bucket of conversations: a search reads the buckets of its best matches' conversations
 * (up to 50, in as many buckets of a large tier), so they are larger than a word's; not so large that
 * one decoded (about 140 bytes a conversation) weighs more than a few megabytes.
 */
export const SESSION_BUCKET_ROWS = 16_384;

export const newTierId = () => randomBytes(9).toString('hex');

/** How a term tier's buckets are named. */
const TERM_PARTS = { kind: 'terms', ext: 'trm' } as const;

/** Where a tier's bucket is stored (beside the segments, so clearing the index clears it). */
export const bucketKey = (segmentsPrefix: string, tier: PartNames, b: number) =>
	tierPartKey(segmentsPrefix, TERM_PARTS.kind, tier, b, TERM_PARTS.ext);

/** Whether a key is a tier's bucket (not a segment). */
export const isBucketKey = (key: string) => key.endsWith('.trm');

/**
 * Each conversation of a segment's documents (gone ones and those of `skip` left out): its chunks
 * there, their lowest and highest message number; a tier's row of the conversation for the segment.
 */
export function conversationRows(
	docs: readonly IndexedChunk[],
	skip: ReadonlySet<number> = new Set(),
): Map<string, [number, number, number]> {
	const out = new Map<string, [number, number, number]>();
	docs.forEach((d, i) => {
		if (isGone(d) || skip.has(i)) return;
		const had = out.get(d.session_id);
		if (!had) out.set(d.session_id, [1, d.seq, d.seq]);
		else out.set(d.session_id, [had[0] + 1, Math.min(had[1], d.seq), Math.max(had[2], d.seq)]);
	});
	return out;
}

/** Buckets of a tier: its words', then its conversations'. */
export const bucketCount = (tier: TermTier) => tier.buckets + tier.sessionBuckets;

/** A manifest's term tiers' buckets, by tier (chunks/listed.ts). */
export const termParts = (doc: { terms?: TermTier[] } | undefined): NamedParts[] =>
	(doc?.terms ?? []).map((tier) => ({ ...TERM_PARTS, tier, count: bucketCount(tier) }));

/** Every bucket key of a tier. */
export const bucketKeys = (segmentsPrefix: string, tier: TermTier) =>
	Array.from({ length: bucketCount(tier) }, (_, b) => bucketKey(segmentsPrefix, tier, b));

/** The bucket of a conversation's rows in a tier. */
export const sessionBucket = (tier: TermTier, session: string) =>
	tier.buckets + bucketOf(session, tier.sessionBuckets);

/** Where a key of bucket `b` belongs: its bucket among those of its kind. */
export const homeOf = (tier: TermTier, key: string, b: number) =>
	b < tier.buckets ? bucketOf(key, tier.buckets) === b : sessionBucket(tier, key) === b;

/**
 * Whether bucket `b` of a tier is stored in the binary form (binary-rows.ts): the word buckets of a
 * timed tier, and the conversation buckets of a tier that says so. The others are gzipped JSON, rows
 * in base64, as before; a reader expecting one form (an earlier version expects JSON) fails on the
 * other instead of misreading its rows.
 */
const isBinary = (tier: TermTier, b: number) =>
	b < tier.buckets ? tier.timed === true : tier.binarySessions === true;

/** A bucket as written: each term's rows in memory, or walked a block at a time (binary form only). */
export type BucketToWrite = ReadonlyMap<string, Rows>;

export function encodeBucket(bucket: BucketToWrite, tier: TermTier, b: number): Buffer {
	if (isBinary(tier, b)) return encodeRows(bucket, b < tier.buckets ? TIMED_ROW : ROW);
	const terms: Record<string, string> = {};
	for (const [term, r] of bucket) {
		const rows = allRows(postingsOf(r));
		terms[term] = Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength).toString('base64');
	}
	return encodeJson({ kind: 'terms', terms }, { gzip: true });
}

/** A JSON bucket's rows (each term's base64 text as u32 rows), or `fail`. */
function jsonRows(key: string, bytes: Uint8Array, fail: (detail: string) => never): StoredBucket {
	const value = decodeJsonObject(key, bytes) as { kind?: unknown; terms?: unknown };
	if (value.kind !== 'terms' || !isRecord(value.terms)) fail('not a term bucket');
	const out: StoredBucket = new Map();
	for (const [term, text] of Object.entries(value.terms as Record<string, unknown>)) {
		if (typeof text !== 'string') fail(`postings of "${term}" are not text`);
		const raw = Buffer.from(text as string, 'base64');
		if (raw.byteLength % 4 !== 0) fail(`postings of "${term}" are not whole rows`);
		const rows = new Uint32Array(raw.byteLength / 4);
		Buffer.from(rows.buffer).set(raw);
		out.set(term, heldPostings(rows));
	}
	return out;
}

/**
 * A stored bucket, checked: every term belongs in it, and its rows are whole and name segments of the
 * tier (a blocked bucket's rows as a walk decodes each block). Anything else is a CorruptDocumentError
 * naming the key.
 */
export function decodeBucket(
	key: string,
	bytes: Uint8Array,
	tier: TermTier,
	b: number,
): StoredBucket {
	const fail = (detail: string): never => {
		throw new CorruptDocumentError(key, detail);
	};
	const width = b < tier.buckets ? wordRow(tier) : ROW;
	const read = isBinary(tier, b) ? decodeRows(bytes, fail, width) : jsonRows(key, bytes, fail);
	const check = (term: string, rows: Uint32Array) => {
		if (rows.length % width !== 0) fail(`postings of "${term}" are not whole rows`);
		for (let i = 0; i < rows.length; i += width)
			if (rows[i] >= tier.segments) fail(`postings of "${term}" name a segment it does not hold`);
		return rows;
	};
	for (const [term, postings] of read) {
		if (!homeOf(tier, term, b)) fail(`term "${term}" does not belong in this bucket`);
		if (postings.length === 0 || postings.length % width !== 0)
			fail(`postings of "${term}" are not whole rows`);
		// Rows held are checked now; a long list's blocks as a walk decodes them.
		if (postings.held) for (const rows of postings.blocks()) check(term, rows);
		else
			read.set(
				term,
				checkedBlocks(postings, (rows) => check(term, rows)),
			);
	}
	return read;
}

/** Blocks that each pass `check` as a walk reaches them. */
function checkedBlocks(postings: Postings, check: (rows: Uint32Array) => Uint32Array): Postings {
	return {
		held: false,
		length: postings.length,
		bytes: postings.bytes,
		*blocks() {
			for (const rows of postings.blocks()) yield check(rows);
		},
	};
}

/** Bytes a bucket read takes in memory, about (for the cache). */
export function bucketBytes(bucket: StoredBucket): number {
	let bytes = 64;
	for (const [term, postings] of bucket) bytes += 120 + 2 * term.length + postings.bytes;
	return bytes;
}

/** A tier with its segments in order, when every one is listed as it was built. */
export type UsableTier = Usable<LexicalRef, TermTier>;

/** Where a word index's manifest lists its term tiers. */
export const termTiers: TierList<LexicalManifest, LexicalRef, TermTier> = {
	of: (doc) => doc.terms ?? [],
	with: (doc, terms, segments) => ({ ...doc, terms, segments }),
};

/** The manifest's tiers whose segments are all listed; the others are stale (tier-maintenance drops them). */
export const tiersOf = (doc: LexicalManifest) => tiersOfKind(termTiers, doc);

/** The manifest without these tiers (their segments no longer name them). */
export const withoutTiers = (doc: LexicalManifest, ids: ReadonlySet<string>) =>
	withoutTiersOfKind(termTiers, doc, ids);

/** The manifest without its stale tiers, and the buckets to delete once it is stored. */
export const dropStale = (doc: LexicalManifest, segmentsPrefix: string) =>
	dropStaleOfKind(termTiers, doc, (t) => bucketKeys(segmentsPrefix, t));

/** Bytes of decoded lexical segments this process keeps, for every base together (LLM_MEMORY_LEXICAL_CACHE_MB). */
export const LEXICAL_CACHE_BYTES =
	(Number(process.env.LLM_MEMORY_LEXICAL_CACHE_MB) || 256) * 2 ** 20;

/** Decoded buckets by storage and key (random names, never reused): a quarter of the word cache's bytes. */
const bucketCache = new BoundedCache<StoredBucket>({
	name: 'term buckets',
	maxWeight: LEXICAL_CACHE_BYTES / 4,
});

export const clearBucketCache = () => bucketCache.clear();

/** Where a tier's buckets are: the index's storage and segments folder. */
export interface TierFiles {
	readonly storage: MemoryStorage;
	readonly segmentsPrefix: string;
}

/** One bucket of a listed tier, decoded once per process; null when storage does not hold it. */
export async function readBucket(
	files: TierFiles,
	tier: TermTier,
	b: number,
): Promise<StoredBucket | null> {
	const key = bucketKey(files.segmentsPrefix, tier, b);
	const id = `${storageIdentity(files.storage)}\n${key}`;
	const cached = bucketCache.get(id);
	if (cached) return cached;
	const got = await files.storage.get(key);
	if (!got) return null;
	const bucket = decodeBucket(key, got.body, tier, b);
	return bucketCache.set(id, bucket, { weight: bucketBytes(bucket) });
}

/** Writes a new bucket (never over another) and keeps it as a read would; returns its stored size. */
export async function writeBucket(
	files: TierFiles,
	tier: TermTier,
	b: number,
	bucket: BucketToWrite,
): Promise<number> {
	const key = bucketKey(files.segmentsPrefix, tier, b);
	const body = encodeBucket(bucket, tier, b);
	const stored = isBinary(tier, b) ? 'application/octet-stream' : 'application/gzip';
	await files.storage.put(key, body, { ifVersion: null, contentType: stored });
	const kept = isBinary(tier, b)
		? decodeBucket(key, body, tier, b)
		: new Map([...bucket].map(([k, rows]) => [k, heldPostings(allRows(postingsOf(rows)))]));
	bucketCache.set(`${storageIdentity(files.storage)}\n${key}`, kept, { weight: bucketBytes(kept) });
	return body.byteLength;
}
