// The stored form of a timed tier's word buckets: the terms, their row counts and their blocks' sizes
// in a small JSON header, then each term's rows in blocks of BLOCK_ROWS, each compressed on its own,
// its values column by column, the ordered ones (segment, document, capture second) as differences
// from the row before. A common word's 1.2 million rows take 2.6 MB this way (6.5 MB gzipped whole as u32),
// and a search decodes one block at a time (postings.ts) instead of holding them all decoded.
//
//   "LLMTRM02" | u32 header length | header JSON { terms, counts, width, block, sizes } | blocks
//
// Buckets written before are read too: gzip( "LLMTRM01" | u32 header length | header JSON
// { terms, counts } | padding to 4 | u32 rows ), decoded whole.
import { endianness } from 'node:os';
import { deflateRawSync, gunzipSync, inflateRawSync } from 'node:zlib';

import { isRecord } from '../chunks/chunk';
import { heldPostings } from './postings';
import type { Postings } from './postings';

const WHOLE = Buffer.from('LLMTRM01', 'latin1');
const BLOCKED = Buffer.from('LLMTRM02', 'latin1');
const LITTLE_ENDIAN = endianness() === 'LE';

/** Rows per block: 80 KB decoded at five values a row. */
export const BLOCK_ROWS = 4096;

type Fail = (detail: string) => never;

const u32Bytes = (rows: Uint32Array): Buffer => {
	if (LITTLE_ENDIAN) return Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength);
	const out = Buffer.alloc(rows.byteLength);
	rows.forEach((v, i) => out.writeUInt32LE(v, 4 * i));
	return out;
};

/** The little-endian u32 values of `raw` from `at` (a view when aligned, else a copy). */
function u32Of(raw: Buffer, at: number, count: number): Uint32Array {
	if (LITTLE_ENDIAN && (raw.byteOffset + at) % 4 === 0)
		return new Uint32Array(raw.buffer, raw.byteOffset + at, count);
	const out = new Uint32Array(count);
	for (let i = 0; i < count; i++) out[i] = raw.readUInt32LE(at + 4 * i);
	return out;
}

/** Whether column `j` is stored as differences: the values rows are ordered by, and capture seconds. */
const isDelta = (j: number) => j < 2 || j >= 4;

function packBlock(rows: Uint32Array, width: number): Buffer {
	const n = rows.length / width;
	const cols = new Uint32Array(rows.length);
	for (let j = 0; j < width; j++) {
		let before = 0;
		for (let i = 0; i < n; i++) {
			const v = rows[i * width + j];
			cols[j * n + i] = isDelta(j) ? (v - before) >>> 0 : v;
			before = v;
		}
	}
	return deflateRawSync(u32Bytes(cols));
}

function unpackBlock(bytes: Uint8Array, n: number, width: number, fail: Fail): Uint32Array {
	let raw: Buffer;
	try {
		// Never more than the block's rows, whatever a damaged block says.
		raw = inflateRawSync(bytes, { maxOutputLength: 4 * n * width });
	} catch {
		return fail('a block of rows is damaged');
	}
	if (raw.length !== 4 * n * width)
		fail(`a block of ${raw.length} bytes, ${4 * n * width} expected`);
	const cols = u32Of(raw, 0, n * width);
	const out = new Uint32Array(n * width);
	for (let j = 0; j < width; j++) {
		let before = 0;
		for (let i = 0; i < n; i++) {
			const v = isDelta(j) ? (before + cols[j * n + i]) >>> 0 : cols[j * n + i];
			out[i * width + j] = v;
			before = v;
		}
	}
	return out;
}

/** These terms' rows (`width` values each) in the blocked form. */
export function encodeRows(
	bucket: ReadonlyMap<string, Uint32Array>,
	width: number,
	block = BLOCK_ROWS,
): Buffer {
	const terms = [...bucket.keys()];
	const parts: Buffer[] = [];
	const sizes = terms.map((t) => {
		const rows = bucket.get(t)!;
		const out: number[] = [];
		for (let at = 0; at < rows.length; at += block * width) {
			const packed = packBlock(rows.subarray(at, at + block * width), width);
			parts.push(packed);
			out.push(packed.length);
		}
		return out;
	});
	const counts = terms.map((t) => bucket.get(t)!.length);
	const header = Buffer.from(JSON.stringify({ terms, counts, width, block, sizes }), 'utf8');
	const lead = Buffer.alloc(BLOCKED.length + 4);
	BLOCKED.copy(lead, 0);
	lead.writeUInt32LE(header.length, BLOCKED.length);
	return Buffer.concat([lead, header, ...parts]);
}

const whole = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;

/** The header after a magic: the parsed JSON and where it ends. */
function headerOf(raw: Buffer, fail: Fail): { header: Record<string, unknown>; end: number } {
	const end = BLOCKED.length + 4 + raw.readUInt32LE(BLOCKED.length);
	if (end > raw.length) fail('its header is cut short');
	let header: unknown;
	try {
		header = JSON.parse(raw.subarray(BLOCKED.length + 4, end).toString('utf8'));
	} catch {
		fail('its header is not JSON');
	}
	if (!isRecord(header)) return fail('its header is not an object');
	const { terms, counts } = header;
	if (!Array.isArray(terms) || terms.some((t) => typeof t !== 'string' || t === ''))
		fail('terms: not a list of words');
	if (new Set(terms as string[]).size !== (terms as string[]).length)
		fail('a term is listed twice');
	if (
		!Array.isArray(counts) ||
		counts.length !== (terms as string[]).length ||
		!counts.every(whole)
	)
		fail('counts: not a count for each word');
	return { header, end };
}

/** A term's blocks, decoded as a walk reaches them. */
function blockedPostings(
	body: Buffer,
	count: number,
	sizes: number[],
	shape: { width: number; block: number },
	fail: Fail,
): Postings {
	return {
		length: count,
		bytes: body.byteLength,
		held: false,
		*blocks() {
			let at = 0;
			let left = count / shape.width;
			for (const size of sizes) {
				const n = Math.min(left, shape.block);
				yield unpackBlock(body.subarray(at, (at += size)), n, shape.width, fail);
				left -= n;
			}
		},
	};
}

/** A blocked bucket: its header checked, each term's blocks left compressed. */
function decodeBlocked(raw: Buffer, fail: Fail): Map<string, Postings> {
	const { header, end } = headerOf(raw, fail);
	const terms = header.terms as string[];
	const counts = header.counts as number[];
	const { width, block, sizes } = header;
	if (!whole(width) || !whole(block)) return fail('width, block: not whole numbers');
	if (!Array.isArray(sizes) || sizes.length !== terms.length) fail('sizes: not one list per word');
	const out = new Map<string, Postings>();
	let at = end;
	terms.forEach((t, i) => {
		const own = (sizes as unknown[])[i];
		const rows = counts[i] / width;
		if (!Number.isInteger(rows)) fail(`postings of "${t}" are not whole rows`);
		if (!Array.isArray(own) || own.length !== Math.ceil(rows / block) || !own.every(whole))
			fail(`sizes of "${t}": not one size for each block`);
		const bytes = (own as number[]).reduce((a, b) => a + b, 0);
		if (at + bytes > raw.length) fail(`blocks of "${t}" are cut short`);
		const body = raw.subarray(at, (at += bytes));
		out.set(t, blockedPostings(body, counts[i], own as number[], { width, block }, fail));
	});
	if (at !== raw.length) fail(`${raw.length - at} bytes after the last block`);
	return out;
}

/** A bucket written whole (gzipped u32 rows), decoded at once. */
function decodeWhole(bytes: Uint8Array, fail: Fail): Map<string, Postings> {
	let raw: Buffer;
	try {
		raw = gunzipSync(bytes);
	} catch {
		return fail('gzip data is damaged');
	}
	if (raw.length < WHOLE.length + 4 || !raw.subarray(0, WHOLE.length).equals(WHOLE))
		fail('not a bucket of rows');
	const { header, end } = headerOf(raw, fail);
	const counts = header.counts as number[];
	const at = end + ((4 - (end % 4)) % 4);
	const total = counts.reduce((a, b) => a + b, 0);
	if (raw.length - at !== 4 * total)
		fail(`${raw.length - at} bytes of rows, its header says ${4 * total}`);
	const all = u32Of(raw, at, total);
	const out = new Map<string, Postings>();
	let from = 0;
	(header.terms as string[]).forEach((t, i) => {
		out.set(t, heldPostings(all.subarray(from, (from += counts[i]))));
	});
	return out;
}

/** The terms' rows of a bucket in a binary form, or `fail` saying what is wrong. */
export function decodeRows(bytes: Uint8Array, fail: Fail): Map<string, Postings> {
	const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	if (raw.length >= BLOCKED.length + 4 && raw.subarray(0, BLOCKED.length).equals(BLOCKED))
		return decodeBlocked(raw, fail);
	return decodeWhole(bytes, fail);
}
