// The k best chunks of a ranking read part after part (segments, a cell tier's buckets): each chunk ID
// once (a retried write's copy, or a chunk in a tier and a segment, counts once), ties by the chunks.
// A segment's rows are ranked by their keys (rowKey): of a segment read in blocks, the rows still among
// the best once the segment is done keep a copy of their block, decoded only if they are among the k
// best at the end (decoding each survivor's block as its segment ended took a tenth of a search of
// every conversation), or for a row's ID when it ties another on everything else. Nothing of a segment
// is kept past its turn, and rows that fall out of the k best are let go, so memory holds about k rows.
import { chunkOrder } from '../chunks/chunk';
import type { IndexedChunk, OrderFields } from '../chunks/chunk';
import { TopK } from '../chunks/top-k';
import { rowKey, topRows } from './vector-segment';
import type { RowChunk, Segment } from './vector-segment';

/** A kept row: what orders it (its chunk, or its key and block), and its row while its segment is read. */
interface Kept {
	key: OrderFields | RowChunk;
	score: number;
	row?: number;
}

/** A key that holds its block, to decode at the end (a chunk's own fields otherwise). */
const isRowChunk = (key: Kept['key']): key is RowChunk =>
	typeof (key as Partial<RowChunk>).chunk === 'function';

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

	/**
	 * The k best rows of a segment that `mask` marks, scored against `q`; those still among the best are
	 * kept with their chunk (of a segment read in blocks, their key and a copy of their block), and every
	 * row no longer among them is let go (a later copy of one ties it and loses alike).
	 */
	offerRows(seg: Segment, mask: Uint8Array, q: Float32Array): void {
		const from = this.kept.length;
		for (const { score, b } of topRows([seg], [mask], q, this.k))
			if (this.top.admits(score)) this.keep(rowKey(seg, b), score, b);
		const best = new Set(this.top.sorted().map(({ a }) => a));
		const survivors: number[] = [];
		for (let i = 0; i < this.kept.length; i++) {
			const kept = this.kept[i];
			if (kept && !best.has(i)) this.letGo(i, kept);
			else if (kept && i >= from) survivors.push(i);
		}
		const rows = survivors.map((i) => this.kept[i]!.row!);
		const keys = seg.lazy ? seg.lazy.detach(rows) : rows.map((r) => seg.chunks[r]);
		survivors.forEach((i, j) => {
			this.kept[i] = { key: keys[j], score: this.kept[i]!.score };
		});
	}

	private letGo(i: number, kept: Kept): void {
		const place = BestChunks.place(kept.key);
		const rest = this.held.get(place)!.filter((j) => j !== i);
		if (rest.length > 0) this.held.set(place, rest);
		else this.held.delete(place);
		this.kept[i] = undefined;
	}

	sorted(): Array<{ chunk: IndexedChunk; score: number }> {
		return this.top.sorted().map(({ a }) => {
			const { key, score } = this.kept[a]!;
			return { chunk: isRowChunk(key) ? key.chunk() : (key as IndexedChunk), score };
		});
	}
}
