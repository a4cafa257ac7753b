// The stored form of a timed tier's word buckets: the terms and their row counts in a small JSON
// header, then every term's rows as little-endian u32, gzipped whole. A common word's postings run to
// a million rows at 100,000 users, and as base64 inside JSON they took three times as long to decode
// and passed through two strings as large as the rows.
//
//   gzip( "LLMTRM01" | u32 header length | header JSON { terms, counts } | padding to 4 | u32 rows )
import { endianness } from 'node:os';
import { gunzipSync, gzipSync } from 'node:zlib';

import { isRecord } from '../chunks/chunk';

const MAGIC = Buffer.from('LLMTRM01', 'latin1');
const LITTLE_ENDIAN = endianness() === 'LE';

const u32Bytes = (rows: Uint32Array): Buffer => {
	if (LITTLE_ENDIAN) return Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength);
	const out = Buffer.alloc(rows.byteLength);
	rows.forEach((v, i) => out.writeUInt32LE(v, 4 * i));
	return out;
};

/** These terms' rows in the binary form. */
export function encodeRows(bucket: ReadonlyMap<string, Uint32Array>): Buffer {
	const terms = [...bucket.keys()];
	const header = Buffer.from(
		JSON.stringify({ terms, counts: terms.map((t) => bucket.get(t)!.length) }),
		'utf8',
	);
	const start = MAGIC.length + 4 + header.length;
	const lead = Buffer.alloc(start + ((4 - (start % 4)) % 4));
	MAGIC.copy(lead, 0);
	lead.writeUInt32LE(header.length, MAGIC.length);
	header.copy(lead, MAGIC.length + 4);
	return gzipSync(Buffer.concat([lead, ...terms.map((t) => u32Bytes(bucket.get(t)!))]));
}

const whole = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;

/** The terms' rows of a bucket in the binary form (views of one block), or `fail` saying what is wrong. */
export function decodeRows(
	bytes: Uint8Array,
	fail: (detail: string) => never,
): Map<string, Uint32Array> {
	let raw: Buffer;
	try {
		raw = gunzipSync(bytes);
	} catch {
		return fail('gzip data is damaged');
	}
	if (raw.length < MAGIC.length + 4 || !raw.subarray(0, MAGIC.length).equals(MAGIC))
		fail('not a bucket of rows');
	const start = MAGIC.length + 4 + raw.readUInt32LE(MAGIC.length);
	if (start > raw.length) fail('its header is cut short');
	let header: unknown;
	try {
		header = JSON.parse(raw.subarray(MAGIC.length + 4, start).toString('utf8'));
	} catch {
		fail('its header is not JSON');
	}
	if (!isRecord(header)) return fail('its header is not an object');
	const { terms, counts } = header;
	if (!Array.isArray(terms) || terms.some((t) => typeof t !== 'string' || t === ''))
		fail('terms: not a list of words');
	if (
		!Array.isArray(counts) ||
		counts.length !== (terms as string[]).length ||
		!counts.every(whole)
	)
		fail('counts: not a count for each word');
	const at = start + ((4 - (start % 4)) % 4);
	const total = (counts as number[]).reduce((a, b) => a + b, 0);
	if (raw.length - at !== 4 * total)
		fail(`${raw.length - at} bytes of rows, its header says ${4 * total}`);
	let all: Uint32Array;
	if (LITTLE_ENDIAN && (raw.byteOffset + at) % 4 === 0)
		all = new Uint32Array(raw.buffer, raw.byteOffset + at, total);
	else {
		all = new Uint32Array(total);
		for (let i = 0; i < total; i++) all[i] = raw.readUInt32LE(at + 4 * i);
	}
	const out = new Map<string, Uint32Array>();
	let from = 0;
	(terms as string[]).forEach((t, i) => {
		if (out.has(t)) fail(`"${t}" is listed twice`);
		out.set(t, all.subarray(from, (from += (counts as number[])[i])));
	});
	return out;
}
