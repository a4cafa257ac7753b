// A term's rows in a bucket read from storage, as a search walks them: in order, one block at a time.
// A common word's rows run to millions at 100,000 users; a search merges them document after document
// and never needs them all at once, so a bucket stored in blocks (binary-rows.ts) stays compressed in
// memory and decodes each block as the walk reaches it.

/** A term's rows: how many values (rows × the tier's width), and the rows in order, block after block. */
export interface Postings {
	/** Values, as a Uint32Array of every row would have (a term's document count is length ÷ width). */
	readonly length: number;
	/** Bytes held in memory, about (for the bucket cache). */
	readonly bytes: number;
	/** Whether the rows are held decoded (else each block is decoded as a walk reaches it). */
	readonly held: boolean;
	/** The rows in order, each block whole rows; a damaged block throws when the walk reaches it. */
	blocks(): Iterable<Uint32Array>;
}

/**
 * Rows already in memory: `from` to `to` of a bucket's rows (a class, and no view until asked: a bucket
 * of rare words or of conversations holds tens of thousands).
 */
class HeldPostings implements Postings {
	readonly held = true;
	constructor(
		private readonly all: Uint32Array,
		private readonly from: number,
		private readonly to: number,
	) {}
	get length(): number {
		return this.to - this.from;
	}
	get bytes(): number {
		return 4 * (this.to - this.from);
	}
	blocks(): Iterable<Uint32Array> {
		return [this.all.subarray(this.from, this.to)];
	}
}

/** Rows held: `rows`, or values `from` to `to` of it. */
export const heldPostings = (rows: Uint32Array, from = 0, to = rows.length): Postings =>
	new HeldPostings(rows, from, to);

/** Lists of rows one after another, in one array (`length`: their rows in all, when known). */
export function joinRows(lists: Iterable<Uint32Array>, length?: number): Uint32Array {
	const all = length === undefined ? [...lists] : lists;
	const out = new Uint32Array(length ?? (all as Uint32Array[]).reduce((n, l) => n + l.length, 0));
	let at = 0;
	for (const l of all) {
		out.set(l, at);
		at += l.length;
	}
	return out;
}

/** Every row at once (a short list, or a bucket written in the form from before blocks). */
export const allRows = (postings: Postings): Uint32Array =>
	joinRows(postings.blocks(), postings.length);

/** A term's rows to write: in memory, or as read or derived (each block made when the writer reaches it). */
export type Rows = Uint32Array | Postings;
export const postingsOf = (rows: Rows): Postings =>
	rows instanceof Uint32Array ? heldPostings(rows) : rows;

/**
 * Rows made from others a block at a time as the writer walks them (a tier merge, a Forget): a common
 * word's millions of rows are never all in memory, only its compressed blocks. `length` must be what
 * the blocks give (the writer checks).
 */
const derived = (length: number, bytes: number, blocks: () => Iterable<Uint32Array>): Postings => ({
	length,
	bytes,
	held: false,
	blocks,
});

/** `a`'s rows, then `b`'s. */
export const chained = (a: Postings, b: Postings): Postings =>
	a.held && b.held
		? heldPostings(joinRows([...a.blocks(), ...b.blocks()], a.length + b.length))
		: derived(a.length + b.length, a.bytes + b.bytes, function* () {
				yield* a.blocks();
				yield* b.blocks();
			});

/** Each block of `p` through `fn`, `length` values in all. */
export const mapped = (p: Postings, length: number, fn: (rows: Uint32Array) => Uint32Array) =>
	p.held
		? heldPostings(fn(allRows(p)))
		: derived(length, p.bytes, function* () {
				for (const rows of p.blocks()) yield fn(rows);
			});

/** `p` without the rows (of `width` values) that `drop` names; a list in blocks is walked once to count them. */
export function without(
	p: Postings,
	width: number,
	drop: (rows: Uint32Array, at: number) => boolean,
): Postings {
	const keep = (rows: Uint32Array) => {
		const out = new Uint32Array(rows.length);
		let n = 0;
		for (let i = 0; i < rows.length; i += width)
			if (!drop(rows, i)) {
				out.set(rows.subarray(i, i + width), n);
				n += width;
			}
		return out.subarray(0, n);
	};
	if (p.held) return heldPostings(keep(allRows(p)).slice());
	let length = 0;
	for (const rows of p.blocks()) length += keep(rows).length;
	return mapped(p, length, keep);
}

const EMPTY = new Uint32Array(0);

/** A walk over one term's rows, a row at a time, decoding a block only when it reaches it. */
export class RowCursor {
	private readonly blocks: Iterator<Uint32Array>;
	private rows: Uint32Array = EMPTY;
	private at = 0;

	constructor(
		postings: Postings | undefined,
		private readonly width: number,
	) {
		this.blocks = (postings?.blocks() ?? [])[Symbol.iterator]();
		this.fill();
	}

	private fill(): void {
		while (this.at >= this.rows.length) {
			const next = this.blocks.next();
			if (next.done) {
				this.rows = EMPTY;
				this.at = 0;
				return;
			}
			this.rows = next.value;
			this.at = 0;
		}
	}

	get done(): boolean {
		return this.at >= this.rows.length;
	}

	/** The current row's place: its segment's ordinal × 2^16 + its document. */
	place(): number {
		return this.rows[this.at] * 2 ** 16 + this.rows[this.at + 1];
	}

	/** Value `j` of the current row. */
	value(j: number): number {
		return this.rows[this.at + j];
	}

	advance(): void {
		this.at += this.width;
		if (this.at >= this.rows.length) this.fill();
	}
}
