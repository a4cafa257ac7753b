// The stored form of a word-index segment, read lazily: a search of every conversation reads a segment
// of thousands of chunks for the one or two a term tier names (tier-search.ts), and decoding all of
// them (and every posting) took most of its time. So the chunks are stored in blocks (chunks/blocks.ts)
// beside the postings (gzipped apart), and a table of each document's length, conversation and
// message number: a reader decodes the header and the table at once, and a block or the postings only
// when asked for them. Every part is checked as it is decoded (a damaged one is a CorruptDocumentError
// naming the key, whenever it is first asked for, never an empty answer), and a block's chunks must be
// those the table lists.
//
//   "LLMLEX02" | u32 header length | header JSON | padding to 4 | u32 × count: lengths, conversations
//   (an index into the header's list; NONE for a gone document), message numbers | parts: the
//   postings, then each block
import { u32Of } from '../../common/u32';
import { CorruptDocumentError } from '../../errors';
import {
	blockCount,
	ChunkBlocks,
	encodeBlocks,
	gzJson,
	Numbering,
	partJson,
	partText,
} from '../chunks/blocks';
import { GONE, isGone, isRecord } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import { scanPostings } from './posting-scan';

const MAGIC = Buffer.from('LLMLEX02', 'latin1');
/** The conversation of a gone document (chunk.ts: goneChunk). */
const NONE = 0xffffffff;

/** What a lazily read segment offers beside its `docs` (which decode every block). */
export interface LazyDocs {
	/** Document `i`, decoding only its block. */
	doc(i: number): IndexedChunk;
	/** The conversations it holds (gone documents aside). */
	sessions(): ReadonlySet<string>;
	/** Its documents of these conversations, in order, decoding only their blocks. */
	of(sessions: ReadonlySet<string>): IndexedChunk[];
	/** The numbers of its documents whose conversation and message number pass (gone ones never). */
	where(test: (session: string, seq: number) => boolean): number[];
}

/** A segment as stored: its table decoded, its postings and chunks on demand. */
export interface StoredSegment {
	lengths: Uint32Array;
	/** The heap a full decode takes, about (as encode measured it): the cache's weight. */
	heap: number;
	gone: number;
	lazy: LazyDocs;
	allDocs: () => IndexedChunk[];
	postings: () => unknown;
	/** One term's stored pairs (posting-scan.ts: undefined if it has none, null if only postings() can say). */
	termPostings: (term: string) => number[] | undefined | null;
}

export const isStoredSegment = (bytes: Uint8Array) =>
	bytes.length >= MAGIC.length && Buffer.from(bytes.subarray(0, MAGIC.length)).equals(MAGIC);

/** The stored form of these documents with their lengths and stored postings (`terms`). */
export function encodeStored(
	docs: readonly IndexedChunk[],
	lengths: Uint32Array,
	terms: Record<string, number[]>,
	heap: number,
): Buffer {
	const sessions = new Numbering();
	const table = new Uint32Array(3 * docs.length);
	docs.forEach((d, i) => {
		table[i] = lengths[i];
		table[docs.length + i] = isGone(d) ? NONE : sessions.of(d.session_id);
		table[2 * docs.length + i] = isGone(d) ? 0 : d.seq;
	});
	const parts = [gzJson({ terms }), ...encodeBlocks(docs)];
	const header = Buffer.from(
		JSON.stringify({
			kind: 'lexical',
			count: docs.length,
			sessions: sessions.list,
			parts: parts.map((p) => p.length),
			heap,
		}),
		'utf8',
	);
	const start = MAGIC.length + 4 + header.length;
	const pad = (4 - (start % 4)) % 4;
	const lead = Buffer.alloc(start + pad);
	MAGIC.copy(lead, 0);
	lead.writeUInt32LE(header.length, MAGIC.length);
	header.copy(lead, MAGIC.length + 4);
	const rows = Buffer.alloc(table.length * 4);
	table.forEach((v, i) => rows.writeUInt32LE(v, 4 * i));
	return Buffer.concat([lead, rows, ...parts]);
}

interface Header {
	count: number;
	sessions: string[];
	parts: number[];
	heap: number;
}

const whole = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** The header, checked: its counts whole, its conversations IDs, one part for the postings and each block. */
function headerOf(value: unknown, fail: (detail: string) => never): Header {
	if (!isRecord(value) || value.kind !== 'lexical') return fail('not a lexical segment');
	const { count, sessions, parts, heap } = value;
	if (!whole(count)) fail('count: not a whole number');
	if (!Array.isArray(sessions) || sessions.some((s) => typeof s !== 'string' || s === ''))
		fail('sessions: not a list of conversation IDs');
	const blocks = blockCount(count as number);
	if (!Array.isArray(parts) || parts.length !== 1 + blocks || !parts.every(whole))
		fail(`parts: not ${1 + blocks} sizes`);
	if (!whole(heap)) fail('heap: not a whole number');
	return value as unknown as Header;
}

/** The header, table and where each part starts, checked against the bytes' length. */
function layoutOf(buf: Buffer, fail: (detail: string) => never) {
	if (buf.length < MAGIC.length + 4) fail('cut short');
	const start = MAGIC.length + 4 + buf.readUInt32LE(MAGIC.length);
	if (start > buf.length) fail('its header is cut short');
	let value: unknown;
	try {
		value = JSON.parse(buf.subarray(MAGIC.length + 4, start).toString('utf8'));
	} catch {
		fail('its header is not JSON');
	}
	const header = headerOf(value, fail);
	const n = header.count;
	const rowsAt = start + ((4 - (start % 4)) % 4);
	const partsAt = rowsAt + 12 * n;
	const size = header.parts.reduce((a, b) => a + b, 0);
	if (partsAt + size !== buf.length) fail(`${buf.length} bytes, its header says ${partsAt + size}`);
	const table = u32Of(buf, rowsAt, 3 * n);
	for (const s of table.subarray(n, 2 * n))
		if (s !== NONE && s >= header.sessions.length)
			fail('a document names a conversation it does not list');
	const offsets = [partsAt];
	for (const p of header.parts) offsets.push(offsets.at(-1)! + p);
	return { header, table, offsets };
}

/** Reads the table of a stored segment and checks its layout; its parts are decoded when asked for. */
export function decodeStored(key: string, bytes: Uint8Array): StoredSegment {
	const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	const fail = (detail: string): never => {
		throw new CorruptDocumentError(key, detail);
	};
	const { header, table, offsets } = layoutOf(buf, fail);
	const n = header.count;
	const sessionOf = table.subarray(n, 2 * n);
	const part = (i: number) => buf.subarray(offsets[i], offsets[i + 1]);
	const blocks = new ChunkBlocks({
		count: n,
		block: (b) => part(1 + b),
		listed: (d, i) => {
			const s = sessionOf[i];
			return s === NONE
				? d.session_id === GONE
				: d.session_id === header.sessions[s] && d.seq === table[2 * n + i];
		},
		field: 'docs',
		fail,
	});
	const doc = (i: number) => blocks.at(i);
	const lazy: LazyDocs = {
		doc,
		sessions: () => new Set(header.sessions),
		of: (wanted) => lazy.where((session) => wanted.has(session)).map(doc),
		where: (test) => {
			const out: number[] = [];
			for (let i = 0; i < n; i++)
				if (sessionOf[i] !== NONE && test(header.sessions[sessionOf[i]], table[2 * n + i]))
					out.push(i);
			return out;
		},
	};
	// Inflated once: a search scans it for each of its words, a full parse reads it too.
	let text: Buffer | undefined;
	const postingsText = () => (text ??= partText(part(0), 'postings', fail));
	return {
		lengths: table.subarray(0, n),
		heap: header.heap,
		gone: sessionOf.filter((s) => s === NONE).length,
		lazy,
		allDocs: () => blocks.all(),
		termPostings: (term) => scanPostings(postingsText(), term),
		postings: () => {
			const value = partJson(part(0), 'postings', fail, postingsText());
			text = undefined; // parsed whole: the caller keeps what it needs of it
			if (!isRecord(value) || !isRecord(value.terms)) return fail('terms: not an object');
			return value.terms;
		},
	};
}
