// The k best chunks of a ranking read part after part (segments, a cell tier's buckets): each chunk ID
// once (a retried write's copy, or a chunk in a tier and a segment, counts once), ties by the chunks.
// A segment's rows are ranked by their keys (rowKey): of a segment read in blocks, only the chunks
// still among the best once the segment is done are decoded (and a row's ID when it ties another on
// everything else). Nothing of a segment is kept past its turn, so memory holds the k best chunks only.
import { chunkOrder } from '../chunks/chunk';
import type { IndexedChunk, OrderFields } from '../chunks/chunk';
import { TopK } from '../chunks/top-k';
import { chunkAt, rowKey, topRows } from './vector-segment';
import type { Segment } from './vector-segment';

/** A kept row: what orders it (its chunk, once decoded), and its row while its segment is read. */
interface Kept {
	key: OrderFields;
	score: number;
	row?: number;
}

export class BestChunks {
	private kept: Array<Kept | undefined> = [];
	/** Kept rows by conversation, message number and chunk index: a chunk's copies share them. */
	private readonly held = new Map<string, number[]>();
	private readonly top: TopK;

	constructor(private readonly k: number) {
		this.top = new TopK(k, (a, _b, c) => chunkOrder(this.kept[a]!.key, this.kept[c]!.key));
	}

	private static place(key: OrderFields): string {
		return `${key.session_id}\n${key.seq}\n${key.chunk_index}`;
	}

	/** Keeps a row if among the k best so far and no copy of its chunk (the same ID) is kept. */
	private keep(key: OrderFields, score: number, row?: number): void {
		if (!this.top.admits(score)) return;
		const place = BestChunks.place(key);
		const same = this.held.get(place) ?? [];
		if (same.some((i) => this.kept[i]?.key.id === key.id)) return;
		const at = this.kept.push({ key, score, row }) - 1;
		this.held.set(place, [...same, at]);
		this.top.push(score, at, 0);
	}

	/** A chunk with its score (kept if among the k best so far, and not held already). */
	offer(chunk: IndexedChunk, score: number): void {
		this.keep(chunk, score);
	}

	/**
	 * The k best rows of a segment that `mask` marks, scored against `q`; then the chunks of those still
	 * among the best are decoded, and the others let go (a later copy of one ties it and loses alike).
	 */
	offerRows(seg: Segment, mask: Uint8Array, q: Float32Array): void {
		const from = this.kept.length;
		for (const { score, b } of topRows([seg], [mask], q, this.k))
			if (this.top.admits(score)) this.keep(rowKey(seg, b), score, b);
		const best = new Set(this.top.sorted().map(({ a }) => a));
		for (let i = from; i < this.kept.length; i++) {
			const kept = this.kept[i]!;
			if (best.has(i)) {
				this.kept[i] = { key: chunkAt(seg, kept.row!), score: kept.score };
				continue;
			}
			const place = BestChunks.place(kept.key);
			const rest = this.held.get(place)!.filter((j) => j !== i);
			if (rest.length > 0) this.held.set(place, rest);
			else this.held.delete(place);
			this.kept[i] = undefined;
		}
	}

	sorted(): Array<{ chunk: IndexedChunk; score: number }> {
		return this.top.sorted().map(({ a }) => ({
			chunk: this.kept[a]!.key as IndexedChunk,
			score: this.kept[a]!.score,
		}));
	}
}
