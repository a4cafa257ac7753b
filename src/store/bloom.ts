import { createHash } from 'node:crypto';

import { BoundedCache } from '../common/bounded-cache';

/**
 * The fixed-size Bloom filter a sealed reference carries over the message IDs beneath it, so a lookup
 * by ID (an explicit old parent, a caller's message ID checked for duplicates) loads only the segments
 * that may hold it. Part of the stored format, so the hashing never changes: 1024 bits, 4 positions per
 * ID taken from SHA-256 of its UTF-8 bytes (big-endian 16-bit words 0–3, modulo 1024), stored base64.
 * A filter says "maybe" or "certainly not"; a missing filter means "maybe".
 */
export const BLOOM_BITS = 1024;
const BLOOM_BYTES = BLOOM_BITS / 8;
const HASHES = 4;
/** Filters fuller than this say "maybe" to most IDs: an index reference then carries none. */
const USEFUL_FILL = 0.7;

export type BloomPositions = readonly number[];

export function bloomPositions(id: string): BloomPositions {
	const digest = createHash('sha256').update(id, 'utf8').digest();
	const out: number[] = [];
	for (let i = 0; i < HASHES; i++) out.push(digest.readUInt16BE(2 * i) % BLOOM_BITS);
	return out;
}

/** The filter of a set of IDs. */
export function bloomOf(ids: Iterable<string>): string {
	const bits = Buffer.alloc(BLOOM_BYTES);
	for (const id of ids) for (const p of bloomPositions(id)) bits[p >> 3] |= 1 << (p & 7);
	return bits.toString('base64');
}

/** Decoded filters by their text: the same text always decodes to the same bits. */
const decoded = new BoundedCache<Buffer>({ name: 'bloom filters', maxEntries: 4096 });

function bitsOf(bloom: string): Buffer {
	return decoded.getOrSet(bloom, () => Buffer.from(bloom, 'base64'));
}

/** Whether a stored filter is well-formed (the reader refuses others). */
export function isBloom(value: string): boolean {
	return (
		/^[A-Za-z0-9+/]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === BLOOM_BYTES
	);
}

/** False only when no ID with these positions was added. A missing filter answers true. */
export function bloomMayHave(bloom: string | undefined, positions: BloomPositions): boolean {
	if (bloom === undefined) return true;
	const bits = bitsOf(bloom);
	for (const p of positions) if ((bits[p >> 3] & (1 << (p & 7))) === 0) return false;
	return true;
}

/** The union of filters (an index's over its children), or undefined when one is missing or the union says "maybe" too often. */
export function bloomUnion(blooms: readonly (string | undefined)[]): string | undefined {
	const out = Buffer.alloc(BLOOM_BYTES);
	for (const b of blooms) {
		if (b === undefined) return undefined;
		const bits = bitsOf(b);
		for (let i = 0; i < BLOOM_BYTES; i++) out[i] |= bits[i];
	}
	let set = 0;
	for (const byte of out) for (let v = byte; v; v &= v - 1) set++;
	return set / BLOOM_BITS > USEFUL_FILL ? undefined : out.toString('base64');
}
