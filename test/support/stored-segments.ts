// Segments as stored in blocks (src/indexes/lexical/stored-segment.ts, src/indexes/vector/
// stored-vectors.ts), opened for tests: every part expanded for byte scans, and edited part by part as
// someone altering storage would, without the checks the engine's reader makes.
import { gunzipSync, gzipSync, inflateRawSync } from 'node:zlib';

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

/** Magic, header (its parts' sizes those given) padded to 4 bytes, then u32 values and the parts gzipped. */
function written(
	magic: Buffer,
	header: Record<string, unknown>,
	middle: Buffer[],
	table: number[],
	parts: unknown[],
	sizes?: number[],
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
	return Buffer.concat([lead, ...middle, values, ...gz]);
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

const VECTORS = Buffer.from('LLMVEC02', 'latin1');

export const isVectorBlocks = (body: Uint8Array) =>
	body.length >= VECTORS.length && Buffer.from(body.subarray(0, VECTORS.length)).equals(VECTORS);

/** Values per row in a vector segment's table (see stored-vectors.ts). */
const VECTOR_TABLE = 5;

/**
 * A vector segment in blocks, taken apart: its header, rows, table (message hashes, chunk indexes,
 * conversations, capture times, message numbers: each a column) and blocks.
 */
export interface OpenedVectors {
	header: {
		dimensions: number;
		count: number;
		parts: number[];
		heap: number;
		[k: string]: unknown;
	};
	rows: Buffer;
	table: number[];
	blocks: Array<Array<Record<string, unknown>>>;
}

export function openVectors(body: Uint8Array): OpenedVectors {
	const buf = Buffer.from(body);
	const { header, at } = leadOf(VECTORS, buf);
	const tableAt = at + 4 * header.count * header.dimensions;
	const table = u32s(buf, tableAt, VECTOR_TABLE * header.count);
	const blocks = partsAt(buf, tableAt + 4 * VECTOR_TABLE * header.count, header.parts);
	return {
		header,
		rows: buf.subarray(at, tableAt),
		table,
		blocks: blocks as OpenedVectors['blocks'],
	};
}

/**
 * Writes an opened vector segment back as it stands (parts' sizes recomputed, unless `said` gives the
 * sizes its header is to say).
 */
export function closeVectors(s: OpenedVectors, said: { parts?: number[] } = {}): Buffer {
	return written(VECTORS, s.header, [s.rows], s.table, s.blocks, said.parts);
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
