// Segments of the lexical index: captured chunks with their postings (term → documents and term
// counts), written once (stored-segment.ts: chunks in blocks, read lazily) and decoded into maps ready
// to score; a segment written before that form is gzipped JSON, decoded whole. Also the tail's form:
// recent chunks kept in the manifest, turned into the same shape in memory.
import { z } from 'zod';

import { CorruptDocumentError } from '../../errors';
import { bloomOf } from '../../store/bloom';
import { decodeJsonObject, encodeJson } from '../../store/codec';
import { badChunk, chunkHeapBytes, isGone, isRecord } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import { decodeStored, encodeStored, isStoredSegment } from './stored-segment';
import type { LazyDocs } from './stored-segment';
import type { TierPlace } from './tiers';
import { termCounts } from './tokenize';

/** Chunks ready to score: postings per term as (document, count) pairs, and each document's length. */
export interface LexicalSegment {
	key: string;
	docs: IndexedChunk[];
	lengths: Uint32Array;
	postings: Map<string, Uint32Array>;
	/** Bytes it takes in memory, about (for the cache). */
	bytes: number;
	/** Documents a Forget left in their places as gone (chunk.ts: goneChunk), if any. */
	gone?: number;
	/** Read lazily (stored-segment.ts): `docs` and `postings` decode on first use, `lazy` a part of them. */
	lazy?: LazySegment;
}

/** What a lazily read segment offers beside `docs` and `postings`: a part of either. */
export interface LazySegment extends LazyDocs {
	/** One term's postings, the others left stored (checked as postings are). */
	posting(term: string): Uint32Array | undefined;
}

/** Document `i` of a segment (of a lazily read one, only its block decoded). */
export const docAt = (seg: LexicalSegment, i: number): IndexedChunk =>
	seg.lazy ? seg.lazy.doc(i) : seg.docs[i];

/** A term's postings in a segment (of a lazily read one, only that term's decoded). */
export const postingOf = (seg: LexicalSegment, term: string): Uint32Array | undefined =>
	seg.lazy ? seg.lazy.posting(term) : seg.postings.get(term);

/**
 * The documents of a segment whose conversation and message number pass, with their numbers (of a
 * lazily read one, only their blocks decoded; gone documents never).
 */
export function docsWhere(
	seg: LexicalSegment,
	test: (session: string, seq: number) => boolean,
): Array<[number, IndexedChunk]> {
	if (seg.lazy) return seg.lazy.where(test).map((i) => [i, seg.lazy!.doc(i)]);
	const out: Array<[number, IndexedChunk]> = [];
	seg.docs.forEach((d, i) => !isGone(d) && test(d.session_id, d.seq) && out.push([i, d]));
	return out;
}

/** The conversations a segment holds (gone documents aside). */
export const sessionsIn = (seg: LexicalSegment): ReadonlySet<string> =>
	seg.lazy
		? seg.lazy.sessions()
		: new Set(seg.docs.filter((d) => !isGone(d)).map((d) => d.session_id));

/** A segment's documents of these conversations, in order (of a lazily read one, only their blocks). */
export const docsOf = (seg: LexicalSegment, sessions: ReadonlySet<string>): IndexedChunk[] =>
	seg.lazy ? seg.lazy.of(sessions) : seg.docs.filter((d) => sessions.has(d.session_id));

/** One segment as the manifest lists it. */
export interface LexicalRef {
	key: string;
	/** Merge level: level L holds about TAIL_MAX · FAN^L chunks. */
	level: number;
	count: number;
	/** Bloom filter over "s:<session>" and "u:<user>" of its chunks (a filtered search skips the rest). */
	bloom: string;
	/** Oldest and newest capture time of its chunks (a time-filtered search skips the rest). */
	from: string;
	to: string;
	bytes: number;
	/** Its place in a term tier (tiers.ts), once one was built from it. */
	tier?: TierPlace;
	/** Of `count`, the documents a Forget left in their places as gone (chunk.ts: goneChunk). */
	gone?: number;
}

const chunkSchema = z.looseObject({
	id: z.string().min(1),
	session_id: z.string().min(1),
	user_id: z.string().min(1).optional(),
	message_id: z.string().min(1),
	seq: z.number().int().min(0),
	run_id: z.string().min(1),
	chunk_index: z.number().int().min(0),
	created_at: z.string().min(1),
	text: z.string(),
	role: z.string().optional(),
	metadata: z.record(z.string(), z.unknown()).optional(),
});

export const chunksSchema = z.array(chunkSchema);

/** The filter key of a chunk's conversation and user (what a ref's bloom holds). */
export const scopeKeys = (c: Pick<IndexedChunk, 'session_id' | 'user_id'>) => [
	`s:${c.session_id}`,
	...(c.user_id !== undefined ? [`u:${c.user_id}`] : []),
];

/** Postings of chunks (tokenized now). */
export function build(key: string, docs: IndexedChunk[]): LexicalSegment {
	const lengths = new Uint32Array(docs.length);
	const lists = new Map<string, number[]>();
	docs.forEach((d, i) => {
		const { terms, length } = termCounts(d.text);
		lengths[i] = length;
		for (const [term, count] of terms) {
			let list = lists.get(term);
			if (!list) lists.set(term, (list = []));
			list.push(i, count);
		}
	});
	const postings = new Map<string, Uint32Array>();
	for (const [term, list] of lists) postings.set(term, Uint32Array.from(list));
	return { key, docs, lengths, postings, bytes: heapBytes(docs, postings), ...goneOf(docs) };
}

/**
 * Bytes a segment takes in memory once decoded, about, for the cache's weight: its chunks
 * (chunkHeapBytes), each term's entry and postings. Measured on V8 for chunks of 15 to 200 words, it is
 * 1.1 to 1.4 times what the heap grows by; the weight taken from the stored size before was 0.4 to
 * 1.1 times it, so a full cache could hold 2.5 times its limit.
 */
function heapBytes(
	docs: readonly IndexedChunk[],
	postings: ReadonlyMap<string, Uint32Array>,
): number {
	let bytes = chunkHeapBytes(docs);
	for (const [term, list] of postings) bytes += 260 + 2 * term.length + list.byteLength;
	return bytes;
}

/** A segment's postings as stored: term → (document, count) pairs. */
function storedTerms(segment: LexicalSegment): Record<string, number[]> {
	const terms: Record<string, number[]> = {};
	for (const [term, list] of segment.postings) terms[term] = [...list];
	return terms;
}

/** The stored form (stored-segment.ts): chunks in blocks, lengths, postings. */
export const encode = (segment: LexicalSegment): Buffer =>
	encodeStored(segment.docs, segment.lengths, storedTerms(segment), segment.bytes);

/** The stored form of segments written before blocks (gzipped JSON; still read). */
export const encodeWhole = (segment: LexicalSegment): Buffer =>
	encodeJson(
		{
			kind: 'lexical',
			docs: segment.docs,
			lengths: [...segment.lengths],
			terms: storedTerms(segment),
		},
		{ gzip: true },
	);

/** Whole numbers below 2^32 (`>>> 0` keeps those as they are), copied; null if one is not. */
function countsOf(list: unknown[]): Uint32Array | null {
	const out = new Uint32Array(list.length);
	for (let i = 0; i < list.length; i++) {
		const v = list[i];
		if (typeof v !== 'number' || v >>> 0 !== v) return null;
		out[i] = v;
	}
	return out;
}

/**
 * One term's stored postings as (document, count) pairs, checked as they are copied (the generic
 * checks and copies took a quarter of decoding a segment); or what is wrong with them.
 */
function postingsOf(list: unknown, docs: number): Uint32Array | string {
	const pairs = Array.isArray(list) && (list.length & 1) === 0 ? countsOf(list) : null;
	if (!pairs) return 'are not pairs of counts';
	for (let i = 0; i < pairs.length; i += 2)
		if (pairs[i] >= docs) return 'name a document it does not hold';
	return pairs;
}

/** Each term's stored postings, checked (see postingsOf). */
function postingsFrom(key: string, terms: Record<string, unknown>, docs: number) {
	const postings = new Map<string, Uint32Array>();
	for (const term of Object.keys(terms)) {
		const bad = postingsOf(terms[term], docs);
		if (typeof bad === 'string')
			throw new CorruptDocumentError(key, `postings of "${term}" ${bad}`);
		postings.set(term, bad);
	}
	return postings;
}

/**
 * A segment in blocks: its table now, its chunks and postings when first used (each part checked
 * then). Weighed as decoded whole (a cached one may come to be) beside its stored bytes (it keeps
 * them), never below three times them.
 */
function decodeLazy(key: string, bytes: Uint8Array): LexicalSegment {
	const stored = decodeStored(key, bytes);
	let docs: IndexedChunk[] | undefined;
	let postings: Map<string, Uint32Array> | undefined;
	const n = stored.lengths.length;
	// Terms decoded alone, while the whole postings are not (a search needs two or three words).
	const terms = new Map<string, Uint32Array | undefined>();
	const posting = (term: string): Uint32Array | undefined => {
		if (postings) return postings.get(term);
		if (terms.has(term)) return terms.get(term);
		const pairs = stored.termPostings(term);
		if (pairs === null) return seg.postings.get(term);
		const list = pairs === undefined ? undefined : postingsOf(pairs, n);
		if (typeof list === 'string')
			throw new CorruptDocumentError(key, `postings of "${term}" ${list}`);
		terms.set(term, list);
		return list;
	};
	const seg = {
		key,
		lengths: stored.lengths,
		bytes:
			bytes.byteLength +
			Math.min(Math.max(stored.heap, 3 * bytes.byteLength), 64 * bytes.byteLength),
		lazy: { ...stored.lazy, posting },
		...(stored.gone > 0 ? { gone: stored.gone } : {}),
	} as LexicalSegment;
	Object.defineProperty(seg, 'docs', {
		enumerable: true,
		get: () => (docs ??= stored.allDocs()),
	});
	Object.defineProperty(seg, 'postings', {
		enumerable: true,
		get: () => {
			if (postings) return postings;
			postings = postingsFrom(key, stored.postings() as Record<string, unknown>, n);
			terms.clear();
			return postings;
		},
	});
	return seg;
}

/** Decodes a stored segment; anything inconsistent is a CorruptDocumentError naming its key. */
export function decode(key: string, bytes: Uint8Array): LexicalSegment {
	if (isStoredSegment(bytes)) return decodeLazy(key, bytes);
	const value = decodeJsonObject(key, bytes) as {
		kind?: unknown;
		docs?: unknown;
		lengths?: unknown;
		terms?: unknown;
	};
	const fail = (detail: string): never => {
		throw new CorruptDocumentError(key, detail);
	};
	if (value.kind !== 'lexical') fail('not a lexical segment');
	if (!Array.isArray(value.docs)) fail('docs: not a list');
	const docs = value.docs as unknown[];
	docs.forEach((c, i) => {
		const bad = badChunk(c);
		if (bad) fail(`docs.${i}.${bad}: not valid`);
	});
	const n = docs.length;
	const lengths = Array.isArray(value.lengths) ? countsOf(value.lengths) : null;
	if (!lengths || lengths.length !== n) fail('lengths do not match docs');
	if (!isRecord(value.terms)) fail('terms: not an object');
	const postings = postingsFrom(key, value.terms as Record<string, unknown>, n);
	return {
		key,
		docs: docs as IndexedChunk[],
		lengths: lengths as Uint32Array,
		postings,
		bytes: heapBytes(docs as IndexedChunk[], postings),
		...goneOf(docs as IndexedChunk[]),
	};
}

/** How many of the documents are gone (none: nothing said). */
function goneOf(docs: readonly IndexedChunk[]): { gone?: number } {
	let gone = 0;
	for (const d of docs) if (isGone(d)) gone++;
	return gone > 0 ? { gone } : {};
}

/** The manifest's entry for a segment written with `body`. */
export function refOf(key: string, level: number, docs: IndexedChunk[], body: Buffer): LexicalRef {
	// Gone documents name no conversation and no time (a segment of only those keeps the epoch's).
	const live = docs.filter((d) => !isGone(d));
	const times = (live.length > 0 ? live : docs).map((d) => d.created_at).sort();
	return {
		key,
		level,
		count: docs.length,
		bloom: bloomOf(live.flatMap(scopeKeys)),
		from: times[0],
		to: times[times.length - 1],
		bytes: body.byteLength,
		...(live.length < docs.length ? { gone: docs.length - live.length } : {}),
	};
}

/** Whether chunks held inline (a manifest's tail) are more than `count` or their text more than `bytes`. */
export function overflows(tail: readonly IndexedChunk[], count: number, bytes: number): boolean {
	if (tail.length > count) return true;
	let size = 0;
	for (const d of tail) size += d.text.length;
	return size > bytes;
}
