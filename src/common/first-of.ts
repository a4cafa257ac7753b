// The first n of many items in an order, kept as they come: a listing of 100,000 folders, or a
// whole-base result that names its first 1,000 conversations, holds 2n items at most, never them all.

/** The first `n` items added, by `order`: kept within 2n (sorted and cut each time 2n are held). */
export class FirstOf<T> {
	private items: T[] = [];
	/** The n-th after the last cut: an item ordered at or after it is never among the first n. */
	private last: T | undefined;

	constructor(
		private readonly n: number,
		private readonly order: (a: T, b: T) => number,
	) {
		if (!Number.isSafeInteger(n) || n < 1)
			throw new RangeError(`FirstOf needs n of at least 1, not ${n}`);
	}

	add(item: T): void {
		if (this.last !== undefined && this.order(item, this.last) >= 0) return;
		this.items.push(item);
		if (this.items.length >= 2 * this.n) this.cut();
	}

	/** The first n (fewer if fewer were added), in order. */
	sorted(): T[] {
		this.cut();
		return [...this.items];
	}

	private cut(): void {
		this.items.sort(this.order);
		if (this.items.length < this.n) return;
		this.items.length = this.n;
		this.last = this.items[this.n - 1];
	}
}

/** A result's list of many: every item counted, the first `n` by `order` kept (FirstOf). */
export class FirstListed<T> {
	count = 0;
	private readonly first: FirstOf<T>;

	constructor(n: number, order: (a: T, b: T) => number) {
		this.first = new FirstOf(n, order);
	}

	push(...items: T[]): void {
		for (const item of items) {
			this.count++;
			this.first.add(item);
		}
	}

	/** The first n, in order. */
	sorted(): T[] {
		return this.first.sorted();
	}
}

/** Strings in code-unit order (Array.prototype.sort's own). */
export const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
