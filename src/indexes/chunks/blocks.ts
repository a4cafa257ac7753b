// Chunks stored in blocks, each gzipped on its own, so a reader decodes only the blocks of the chunks
// it is asked for: a search of every conversation reads segments and buckets of thousands of chunks
// for the few that rank, and parsing all of them took a large share of its time. Both indexes' stored
// forms use it (lexical/stored-segment.ts, vector/stored-vectors.ts): each keeps a table of what every
// chunk is beside its blocks, and a block's chunks are checked against it when first decoded.
import { gunzipSync, gzipSync } from 'node:zlib';

import { badChunk } from './chunk';
import type { IndexedChunk } from './chunk';

/** Chunks per block. */
export const BLOCK = 64;

export const blockCount = (chunks: number) => Math.ceil(chunks / BLOCK);

/** A value as gzipped JSON (a stored part). */
export const gzJson = (value: unknown) => gzipSync(Buffer.from(JSON.stringify(value), 'utf8'));

/** Numbers for the distinct texts of a table's column (conversations, times), listed once in its header. */
export class Numbering {
	readonly list: string[] = [];
	private readonly at = new Map<string, number>();

	of(text: string): number {
		let n = this.at.get(text);
		if (n === undefined) this.at.set(text, (n = this.list.push(text) - 1));
		return n;
	}
}

/** The stored blocks of these chunks, in order. */
export function encodeBlocks(chunks: readonly IndexedChunk[]): Buffer[] {
	const out: Buffer[] = [];
	for (let b = 0; b < chunks.length; b += BLOCK) out.push(gzJson(chunks.slice(b, b + BLOCK)));
	return out;
}

/** A stored part's JSON text, inflated (its gzip checksum checked), or `fail` naming it. */
export function partText(bytes: Uint8Array, what: string, fail: (detail: string) => never): Buffer {
	try {
		return gunzipSync(bytes);
	} catch {
		return fail(`${what}: not gzipped JSON`);
	}
}

/** A stored part as parsed JSON (`text`: its text, if inflated already), or `fail` naming it. */
export function partJson(
	bytes: Uint8Array,
	what: string,
	fail: (detail: string) => never,
	text?: Buffer,
): unknown {
	const json = text ?? partText(bytes, what, fail);
	try {
		return JSON.parse(json.toString('utf8'));
	} catch {
		return fail(`${what}: not gzipped JSON`);
	}
}

/** Where a stored form keeps its blocks, and what its table says of each chunk. */
export interface BlockSource {
	count: number;
	/** The stored bytes of block `b`. */
	block(b: number): Uint8Array;
	/** Whether chunk `i`, as decoded, is the one the table lists at its place. */
	listed(chunk: IndexedChunk, i: number): boolean;
	/** What the stored form calls its chunks in an error ("docs", "chunks"). */
	field: string;
	fail(detail: string): never;
}

/**
 * The chunks of a stored form, each block decoded and checked when first asked for, then kept. A
 * damaged block is an error naming the stored object every time it is asked for, never an empty answer.
 */
export class ChunkBlocks {
	private readonly decoded: Array<IndexedChunk[] | undefined> = [];

	constructor(private readonly source: BlockSource) {}

	get count(): number {
		return this.source.count;
	}

	private block(b: number): IndexedChunk[] {
		return (this.decoded[b] ??= this.read(b));
	}

	/** Block `b`'s chunks, decoded and checked, and not kept (unless they were already). */
	read(b: number): IndexedChunk[] {
		const kept = this.decoded[b];
		if (kept) return kept;
		const { source } = this;
		const from = b * BLOCK;
		const count = Math.min(BLOCK, source.count - from);
		const chunks = partJson(source.block(b), `block ${b}`, source.fail);
		if (!Array.isArray(chunks) || chunks.length !== count)
			source.fail(`block ${b}: not ${count} chunks`);
		(chunks as unknown[]).forEach((c, j) => {
			const bad = badChunk(c);
			if (bad) source.fail(`${source.field}.${from + j}.${bad}: not valid`);
			if (!source.listed(c as IndexedChunk, from + j))
				source.fail(`${source.field}.${from + j}: not the chunk its table lists`);
		});
		return chunks as IndexedChunk[];
	}

	/** Chunk `i`, decoding only its block. */
	at(i: number): IndexedChunk {
		if (!(Number.isInteger(i) && i >= 0 && i < this.source.count))
			throw new RangeError(`no chunk ${i} among ${this.source.count}`);
		return this.block(Math.floor(i / BLOCK))[i % BLOCK];
	}

	/** Every chunk, in order (every block decoded). */
	all(): IndexedChunk[] {
		return Array.from({ length: blockCount(this.source.count) }, (_, b) => this.block(b)).flat();
	}
}
