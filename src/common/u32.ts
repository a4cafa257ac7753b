// Little-endian 32-bit numbers in stored bytes (the tables and rows of the indexes' stored forms), read
// as typed arrays at once: a loop of readUInt32LE over a bucket's table took a share of a search.
import { endianness } from 'node:os';

const LITTLE_ENDIAN = endianness() === 'LE';

/** The bytes of `values` as stored (little-endian): a view of them on a little-endian machine. */
export function u32Bytes(values: Uint32Array): Buffer {
	if (LITTLE_ENDIAN) return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
	const out = Buffer.alloc(values.byteLength);
	values.forEach((v, i) => out.writeUInt32LE(v, 4 * i));
	return out;
}

/** The `count` little-endian u32 values of `raw` from `at`: a view where aligned, else a copy. */
export function u32Of(raw: Buffer, at: number, count: number): Uint32Array {
	if (LITTLE_ENDIAN) {
		if ((raw.byteOffset + at) % 4 === 0)
			return new Uint32Array(raw.buffer, raw.byteOffset + at, count);
		const copy = Uint8Array.prototype.slice.call(raw, at, at + 4 * count);
		return new Uint32Array(copy.buffer, 0, count);
	}
	const out = new Uint32Array(count);
	for (let i = 0; i < count; i++) out[i] = raw.readUInt32LE(at + 4 * i);
	return out;
}
