// The k best chunks of a ranking read part after part (segments, a cell tier's buckets): each chunk ID
// once (a retried write's copy, or a chunk in a tier and a segment, counts once), ties by the chunks.
// Rows are kept by their place and ranked by their keys (rowKey): of a segment read in blocks, only
// the chunks returned are decoded (and a row's ID when it ties another on everything else).
import { chunkOrder } from '../chunks/chunk';
import type { IndexedChunk, OrderFields } from '../chunks/chunk';
import { TopK } from '../chunks/top-k';
import { chunkAt, rowKey, topRows } from './vector-segment';
import type { Segment } from './vector-segment';

/** A kept row: its chunk (given, or read from its segment when returned) and what orders it. */
interface Kept {
	key: OrderFields;
	chunk: () => IndexedChunk;
	score: number;
}

export class BestChunks {
	private readonly kept: Kept[] = [];
	/** Rows offered, by conversation, message number and chunk index: a chunk's copies share them. */
	private readonly held = new Map<string, OrderFields[]>();
	private readonly top: TopK;

	constructor(private readonly k: number) {
		this.top = new TopK(k, (a, _b, c) => chunkOrder(this.kept[a].key, this.kept[c].key));
	}

	/** Whether a copy of this row's chunk was offered already (the same ID); notes it if not. */
	private seen(key: OrderFields): boolean {
		const place = `${key.session_id}\n${key.seq}\n${key.chunk_index}`;
		const rows = this.held.get(place);
		if (rows?.some((k) => k.id === key.id)) return true;
		if (rows) rows.push(key);
		else this.held.set(place, [key]);
		return false;
	}

	private keep(key: OrderFields, chunk: () => IndexedChunk, score: number): void {
		if (!this.top.admits(score) || this.seen(key)) return;
		this.top.push(score, this.kept.push({ key, chunk, score }) - 1, 0);
	}

	/** A chunk with its score (kept if among the k best so far, and not held already). */
	offer(chunk: IndexedChunk, score: number): void {
		this.keep(chunk, () => chunk, score);
	}

	/** The k best rows of a segment that `mask` marks, scored against `q`. */
	offerRows(seg: Segment, mask: Uint8Array, q: Float32Array): void {
		for (const { score, b } of topRows([seg], [mask], q, this.k))
			if (this.top.admits(score)) this.keep(rowKey(seg, b), () => chunkAt(seg, b), score);
	}

	sorted(): Array<{ chunk: IndexedChunk; score: number }> {
		return this.top
			.sorted()
			.map(({ a }) => ({ chunk: this.kept[a].chunk(), score: this.kept[a].score }));
	}
}
