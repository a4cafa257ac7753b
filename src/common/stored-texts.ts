// Lists of texts stored as offsets and UTF-8 bytes, read one text at a time: a bucket of the cell tiers
// names thousands of conversations and capture times, and a search needs those of a few of its rows.
// Parsing them all as JSON, with the strings it made to collect, took about a third of reading one.
//
//   u32 LE × (count + 1): each text's start from the first, then the end | UTF-8 texts | padding to 4
import { u32Bytes, u32Of } from './u32';

/** A list of texts, each decoded when asked for. */
export interface Texts {
	readonly length: number;
	at(i: number): string;
	/** Memory it holds beyond what it was read from (texts read from a stored object: none). */
	readonly heap: number;
}

/** The heap a list of short texts takes, about (V8: a string's header and its characters, a slot). */
const heapOf = (texts: readonly string[]) => texts.reduce((n, t) => n + 32 + t.length, 0);

/** A list held as strings (one parsed from JSON), as Texts. */
export function textList(list: readonly string[]): Texts {
	return { length: list.length, at: (i) => list[i], heap: heapOf(list) };
}

/** The stored form of `texts` (none of them empty), padded to 4 bytes. */
export function encodeTexts(texts: readonly string[]): Buffer {
	const bytes = texts.map((t) => Buffer.from(t, 'utf8'));
	const offsets = new Uint32Array(texts.length + 1);
	bytes.forEach((b, i) => (offsets[i + 1] = offsets[i] + b.length));
	const size = offsets[texts.length];
	return Buffer.concat([u32Bytes(offsets), ...bytes, Buffer.alloc((4 - (size % 4)) % 4)]);
}

/**
 * The `count` texts stored at `at` in `buf`, checked (every text within the bytes, none empty), and
 * where what follows them starts; anything else calls `fail`.
 */
export function textsAt(
	buf: Buffer,
	at: number,
	count: number,
	fail: (detail: string) => never,
): { texts: Texts; end: number } {
	const start = at + 4 * (count + 1);
	if (start > buf.length) fail('its list of texts is cut short');
	const offsets = u32Of(buf, at, count + 1);
	if (offsets[0] !== 0) fail('its list of texts does not start at its first text');
	for (let i = 0; i < count; i++)
		if (offsets[i + 1] <= offsets[i]) fail(`text ${i} of a list is empty or out of order`);
	const size = offsets[count];
	const end = start + size + ((4 - (size % 4)) % 4);
	if (end > buf.length) fail('its list of texts is cut short');
	const texts: Texts = {
		length: count,
		at: (i) => buf.toString('utf8', start + offsets[i], start + offsets[i + 1]),
		heap: 0,
	};
	return { texts, end };
}
