// Segments as stored in blocks (src/indexes/lexical/stored-segment.ts, src/indexes/vector/
// stored-vectors.ts), opened for tests: every part expanded for byte scans, and edited part by part as
// someone altering storage would, without the checks the engine's reader makes.
import { gunzipSync, gzipSync } from 'node:zlib';

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

export function openSegment(body: Uint8Array): OpenedSegment {
	const buf = Buffer.from(body);
	const start = MAGIC.length + 4 + buf.readUInt32LE(MAGIC.length);
	const header = JSON.parse(buf.subarray(MAGIC.length + 4, start).toString('utf8'));
	const rowsAt = start + ((4 - (start % 4)) % 4);
	const table = Array.from({ length: 3 * header.count }, (_, i) =>
		buf.readUInt32LE(rowsAt + 4 * i),
	);
	let at = rowsAt + 12 * header.count;
	const parts = (header.parts as number[]).map((n) => {
		const part = JSON.parse(gunzipSync(buf.subarray(at, at + n)).toString('utf8'));
		at += n;
		return part;
	});
	return { header, table, postings: parts[0], blocks: parts.slice(1) };
}

/** Writes an opened segment back as it stands (parts' sizes recomputed, nothing else). */
export function closeSegment(s: OpenedSegment): Buffer {
	const parts = [s.postings, ...s.blocks].map((p) => gzipSync(Buffer.from(JSON.stringify(p))));
	const header = Buffer.from(JSON.stringify({ ...s.header, parts: parts.map((p) => p.length) }));
	const start = MAGIC.length + 4 + header.length;
	const lead = Buffer.alloc(start + ((4 - (start % 4)) % 4));
	MAGIC.copy(lead, 0);
	lead.writeUInt32LE(header.length, MAGIC.length);
	header.copy(lead, MAGIC.length + 4);
	const rows = Buffer.alloc(4 * s.table.length);
	s.table.forEach((v, i) => rows.writeUInt32LE(v >>> 0, 4 * i));
	return Buffer.concat([lead, rows, ...parts]);
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
	const start = VECTORS.length + 4 + buf.readUInt32LE(VECTORS.length);
	const header = JSON.parse(buf.subarray(VECTORS.length + 4, start).toString('utf8'));
	const rowsAt = start + ((4 - (start % 4)) % 4);
	const tableAt = rowsAt + 4 * header.count * header.dimensions;
	const table = Array.from({ length: VECTOR_TABLE * header.count }, (_, i) =>
		buf.readUInt32LE(tableAt + 4 * i),
	);
	let at = tableAt + 4 * VECTOR_TABLE * header.count;
	const blocks = (header.parts as number[]).map((n) => {
		const part = JSON.parse(gunzipSync(buf.subarray(at, at + n)).toString('utf8'));
		at += n;
		return part;
	});
	return { header, rows: buf.subarray(rowsAt, tableAt), table, blocks };
}

/**
 * Writes an opened vector segment back as it stands (parts' sizes recomputed, unless `said` gives the
 * sizes its header is to say).
 */
export function closeVectors(s: OpenedVectors, said: { parts?: number[] } = {}): Buffer {
	const parts = s.blocks.map((p) => gzipSync(Buffer.from(JSON.stringify(p))));
	const sizes = said.parts ?? parts.map((p) => p.length);
	const header = Buffer.from(JSON.stringify({ ...s.header, parts: sizes }));
	const start = VECTORS.length + 4 + header.length;
	const lead = Buffer.alloc(start + ((4 - (start % 4)) % 4));
	VECTORS.copy(lead, 0);
	lead.writeUInt32LE(header.length, VECTORS.length);
	header.copy(lead, VECTORS.length + 4);
	const table = Buffer.alloc(4 * s.table.length);
	s.table.forEach((v, i) => table.writeUInt32LE(v >>> 0, 4 * i));
	return Buffer.concat([lead, s.rows, table, ...parts]);
}

/**
 * A stored object's bytes as a byte scan must see them: gzip opened, and a segment in blocks with every
 * part opened (its header and table as they are).
 */
export function expanded(body: Uint8Array): Buffer {
	const buf = Buffer.from(body);
	if (buf[0] === 0x1f && buf[1] === 0x8b) return gunzipSync(buf);
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
