// The k best chunks of a ranking read part after part (segments, a cell tier's buckets): each chunk ID
// once (a retried write's copy, or a chunk in a tier and a segment, counts once), ties by the chunks.
import { chunkOrder } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import { TopK } from '../chunks/top-k';
import { topRows } from './vector-segment';
import type { Segment } from './vector-segment';

export class BestChunks {
	private readonly kept: Array<{ chunk: IndexedChunk; score: number }> = [];
	private readonly held = new Set<string>();
	private readonly top: TopK;

	constructor(private readonly k: number) {
		this.top = new TopK(k, (a, _b, c) => chunkOrder(this.kept[a].chunk, this.kept[c].chunk));
	}

	/** A chunk with its score (kept if among the k best so far, and not held already). */
	offer(chunk: IndexedChunk, score: number): void {
		if (this.held.has(chunk.id) || !this.top.admits(score)) return;
		this.held.add(chunk.id);
		this.top.push(score, this.kept.push({ chunk, score }) - 1, 0);
	}

	/** The k best rows of a segment that `mask` marks, scored against `q`. */
	offerRows(seg: Segment, mask: Uint8Array, q: Float32Array): void {
		for (const { score, b } of topRows([seg], [mask], q, this.k)) this.offer(seg.chunks[b], score);
	}

	sorted(): Array<{ chunk: IndexedChunk; score: number }> {
		return this.top.sorted().map(({ a }) => this.kept[a]);
	}
}
