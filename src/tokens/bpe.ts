/**
 * Counts byte-pair-encoding tokens with the ranks js-tiktoken ships, giving the same count as its
 * encode(). js-tiktoken rescans every pair of a piece after each merge and builds a string key per pair
 * per scan, which is quadratic: a 27,000-character Chinese paragraph took a second, and a long piece
 * without breaks (CJK text without punctuation, a pasted blob) practically hangs. Here each pair's rank
 * is looked up once, kept in a binary heap, and re-looked up only next to a merge: O(n log n) per piece.
 * The merge order is the same (lowest rank first, leftmost on ties), so the counts are identical.
 */

export interface BpeRanks {
	pat_str: string;
	bpe_ranks: string;
}

/** Rank of every token, keyed by its bytes as a latin1 string (one char per byte). */
function rankTable(ranks: BpeRanks): Map<string, number> {
	const table = new Map<string, number>();
	for (const line of ranks.bpe_ranks.split('\n')) {
		if (!line) continue;
		const [, offsetText, ...tokens] = line.split(' ');
		const offset = Number.parseInt(offsetText, 10);
		tokens.forEach((token, i) =>
			table.set(Buffer.from(token, 'base64').toString('latin1'), offset + i),
		);
	}
	return table;
}

/** A min-heap of (rank, start) pairs packed into one float64: rank * 2^32 + start orders by rank, then position. */
class PairHeap {
	private items: number[] = [];

	get size(): number {
		return this.items.length;
	}

	push(rank: number, start: number): void {
		const items = this.items;
		const value = rank * 4294967296 + start;
		let i = items.length;
		items.push(value);
		while (i > 0) {
			const parent = (i - 1) >> 1;
			if (items[parent] <= value) break;
			items[i] = items[parent];
			i = parent;
		}
		items[i] = value;
	}

	pop(): number {
		const items = this.items;
		const top = items[0];
		const last = items.pop() as number;
		if (items.length > 0) {
			let i = 0;
			const n = items.length;
			for (;;) {
				const l = 2 * i + 1;
				if (l >= n) break;
				const r = l + 1;
				const c = r < n && items[r] < items[l] ? r : l;
				if (items[c] >= last) break;
				items[i] = items[c];
				i = c;
			}
			items[i] = last;
		}
		return top;
	}
}

export class BpeCounter {
	private readonly table: Map<string, number>;
	private readonly pattern: RegExp;

	constructor(ranks: BpeRanks) {
		this.table = rankTable(ranks);
		this.pattern = new RegExp(ranks.pat_str, 'gu');
	}

	/** The pieces the encoding's pre-tokenizer splits a text into (special-token text stays ordinary text). */
	pieces(text: string): IterableIterator<RegExpMatchArray> {
		return text.matchAll(this.pattern);
	}

	/** Tokens of one piece, given as UTF-8 bytes in a latin1 string. */
	countPiece(bytes: string): number {
		const n = bytes.length;
		if (n <= 1 || this.table.has(bytes)) return n === 0 ? 0 : 1;
		const table = this.table;
		// Parts are [start, end[start]); end[start] = -1 once `start` is no longer the start of a part.
		const end = new Int32Array(n);
		const prev = new Int32Array(n);
		// Rank of the pair that starts at part `start` (-1: none), to recognise outdated heap entries.
		const pairRank = new Int32Array(n).fill(-1);
		for (let i = 0; i < n; i++) {
			end[i] = i + 1;
			prev[i] = i - 1;
		}
		const heap = new PairHeap();
		const rankPair = (start: number) => {
			const next = end[start];
			const rank = next < n ? table.get(bytes.slice(start, end[next])) : undefined;
			pairRank[start] = rank ?? -1;
			if (rank !== undefined) heap.push(rank, start);
		};
		for (let i = 0; i < n - 1; i++) rankPair(i);
		let parts = n;
		while (heap.size > 0) {
			const top = heap.pop();
			const start = top % 4294967296;
			const rank = (top - start) / 4294967296;
			if (end[start] === -1 || pairRank[start] !== rank) continue; // outdated entry
			const next = end[start];
			end[start] = end[next];
			end[next] = -1;
			pairRank[next] = -1;
			if (end[start] < n) prev[end[start]] = start;
			parts--;
			rankPair(start);
			if (prev[start] >= 0) rankPair(prev[start]);
		}
		return parts;
	}
}
