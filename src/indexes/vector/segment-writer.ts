// Writing a vector segment's stored form (read by stored-vectors.ts) from its rows one at a time: each
// block of chunks is gzipped as soon as it is full, and each row is copied once, into the stored bytes.
// So a rewrite of a segment or a cell bucket without some rows (a Forget, an expiry) holds the form it
// read, the form it writes and one block of chunks, not every chunk decoded beside both: a bucket of a
// large base is megabytes stored and several times that decoded.
import { randomBytes } from 'node:crypto';

import { encodeTexts } from '../../common/stored-texts';
import { u32Bytes } from '../../common/u32';
import { BLOCK, gzJson, Numbering } from '../chunks/blocks';
import { chunkHeapBytes } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import { LISTED, LITTLE_ENDIAN, messageHash, TABLE, WHOLE } from './stored-vectors';
import type { MemoryStorage } from '../../store/storage';
import type { SegmentRef } from './manifest';
import type { Segment } from './vector-segment';

/** One row to store: its chunk, its vector (row `row` of `vectors`, copied when written), its tag. */
export interface RowToStore {
	chunk: IndexedChunk;
	vectors: Float32Array;
	row: number;
	tag?: number;
}

/** Magic, header length, the header, padding to 4 bytes: the lead of either form. */
function lead(magic: Buffer, fields: Record<string, unknown>): Buffer {
	const header = Buffer.from(JSON.stringify(fields), 'utf8');
	const start = magic.length + 4 + header.length;
	const out = Buffer.alloc(start + ((4 - (start % 4)) % 4));
	magic.copy(out, 0);
	out.writeUInt32LE(header.length, magic.length);
	header.copy(out, magic.length + 4);
	return out;
}

/** What the first pass over the rows gathers: everything but the rows' vectors, which stay views. */
class Gathering {
	readonly cols: Uint32Array[];
	readonly tags?: Uint32Array;
	/** Where each row's vector is: an array (shared by many rows, not copied) and the row in it. */
	readonly from: Float32Array[] = [];
	readonly at: Uint32Array;
	readonly blocks: Buffer[] = [];
	readonly sessions = new Numbering();
	readonly times = new Numbering();
	private block: IndexedChunk[] = [];
	heap = 0;

	constructor(capacity: number, tagged: boolean) {
		this.cols = Array.from({ length: TABLE }, () => new Uint32Array(capacity));
		this.at = new Uint32Array(capacity);
		if (tagged) this.tags = new Uint32Array(capacity);
	}

	add({ chunk: c, vectors, row, tag }: RowToStore): void {
		const r = this.from.length;
		if (r >= this.cols[0].length) throw new RangeError(`more than ${this.cols[0].length} rows`);
		const [messages, chunkIndexes, sessions, times, seqs] = this.cols;
		messages[r] = messageHash(c.message_id);
		chunkIndexes[r] = c.chunk_index;
		sessions[r] = this.sessions.of(c.session_id);
		times[r] = this.times.of(c.created_at);
		seqs[r] = c.seq;
		if (this.tags) this.tags[r] = tag ?? 0;
		this.from.push(vectors);
		this.at[r] = row;
		this.heap += chunkHeapBytes([c]);
		this.block.push(c);
		if (this.block.length === BLOCK) this.flush();
	}

	flush(): void {
		if (this.block.length > 0) this.blocks.push(gzJson(this.block));
		this.block = [];
	}

	/** Copies the rows into `out` from byte `at`: rows that follow each other in one array as one run. */
	writeRows(out: Buffer, at: number, dims: number): void {
		const n = this.from.length;
		for (let r = 0; r < n;) {
			const [from, first] = [this.from[r], this.at[r]];
			let end = r + 1;
			while (end < n && this.from[end] === from && this.at[end] === first + (end - r)) end++;
			copyFloats(out, at + 4 * r * dims, from.subarray(first * dims, (first + end - r) * dims));
			r = end;
		}
	}
}

/** Copies `src` into `out` from byte `at`, little-endian (the copy needs no alignment). */
function copyFloats(out: Buffer, at: number, src: Float32Array): void {
	if (LITTLE_ENDIAN) out.set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength), at);
	else src.forEach((x, k) => out.writeFloatLE(x, at + 4 * k));
}

/**
 * Encodes rows in blocks (the form LLMVEC03 of stored-vectors.ts), taking them one at a time: at most
 * `capacity` of them. `extra`: the header fields of a segment of another kind; `tagged`: each row's
 * tag is stored (a cell tier's bucket and its rows' cells).
 */
export function encodeRows(
	dimensions: number,
	rows: Iterable<RowToStore>,
	capacity: number,
	extra: Record<string, unknown> = {},
	tagged = false,
): Buffer {
	const g = new Gathering(capacity, tagged);
	for (const row of rows) g.add(row);
	g.flush();
	const n = g.from.length;
	const fields = {
		...extra,
		dimensions,
		count: n,
		heap: g.heap,
		texts: [g.sessions.list.length, g.times.list.length],
		...(tagged ? { tags: true } : {}),
		parts: g.blocks.map((b) => b.length),
	};
	const head = lead(LISTED, fields);
	const tail = [
		...g.cols.map((col) => u32Bytes(col.subarray(0, n))),
		encodeTexts(g.sessions.list),
		encodeTexts(g.times.list),
		...(g.tags ? [u32Bytes(g.tags.subarray(0, n))] : []),
		...g.blocks,
	];
	const rowsAt = head.length;
	const size = rowsAt + 4 * n * dimensions + tail.reduce((s, b) => s + b.length, 0);
	// One allocation of the stored size (not Buffer.concat of a copy of the rows beside it).
	const out = Buffer.alloc(size);
	head.copy(out, 0);
	g.writeRows(out, rowsAt, dimensions);
	let at = rowsAt + 4 * n * dimensions;
	for (const part of tail) at += part.copy(out, at);
	return out;
}

/** Each chunk with its row of `vectors` (and its tag), in order. */
export function* rowsOf(
	chunks: readonly IndexedChunk[],
	vectors: Float32Array,
	tags?: ArrayLike<number>,
) {
	for (let r = 0; r < chunks.length; r++)
		yield { chunk: chunks[r], vectors, row: r, tag: tags?.[r] };
}

/**
 * Encodes a segment in blocks (`extra`: the header fields of a segment of another kind, and `tags` a
 * number per row it stores: a cell tier's bucket and its rows' cells).
 */
export const encodeSegment = (
	dimensions: number,
	chunks: IndexedChunk[],
	vectors: Float32Array,
	extra: Record<string, unknown> = {},
	tags?: ArrayLike<number>,
): Buffer =>
	encodeRows(dimensions, rowsOf(chunks, vectors, tags), chunks.length, extra, tags !== undefined);

/** Encodes a segment in the form written before blocks, every chunk in its header (read as before). */
export function encodeWholeSegment(
	dimensions: number,
	chunks: IndexedChunk[],
	vectors: Float32Array,
	extra: Record<string, unknown> = {},
): Buffer {
	const fields = { ...extra, dimensions, count: chunks.length, chunks };
	const head = lead(WHOLE, fields);
	const out = Buffer.alloc(head.length + vectors.byteLength);
	head.copy(out, 0);
	copyFloats(out, head.length, vectors);
	return out;
}

/**
 * The rows of a stored segment that `keep` keeps (given each row's chunk), one at a time, each block
 * of chunks decoded when reached and let go after (segment.lazy.block); a segment from before blocks
 * is read whole. With `tags`, each row's tag.
 */
export function* keptRows(
	seg: Segment,
	keep: (chunk: IndexedChunk, row: number) => boolean,
	tags?: ArrayLike<number>,
): Generator<RowToStore> {
	const count = seg.vectors.length / seg.dimensions;
	const block = seg.lazy
		? (b: number) => seg.lazy!.block(b)
		: (b: number) => seg.chunks.slice(b * BLOCK, (b + 1) * BLOCK);
	for (let b = 0; b * BLOCK < count; b++) {
		const chunks = block(b);
		for (let j = 0; j < chunks.length; j++) {
			const r = b * BLOCK + j;
			if (keep(chunks[j], r))
				yield { chunk: chunks[j], vectors: seg.vectors, row: r, tag: tags?.[r] };
		}
	}
}

/** Where an index writes its segments (an EmbeddedIndex). */
interface SegmentTarget {
	readonly storage: MemoryStorage;
	readonly segmentsPrefix: string;
	/** Kept in tiers (the base-wide index): its manifest skips each segment's users. */
	readonly tiered: boolean;
}

/**
 * Writes rows taken one at a time (at most `capacity`) as a new write-once segment of `index`, and
 * returns its manifest entry; null, and nothing written, when there was none.
 */
export async function writeSegmentRows(
	index: SegmentTarget,
	dims: number,
	rows: Iterable<RowToStore>,
	capacity: number,
): Promise<SegmentRef | null> {
	const sessions = new Set<string>();
	const users = new Set<string>();
	let count = 0;
	const noted = function* () {
		for (const row of rows) {
			count++;
			sessions.add(row.chunk.session_id);
			if (row.chunk.user_id !== undefined) users.add(row.chunk.user_id);
			yield row;
		}
	};
	const body = encodeRows(dims, noted(), capacity);
	if (count === 0) return null;
	const key = `${index.segmentsPrefix}${randomBytes(12).toString('hex')}.vec`;
	await index.storage.put(key, body, { ifVersion: null, contentType: 'application/octet-stream' });
	return {
		key,
		count,
		sessions: [...sessions].sort(),
		// An index kept in tiers (the base-wide one) is searched across every user only: its
		// manifest, read by every such search and written by every sync, skips the lists.
		...(index.tiered ? {} : { users: [...users].sort() }),
		bytes: body.length,
		created_at: new Date().toISOString(),
	};
}
