// The stored form of a tier's buckets in binary (every bucket of a tier built now): the terms (words
// or conversation IDs), their row counts and their blocks' sizes in a deflated JSON header; then the
// rows of the terms in at most BLOCK_ROWS documents, compressed together (decoded when the bucket is
// read, as most terms are rare); then each longer list in blocks of BLOCK_ROWS rows, each compressed on
// its own, its values column by column, the ordered ones (segment, document, capture second) as
// differences from the row before. A common word's 1.2 million rows take 2.6 MB this way (6.5 MB
// gzipped whole as u32), and a search decodes one block at a time (postings.ts) instead of holding
// them all decoded.
//
//   "LLMTRM02" | u32 header length | deflate(header JSON { terms, counts, width, block, short, sizes })
//   | deflate(u32 rows of the short lists) | blocks of the long lists
//
// Buckets written before are read too: gzip( "LLMTRM01" | u32 header length | header JSON
// { terms, counts } | padding to 4 | u32 rows ), decoded whole.
import { deflateRawSync, gunzipSync, inflateRawSync } from 'node:zlib';

import { u32Bytes, u32Of } from '../../common/u32';
import { isRecord } from '../chunks/chunk';
import { heldPostings, joinRows, postingsOf } from './postings';
import type { Postings, Rows } from './postings';

const WHOLE = Buffer.from('LLMTRM01', 'latin1');
const BLOCKED = Buffer.from('LLMTRM02', 'latin1');

/** Rows per block: 80 KB decoded at five values a row. */
export const BLOCK_ROWS = 4096;

type Fail = (detail: string) => never;

/** Whether column `j` is stored as differences: the values rows are ordered by, and capture seconds. */
const isDelta = (j: number) => j < 2 || j >= 4;

/** Rows in blocks of `size` values (the last one shorter), however the blocks given are cut. */
function* reblocked(blocks: Iterable<Uint32Array>, size: number): Generator<Uint32Array> {
	let buf = new Uint32Array(size);
	let at = 0;
	for (const rows of blocks) {
		if (at === 0 && rows.length === size) {
			yield rows;
			continue;
		}
		for (let i = 0; i < rows.length;) {
			const n = Math.min(size - at, rows.length - i);
			buf.set(rows.subarray(i, i + n), at);
			at += n;
			i += n;
			if (at === size) {
				yield buf;
				buf = new Uint32Array(size);
				at = 0;
			}
		}
	}
	if (at > 0) yield buf.subarray(0, at);
}

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
	const cols = inflated(bytes, n * width, fail);
	const out = new Uint32Array(n * width);
	for (let j = 0; j < width; j++) {
		const from = j * n;
		if (isDelta(j)) {
			let v = 0;
			for (let i = 0; i < n; i++) out[i * width + j] = v = (v + cols[from + i]) >>> 0;
		} else for (let i = 0; i < n; i++) out[i * width + j] = cols[from + i];
	}
	return out;
}

/** `count` u32 values deflated; never more, whatever damaged bytes say. */
function inflated(bytes: Uint8Array, count: number, fail: Fail): Uint32Array {
	let raw: Buffer;
	try {
		raw = inflateRawSync(bytes, { maxOutputLength: Math.max(1, 4 * count) });
	} catch {
		return fail('a block of rows is damaged');
	}
	if (raw.length !== 4 * count) fail(`a block of ${raw.length} bytes, ${4 * count} expected`);
	return u32Of(raw, 0, count);
}

/** These terms' rows (`width` values each) in the blocked form; a long list is walked a block at a time. */
export function encodeRows(
	bucket: ReadonlyMap<string, Rows>,
	width: number,
	block = BLOCK_ROWS,
): Buffer {
	const terms = [...bucket.keys()];
	const lists = terms.map((t) => postingsOf(bucket.get(t)!));
	const isLong = (p: Postings) => p.length > block * width;
	const short = deflateRawSync(
		u32Bytes(joinRows(lists.filter((p) => !isLong(p)).flatMap((p) => [...p.blocks()]))),
	);
	const parts: Buffer[] = [short];
	const sizes = lists.map((p, t) => {
		const out: number[] = [];
		if (!isLong(p)) return out;
		let values = 0;
		for (const rows of reblocked(p.blocks(), block * width)) {
			const packed = packBlock(rows, width);
			parts.push(packed);
			out.push(packed.length);
			values += rows.length;
		}
		if (values !== p.length)
			throw new Error(`rows of "${terms[t]}": ${values} values walked, ${p.length} expected`);
		return out;
	});
	const counts = lists.map((p) => p.length);
	// Deflated: a bucket of conversations lists thousands of conversation IDs.
	const header = deflateRawSync(
		Buffer.from(
			JSON.stringify({ terms, counts, width, block, short: short.length, sizes }),
			'utf8',
		),
	);
	const lead = Buffer.alloc(BLOCKED.length + 4);
	BLOCKED.copy(lead, 0);
	lead.writeUInt32LE(header.length, BLOCKED.length);
	return Buffer.concat([lead, header, ...parts]);
}

const whole = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;

/** Bytes a blocked bucket's header may take once inflated (a damaged one says more). */
const HEADER_BYTES = 64 * 2 ** 20;

/** The header after a magic (deflated in a blocked bucket): the parsed JSON and where it ends. */
function headerOf(
	raw: Buffer,
	fail: Fail,
	deflated: boolean,
): { header: Record<string, unknown>; end: number } {
	const end = BLOCKED.length + 4 + raw.readUInt32LE(BLOCKED.length);
	if (end > raw.length) fail('its header is cut short');
	let header: unknown;
	try {
		const bytes = raw.subarray(BLOCKED.length + 4, end);
		const text = deflated ? inflateRawSync(bytes, { maxOutputLength: HEADER_BYTES }) : bytes;
		header = JSON.parse(text.toString('utf8'));
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

/** A blocked bucket: its header checked, the short lists decoded, the long ones left in blocks. */
function decodeBlocked(raw: Buffer, fail: Fail, expected: number): Map<string, Postings> {
	const { header, end } = headerOf(raw, fail, true);
	const terms = header.terms as string[];
	const counts = header.counts as number[];
	const { width, block, short, sizes } = header;
	if (!whole(width) || !whole(block) || !whole(short))
		return fail('width, block, short: not whole numbers');
	if (width !== expected) fail(`rows of ${width} values, ${expected} expected`);
	if (!Array.isArray(sizes) || sizes.length !== terms.length) fail('sizes: not one list per word');
	const isLong = (count: number) => count > block * width;
	const inShort = counts.filter((c) => !isLong(c)).reduce((a, b) => a + b, 0);
	if (end + short > raw.length) fail('its short lists are cut short');
	const held = inflated(raw.subarray(end, end + short), inShort, fail);
	const out = new Map<string, Postings>();
	let [at, from] = [end + short, 0];
	terms.forEach((t, i) => {
		const own = (sizes as unknown[])[i];
		const rows = counts[i] / width;
		if (!Number.isInteger(rows)) fail(`postings of "${t}" are not whole rows`);
		const blocks = isLong(counts[i]) ? Math.ceil(rows / block) : 0;
		if (!Array.isArray(own) || own.length !== blocks || !own.every(whole))
			fail(`sizes of "${t}": not one size for each block`);
		if (!isLong(counts[i])) {
			out.set(t, heldPostings(held, from, (from += counts[i])));
			return;
		}
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
	const { header, end } = headerOf(raw, fail, false);
	const counts = header.counts as number[];
	const at = end + ((4 - (end % 4)) % 4);
	const total = counts.reduce((a, b) => a + b, 0);
	if (raw.length - at !== 4 * total)
		fail(`${raw.length - at} bytes of rows, its header says ${4 * total}`);
	const all = u32Of(raw, at, total);
	const out = new Map<string, Postings>();
	let from = 0;
	(header.terms as string[]).forEach((t, i) => {
		out.set(t, heldPostings(all, from, (from += counts[i])));
	});
	return out;
}

/**
 * The terms' rows of a bucket in a binary form, rows of `width` values (a blocked bucket that says
 * otherwise is refused), or `fail` saying what is wrong.
 */
export function decodeRows(bytes: Uint8Array, fail: Fail, width: number): Map<string, Postings> {
	const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	if (raw.length >= BLOCKED.length + 4 && raw.subarray(0, BLOCKED.length).equals(BLOCKED))
		return decodeBlocked(raw, fail, width);
	return decodeWhole(bytes, fail);
}
