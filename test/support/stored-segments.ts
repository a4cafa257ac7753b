// Segments as stored in blocks (src/indexes/lexical/stored-segment.ts, src/indexes/vector/
// stored-vectors.ts), opened for tests: every part expanded for byte scans, and edited part by part as
// someone altering storage would, without the checks the engine's reader makes.
import { gunzipSync, gzipSync, inflateRawSync } from 'node:zlib';

import { CorruptDocumentError } from '../../src/internal';
import type { IndexedChunk } from '../../src/internal';

const MAGIC = Buffer.from('LLMLEX02', 'latin1');

export const isBlocks = (body: Uint8Array) =>
	body.length >= MAGIC.length && Buffer.from(body.subarray(0, MAGIC.length)).equals(MAGIC);

/** A segment in blocks, taken apart: its header, table (lengths, conversations, message numbers) and parts. */
export interface OpenedSegment {
	header: {
		count: number;
		sessions: string[];
		parts: number[];
		heap: number;
		[k: string]: unknown;
	};
	table: number[];
	/** The postings part ({ terms }) and each block (a list of chunks), parsed. */
	postings: { terms: Record<string, number[]> };
	blocks: Array<Array<Record<string, unknown>>>;
}

/** The header of a stored form and where what follows it starts (padded to 4 bytes). */
function leadOf(magic: Buffer, buf: Buffer) {
	const start = magic.length + 4 + buf.readUInt32LE(magic.length);
	const header = JSON.parse(buf.subarray(magic.length + 4, start).toString('utf8'));
	return { header, at: start + ((4 - (start % 4)) % 4) };
}

/** `count` u32 values at `at`. */
const u32s = (buf: Buffer, at: number, count: number) =>
	Array.from({ length: count }, (_, i) => buf.readUInt32LE(at + 4 * i));

/** The gzipped JSON parts at `at`, of these sizes, parsed. */
function partsAt(buf: Buffer, at: number, sizes: number[]): unknown[] {
	return sizes.map((n) => {
		const part = JSON.parse(gunzipSync(buf.subarray(at, at + n)).toString('utf8'));
		at += n;
		return part;
	});
}

/**
 * Magic, header (its parts' sizes those given) padded to 4 bytes, `middle`, u32 values, `after`, then
 * the parts gzipped.
 */
function written(
	magic: Buffer,
	header: Record<string, unknown>,
	middle: Buffer[],
	table: number[],
	parts: unknown[],
	sizes?: number[],
	after: Buffer[] = [],
): Buffer {
	const gz = parts.map((p) => gzipSync(Buffer.from(JSON.stringify(p))));
	const text = Buffer.from(JSON.stringify({ ...header, parts: sizes ?? gz.map((p) => p.length) }));
	const start = magic.length + 4 + text.length;
	const lead = Buffer.alloc(start + ((4 - (start % 4)) % 4));
	magic.copy(lead, 0);
	lead.writeUInt32LE(text.length, magic.length);
	text.copy(lead, magic.length + 4);
	const values = Buffer.alloc(4 * table.length);
	table.forEach((v, i) => values.writeUInt32LE(v >>> 0, 4 * i));
	return Buffer.concat([lead, ...middle, values, ...after, ...gz]);
}

export function openSegment(body: Uint8Array): OpenedSegment {
	const buf = Buffer.from(body);
	const { header, at } = leadOf(MAGIC, buf);
	const table = u32s(buf, at, 3 * header.count);
	const parts = partsAt(buf, at + 12 * header.count, header.parts);
	return {
		header,
		table,
		postings: parts[0] as OpenedSegment['postings'],
		blocks: parts.slice(1) as OpenedSegment['blocks'],
	};
}

/** Writes an opened segment back as it stands (parts' sizes recomputed, nothing else). */
export function closeSegment(s: OpenedSegment): Buffer {
	return written(MAGIC, s.header, [], s.table, [s.postings, ...s.blocks]);
}

const VECTORS = Buffer.from('LLMVEC03', 'latin1');
/** The form before: the texts in the header. */
const HEADER_TEXTS = Buffer.from('LLMVEC02', 'latin1');

const formOf = (body: Uint8Array) => Buffer.from(body.subarray(0, VECTORS.length));

export const isVectorBlocks = (body: Uint8Array) =>
	formOf(body).equals(VECTORS) || formOf(body).equals(HEADER_TEXTS);

/** Values per row in a vector segment's table (see stored-vectors.ts). */
const VECTOR_TABLE = 5;

/**
 * A vector segment in blocks, taken apart: its header, rows, table (message hashes, chunk indexes,
 * conversations, capture times, message numbers: each a column), the texts the table numbers (the
 * conversations, then the capture times), its rows' tags if it has them, and its blocks.
 */
export interface OpenedVectors {
	header: {
		dimensions: number;
		count: number;
		parts: number[];
		heap: number;
		texts: [number, number];
		[k: string]: unknown;
	};
	rows: Buffer;
	table: number[];
	texts: [string[], string[]];
	tags?: number[];
	blocks: Array<Array<Record<string, unknown>>>;
}

/** `count` stored texts at `at` (common/stored-texts.ts), and where they end. */
function textsAt(buf: Buffer, at: number, count: number): { texts: string[]; end: number } {
	const offsets = u32s(buf, at, count + 1);
	const start = at + 4 * (count + 1);
	const texts = Array.from({ length: count }, (_, i) =>
		buf.toString('utf8', start + offsets[i], start + offsets[i + 1]),
	);
	const size = offsets[count];
	return { texts, end: start + size + ((4 - (size % 4)) % 4) };
}

/** Texts as stored: offsets, UTF-8, padding to 4 bytes. */
function storedTexts(texts: string[]): Buffer {
	const bytes = texts.map((t) => Buffer.from(t));
	const offsets = [0];
	for (const b of bytes) offsets.push(offsets.at(-1)! + b.length);
	const head = Buffer.alloc(4 * offsets.length);
	offsets.forEach((o, i) => head.writeUInt32LE(o, 4 * i));
	const size = offsets.at(-1)!;
	return Buffer.concat([head, ...bytes, Buffer.alloc((4 - (size % 4)) % 4)]);
}

export function openVectors(body: Uint8Array): OpenedVectors {
	const buf = Buffer.from(body);
	const { header, at } = leadOf(VECTORS, buf);
	const tableAt = at + 4 * header.count * header.dimensions;
	const table = u32s(buf, tableAt, VECTOR_TABLE * header.count);
	if (formOf(buf).equals(HEADER_TEXTS)) {
		const { sessions, times, ...rest } = header;
		return {
			header: { ...rest, texts: [sessions.length, times.length] },
			rows: buf.subarray(at, tableAt),
			table,
			texts: [sessions, times],
			blocks: partsAt(
				buf,
				tableAt + 4 * VECTOR_TABLE * header.count,
				header.parts,
			) as OpenedVectors['blocks'],
		};
	}
	const sessions = textsAt(buf, tableAt + 4 * VECTOR_TABLE * header.count, header.texts[0]);
	const times = textsAt(buf, sessions.end, header.texts[1]);
	const tags = header.tags ? u32s(buf, times.end, header.count) : undefined;
	const blocks = partsAt(buf, times.end + (tags ? 4 * header.count : 0), header.parts);
	return {
		header,
		rows: buf.subarray(at, tableAt),
		table,
		texts: [sessions.texts, times.texts],
		...(tags ? { tags } : {}),
		blocks: blocks as OpenedVectors['blocks'],
	};
}

/**
 * Writes an opened vector segment back as it stands (parts' sizes recomputed, unless `said` gives the
 * sizes its header is to say); `form` LLMVEC02 writes it as segments were stored before (the texts in
 * the header, and no tags).
 */
export function closeVectors(
	s: OpenedVectors,
	said: { parts?: number[]; form?: 'LLMVEC02' } = {},
): Buffer {
	if (said.form === 'LLMVEC02') {
		// The texts in the header instead of their counts; no tags.
		const header = { ...s.header, texts: undefined, tags: undefined };
		Object.assign(header, { sessions: s.texts[0], times: s.texts[1] });
		return written(
			Buffer.from(said.form, 'latin1'),
			header,
			[s.rows],
			s.table,
			s.blocks,
			said.parts,
		);
	}
	const after = [storedTexts(s.texts[0]), storedTexts(s.texts[1])];
	if (s.tags) {
		const tags = Buffer.alloc(4 * s.tags.length);
		s.tags.forEach((v, i) => tags.writeUInt32LE(v >>> 0, 4 * i));
		after.push(tags);
	}
	return written(VECTORS, s.header, [s.rows], s.table, s.blocks, said.parts, after);
}

/**
 * A stored object's bytes as a byte scan must see them: gzip opened, a segment in blocks with every
 * part opened (its header and table as they are), a term bucket's header inflated.
 */
export function expanded(body: Uint8Array): Buffer {
	const buf = Buffer.from(body);
	if (buf[0] === 0x1f && buf[1] === 0x8b) return gunzipSync(buf);
	// A term tier's bucket in blocks: its header (the words or conversation IDs) and its short lists.
	if (buf.subarray(0, 8).toString('latin1') === 'LLMTRM02') {
		const end = 12 + buf.readUInt32LE(8);
		const header = inflateRawSync(buf.subarray(12, end));
		const { short } = JSON.parse(header.toString()) as { short: number };
		return Buffer.concat([header, inflateRawSync(buf.subarray(end, end + short))]);
	}
	if (isVectorBlocks(buf)) {
		const v = openVectors(buf);
		return Buffer.concat([
			Buffer.from(JSON.stringify(v.header)),
			Buffer.from(JSON.stringify(v.texts)),
			v.rows,
			...v.blocks.map((b) => Buffer.from(JSON.stringify(b))),
		]);
	}
	if (!isBlocks(buf)) return buf;
	const s = openSegment(buf);
	return Buffer.concat([
		Buffer.from(JSON.stringify(s.header)),
		Buffer.from(JSON.stringify(s.postings)),
		...s.blocks.map((b) => Buffer.from(JSON.stringify(b))),
	]);
}

/** Matches a CorruptDocumentError naming `key` (and saying `detail`), for assert.throws. */
export const corruptNamed =
	(key: string, detail = '') =>
	(e: unknown) =>
		e instanceof CorruptDocumentError && e.message.includes(key) && e.message.includes(detail);

/**
 * Chunk `i` of a word segment in tests: of conversation chat-(i / 32) unless given, message number
 * i mod 32, about pricing (every seventh) or the weather, then `more` words.
 */
export const wordChunk = (i: number, session = `chat-${i >> 5}`, more = ''): IndexedChunk => ({
	id: `c-${i}`,
	session_id: session,
	user_id: `user-${i >> 5}`,
	message_id: `m-${i}`,
	seq: i % 32,
	run_id: 'r',
	chunk_index: 0,
	created_at: new Date(1e12 + i * 1000).toISOString(),
	text: `message ${i} about ${i % 7 === 0 ? 'pricing' : 'weather'} number w${i}${more}`,
});
