// The stored forms of a vector segment (and of a cell tier's bucket, which is one). A search of every
// conversation reads dozens of buckets and segments of thousands of rows, scores every row, and needs
// the chunks of a few: parsing every chunk took about a third of its time. So a segment is stored as its
// Float32 rows, a table of what each row is, the texts the table numbers, then its chunks in blocks
// (chunks/blocks.ts): a reader decodes the header, rows and table at once, a text when a row needs it,
// and a block only when one of its chunks is asked for. The table holds what ranks a row beside its
// score (chunkOrder: capture time, conversation, message number, chunk index; rows often score alike)
// and what names its message (a hash of the ID, for the similarities of chunks the word ranking
// found). Segments written before (the texts in the JSON header; every chunk in it) are read as before.
//
//   "LLMVEC03" | u32 header length | header JSON (how many conversations and capture times the table
//   numbers) | padding to 4 | f32 LE rows | u32 LE × count, TABLE times: message hashes, chunk indexes,
//   conversations, capture times, message numbers | the conversations, then the capture times, as
//   stored texts (common/stored-texts.ts) | u32 LE × count: each row's tag, if the header says so (a
//   bucket's cells) | the blocks
//   "LLMVEC02" | u32 header length | header JSON (with the conversations and capture times) | padding
//   to 4 | f32 LE rows | the table | the blocks
//   "LLMVEC01" | u32 header length | header JSON with every chunk | padding to 4 | f32 LE rows
import { endianness } from 'node:os';

import { fnv1a32 } from '../../common/hash';
import { textList, textsAt } from '../../common/stored-texts';
import type { Texts } from '../../common/stored-texts';
import { u32Of } from '../../common/u32';
import { CorruptDocumentError } from '../../errors';
import { BLOCK, blockCount, ChunkBlocks } from '../chunks/blocks';
import { badChunk } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import { badRow } from './unit-rows';
import type { LazyRows, RowChunk, Segment } from './vector-segment';

/** Values per row in the table: message hash, chunk index, conversation, capture time, message number. */
export const TABLE = 5;

export const WHOLE = Buffer.from('LLMVEC01', 'latin1');
const LAZY = Buffer.from('LLMVEC02', 'latin1');
export const LISTED = Buffer.from('LLMVEC03', 'latin1');
export const LITTLE_ENDIAN = endianness() === 'LE';

/** The hash a segment's table keeps of a row's message ID. */
export const messageHash = (messageId: string) => fnv1a32(messageId);

type Fail = (detail: string) => never;

/** Checks of a segment of another kind (a cell tier's bucket): its header, and its rows' tags if stored. */
type Extra = (
	header: Record<string, unknown>,
	count: number,
	fail: Fail,
	tags?: Uint32Array,
) => void;

const isWhole = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** The header (after the magic, whose length every form shares) and where the rows start, checked. */
function headerOf(buf: Buffer, fail: Fail) {
	const start = WHOLE.length + 4 + buf.readUInt32LE(WHOLE.length);
	if (start > buf.length) fail('its header is cut short');
	let header: Record<string, unknown>;
	try {
		header = JSON.parse(buf.subarray(WHOLE.length + 4, start).toString('utf8'));
	} catch {
		return fail('its header is not JSON');
	}
	if (typeof header !== 'object' || header === null) fail('its header is not an object');
	const { dimensions, count } = header;
	if (!Number.isSafeInteger(dimensions) || (dimensions as number) < 1) fail('bad dimensions');
	// A cell bucket may be empty (a cell split among buckets, a range of cells no row fell in).
	if (!isWhole(count) || (count === 0 && header.kind !== 'cells')) fail('bad chunk count');
	return {
		header,
		dims: dimensions as number,
		n: count as number,
		at: start + ((4 - (start % 4)) % 4),
	};
}

/** The Float32 rows at `at` (a view where aligned), each checked to be a unit row or zeros. */
function rowsAt(buf: Buffer, at: number, n: number, dims: number, fail: Fail) {
	const floats = n * dims;
	let vectors: Float32Array;
	if (LITTLE_ENDIAN && (buf.byteOffset + at) % 4 === 0)
		vectors = new Float32Array(buf.buffer, buf.byteOffset + at, floats);
	else {
		vectors = new Float32Array(floats);
		for (let i = 0; i < floats; i++) vectors[i] = buf.readFloatLE(at + 4 * i);
	}
	const bad = badRow(vectors, dims);
	if (bad >= 0) fail(`row ${bad} is not a unit vector of finite numbers`);
	return vectors;
}

/** A list of non-empty texts in a header, or `fail`. */
function textsOf(value: unknown, what: string, fail: Fail): string[] {
	if (!Array.isArray(value) || value.some((t) => typeof t !== 'string' || t === ''))
		return fail(`${what}: not a list of texts`);
	return value as string[];
}

/** The table of a segment in blocks, checked: every number it gives a row names an entry of its lists. */
function tableOf(buf: Buffer, at: number, n: number, lists: Texts[], fail: Fail) {
	const cols = Array.from({ length: TABLE }, (_, j) => u32Of(buf, at + 4 * j * n, n));
	const [messages, chunkIndexes, sessions, times, seqs] = cols;
	for (let r = 0; r < n; r++)
		if (sessions[r] >= lists[0].length || times[r] >= lists[1].length)
			fail(`row ${r} names a conversation or capture time its header does not list`);
	return { messages, chunkIndexes, sessions, times, seqs };
}

/** What orders a row among rows alike, from the table; its ID and chunk from its block when asked for. */
class RowKey implements RowChunk {
	constructor(
		readonly created_at: string,
		readonly session_id: string,
		readonly seq: number,
		readonly chunk_index: number,
		private readonly blocks: ChunkBlocks,
		private readonly at: number,
	) {}

	get id(): string {
		return this.blocks.at(this.at).id;
	}

	chunk(): IndexedChunk {
		return this.blocks.at(this.at);
	}
}

/** The table's columns of a segment in blocks, and the lists its numbers name. */
interface Table {
	messages: Uint32Array;
	chunkIndexes: Uint32Array;
	sessions: Uint32Array;
	times: Uint32Array;
	seqs: Uint32Array;
	sessionList: Texts;
	timeList: Texts;
}

/** Whether chunk `c` is the one the table lists at row `r`. */
const listedAt = (t: Table, c: IndexedChunk, r: number) =>
	c.chunk_index === t.chunkIndexes[r] &&
	c.seq === t.seqs[r] &&
	c.session_id === t.sessionList.at(t.sessions[r]) &&
	c.created_at === t.timeList.at(t.times[r]) &&
	messageHash(c.message_id) === t.messages[r];

/**
 * Rows `from` to `to` of a table, copied. Apart from blockAlone: a closure there that read `t` would
 * keep it, and its columns are views of the whole stored segment.
 */
function tableSlice(t: Table, from: number, to: number): Table {
	const rows = Array.from({ length: to - from }, (_, i) => from + i);
	return {
		messages: t.messages.slice(from, to),
		chunkIndexes: t.chunkIndexes.slice(from, to),
		seqs: t.seqs.slice(from, to),
		sessions: Uint32Array.from(rows, (_, i) => i),
		times: Uint32Array.from(rows, (_, i) => i),
		sessionList: textList(rows.map((row) => t.sessionList.at(t.sessions[row]))),
		timeList: textList(rows.map((row) => t.timeList.at(t.times[row]))),
	};
}

/**
 * Row `r`'s block of a segment in blocks on its own, numbered as in the segment: a copy of its stored
 * bytes and of its rows' table, so what a search keeps of it does not hold the segment (a bucket of
 * the cell tiers is megabytes).
 */
function blockAlone(t: Table, bytes: Buffer, r: number, n: number, fail: Fail) {
	const from = Math.floor(r / BLOCK) * BLOCK;
	const own = tableSlice(t, from, Math.min(n, from + BLOCK));
	const copy = Buffer.from(bytes);
	return new ChunkBlocks({
		count: n,
		block: () => copy,
		listed: (c, i) => listedAt(own, c, i - from),
		field: 'chunks',
		fail,
	});
}

/** What a segment in blocks offers of its rows (all LazyRows but its weight): its table and blocks. */
function rowsOver(
	t: Table,
	blocks: ChunkBlocks,
	blockBytes: (b: number) => Buffer,
	fail: Fail,
): Omit<LazyRows, 'heap'> {
	const keyOf = (r: number, of: ChunkBlocks) =>
		new RowKey(
			t.timeList.at(t.times[r]),
			t.sessionList.at(t.sessions[r]),
			t.seqs[r],
			t.chunkIndexes[r],
			of,
			r,
		);
	return {
		at: (r) => blocks.at(r),
		block: (b) => blocks.read(b),
		key: (r) => keyOf(r, blocks),
		detach: (rows) => {
			// Copies only, cached segment or not: a reference to the segment, even one weakly held, keeps
			// a bucket of megabytes until a full collection, and a search reads dozens.
			const alone = new Map<number, ChunkBlocks>();
			return rows.map((r) => {
				const b = Math.floor(r / BLOCK);
				let of = alone.get(b);
				if (!of) alone.set(b, (of = blockAlone(t, blockBytes(b), r, blocks.count, fail)));
				return keyOf(r, of);
			});
		},
		messages: t.messages,
		chunkIndexes: t.chunkIndexes,
	};
}

/** A count of texts in a header: a whole number, at most the rows (a table names no more). */
function countOf(value: unknown, n: number, fail: Fail): number {
	if (!isWhole(value) || value > n) fail('texts: not the counts of its lists');
	return value as number;
}

/**
 * The texts a segment's table numbers and its rows' tags, from `after` (the table's end): stored
 * after the table (LLMVEC03), or in the header (LLMVEC02). Returns where the blocks start.
 */
function listsOf(
	buf: Buffer,
	header: Record<string, unknown>,
	n: number,
	after: number,
	fail: Fail,
	listed: boolean,
) {
	if (!listed) {
		const sessions = textList(textsOf(header.sessions, 'sessions', fail));
		return { sessions, times: textList(textsOf(header.times, 'times', fail)), blocksAt: after };
	}
	const counts = header.texts;
	if (!Array.isArray(counts) || counts.length !== 2) fail('texts: not the counts of its lists');
	const sessions = textsAt(buf, after, countOf(counts[0], n, fail), fail);
	const times = textsAt(buf, sessions.end, countOf(counts[1], n, fail), fail);
	if (header.tags === undefined)
		return { sessions: sessions.texts, times: times.texts, blocksAt: times.end };
	if (header.tags !== true) fail('tags: not true');
	if (times.end + 4 * n > buf.length) fail('its tags are cut short');
	const tags = u32Of(buf, times.end, n);
	return { sessions: sessions.texts, times: times.texts, tags, blocksAt: times.end + 4 * n };
}

/** A segment in blocks: rows and table decoded now, each block when one of its chunks is asked for. */
function decodeLazy(key: string, buf: Buffer, fail: Fail, listed: boolean, extra?: Extra): Segment {
	const { header, dims, n, at } = headerOf(buf, fail);
	const { parts, heap } = header;
	if (!Array.isArray(parts) || parts.length !== blockCount(n) || !parts.every(isWhole))
		fail(`parts: not ${blockCount(n)} sizes`);
	if (!isWhole(heap)) fail('heap: not a whole number');
	const tableAt = at + 4 * n * dims;
	if (tableAt + 4 * TABLE * n > buf.length) fail('its table is cut short');
	const lists = listsOf(buf, header, n, tableAt + 4 * TABLE * n, fail, listed);
	extra?.(header, n, fail, lists.tags);
	const offsets = [lists.blocksAt];
	for (const p of parts as number[]) offsets.push(offsets.at(-1)! + p);
	if (offsets.at(-1) !== buf.length) fail(`${buf.length} bytes, its header says ${offsets.at(-1)}`);
	const vectors = rowsAt(buf, at, n, dims, fail);
	const t: Table = {
		...tableOf(buf, tableAt, n, [lists.sessions, lists.times], fail),
		sessionList: lists.sessions,
		timeList: lists.times,
	};
	const blockBytes = (b: number) => buf.subarray(offsets[b], offsets[b + 1]);
	const blocks = new ChunkBlocks({
		count: n,
		block: blockBytes,
		listed: (c, r) => listedAt(t, c, r),
		field: 'chunks',
		fail,
	});
	const stored = offsets.at(-1)! - offsets[0];
	// The table's columns and lists stay in memory beside what the blocks decode to.
	const kept = 4 * TABLE * n + lists.sessions.heap + lists.times.heap;
	const lazy: LazyRows = {
		...rowsOver(t, blocks, blockBytes, fail),
		// As if decoded (the cache's weight), within bounds a damaged header cannot push it past.
		heap: kept + Math.min(Math.max(heap as number, 3 * stored), 64 * stored),
	};
	let all: IndexedChunk[] | undefined;
	const seg = { key, dimensions: dims, vectors, bytes: buf.length, lazy } as Segment;
	Object.defineProperty(seg, 'chunks', { enumerable: true, get: () => (all ??= blocks.all()) });
	return seg;
}

/** A segment in the form from before blocks: every chunk parsed and checked now. */
function decodeWhole(key: string, buf: Buffer, fail: Fail, extra?: Extra): Segment {
	const { header, dims, n, at } = headerOf(buf, fail);
	extra?.(header, n, fail);
	const { chunks } = header;
	if (!Array.isArray(chunks) || chunks.length !== n) fail('bad chunk list');
	(chunks as unknown[]).forEach((c, i) => {
		const bad = badChunk(c);
		if (bad) fail(`chunks.${i}.${bad}: not valid`);
	});
	if (buf.length - at !== 4 * n * dims)
		fail(`${buf.length - at} bytes of vectors, expected ${4 * n * dims}`);
	const vectors = rowsAt(buf, at, n, dims, fail);
	return { key, dimensions: dims, chunks: chunks as IndexedChunk[], vectors, bytes: buf.length };
}

/**
 * Decodes a stored segment of either form; anything inconsistent is a CorruptDocumentError naming its
 * key (for a block, when one of its chunks is first asked for). `extra` checks the header's other
 * fields (a cell tier's bucket), and may call `fail`.
 */
export function decodeSegment(key: string, bytes: Uint8Array, extra?: Extra): Segment {
	const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	const fail = (detail: string): never => {
		throw new CorruptDocumentError(key, detail);
	};
	if (buf.length < WHOLE.length + 4) return fail('not a vector segment');
	const magic = buf.subarray(0, WHOLE.length);
	if (magic.equals(LISTED)) return decodeLazy(key, buf, fail, true, extra);
	if (magic.equals(LAZY)) return decodeLazy(key, buf, fail, false, extra);
	if (magic.equals(WHOLE)) return decodeWhole(key, buf, fail, extra);
	return fail('not a vector segment');
}
