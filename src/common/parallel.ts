// Bounded concurrency: no operation runs more than a fixed number of storage requests at once.
import { shareLoop } from './loop-turns';

/** Storage requests an operation runs at once, at most. */
export const MAX_PARALLEL = 16;

/** Runs `fn` over items with at most `limit` running at a time; results in the items' order. */
export async function mapLimit<T, R>(
	items: readonly T[],
	limit: number,
	fn: (item: T) => Promise<R>,
): Promise<R[]> {
	const out = new Array<R>(items.length);
	let next = 0;
	const worker = async () => {
		while (next < items.length) {
			const i = next++;
			out[i] = await fn(items[i]);
		}
	};
	// At least one worker, whatever `limit` says (a NaN would run nothing and return holes).
	const workers = Math.min(Math.max(1, Math.floor(limit) || 1), items.length);
	await Promise.all(Array.from({ length: workers }, worker));
	return out;
}

/**
 * Bytes one operation holds of what it is reading, shared by all its readers (both rankings of a
 * search): a reader takes a part's bytes before reading it and gives them back once it is used. Bytes
 * are taken at once if they fit, or if nothing is held (a part larger than the limit is read alone);
 * otherwise once others gave back. A reader holding nothing never waits for itself, so none deadlocks.
 */
export class ReadBudget {
	private held = 0;
	private waiting: Array<() => void> = [];

	constructor(readonly limit: number) {}

	/** Takes `bytes` if they fit (or nothing is held): whether it did. */
	tryTake(bytes: number): boolean {
		const n = bytes > 0 ? bytes : 0;
		if (this.held > 0 && this.held + n > this.limit) return false;
		this.held += n;
		return true;
	}

	/** Takes `bytes`, waiting until they fit. */
	async take(bytes: number): Promise<void> {
		while (!this.tryTake(bytes)) await this.freed();
	}

	give(bytes: number): void {
		this.held = Math.max(0, this.held - (bytes > 0 ? bytes : 0));
		const waiting = this.waiting;
		this.waiting = [];
		for (const wake of waiting) wake();
	}

	/** Settles the next time bytes are given back. */
	freed(): Promise<void> {
		return new Promise((r) => this.waiting.push(r));
	}
}

/** Runs `fn` holding `bytes` of `budget` (when there is one): taken before, given back after, whatever `fn` does. */
export async function withBytes<T>(
	budget: ReadBudget | undefined,
	bytes: number,
	fn: () => Promise<T>,
): Promise<T> {
	await budget?.take(bytes);
	try {
		return await fn();
	} finally {
		budget?.give(bytes);
	}
}

/**
 * Reads `parts` with up to `window` reads under way, within `bytes` together (one at least), and hands
 * each one read to `use` in the parts' order; a part's bytes count until `use` returns. With `budget`,
 * they also count in it (shared with other readers of the same operation), and a part is only read
 * once its bytes fit there too. The next reads are under way while one is used: on a remote store each
 * read is a round trip. A failed read is thrown when its turn comes (the reads after it are left to
 * finish, unused, their bytes given back). Between parts the event loop may turn (shareLoop): parts
 * already read are otherwise used back to back without it.
 */
export async function readInWindow<T, R>(
	parts: readonly T[],
	limits: { window: number; bytes: number; budget?: ReadBudget },
	bytesOf: (part: T) => number,
	read: (part: T) => Promise<R>,
	use: (got: R, part: T) => void,
): Promise<void> {
	const { budget } = limits;
	const pending: Array<{ part: T; bytes: number; got: Promise<R> }> = [];
	let next = 0;
	let held = 0;
	const fill = () => {
		while (next < parts.length && pending.length < Math.max(1, limits.window)) {
			const bytes = bytesOf(parts[next]);
			if (pending.length > 0 && held + bytes > limits.bytes) return;
			if (budget && !budget.tryTake(bytes)) return;
			const part = parts[next++];
			const got = read(part);
			// Awaited in its turn below; until then a failure must not be an unhandled rejection.
			got.catch(() => undefined);
			held += bytes;
			pending.push({ part, bytes, got });
		}
	};
	try {
		fill();
		while (pending.length > 0 || next < parts.length) {
			// Nothing under way: the shared budget is held by other readers until they give back.
			if (pending.length === 0) {
				await budget!.freed();
				fill();
				continue;
			}
			const { part, bytes, got } = pending[0];
			use(await got, part);
			pending.shift();
			held -= bytes;
			budget?.give(bytes);
			fill();
			if (pending.length > 0) await shareLoop();
		}
	} finally {
		budget?.give(held);
	}
}

/**
 * Deletes parts no manifest lists any more, MAX_PARALLEL at a time (a swap may leave hundreds, and a
 * write waits for them); a failed delete leaves an orphan for the sweep, never fails the write.
 */
export async function deleteParts(
	keys: readonly string[],
	remove: (key: string) => Promise<unknown>,
): Promise<void> {
	await mapLimit(keys, MAX_PARALLEL, (key) => remove(key).catch(() => undefined));
}

/**
 * Runs `fn` over items MAX_PARALLEL (or `limit`) at a time, every one settled before it returns (nothing still
 * writing once it has); if any failed, `undo` is given the results of those that did not, and the
 * first error is thrown. Results in the items' order.
 */
export async function mapOrUndo<T, R>(
	items: readonly T[],
	fn: (item: T) => Promise<R>,
	undo: (done: R[]) => Promise<void>,
	limit = MAX_PARALLEL,
): Promise<R[]> {
	const results = await mapLimit(items, limit, (item) =>
		fn(item).then(
			(ok) => ({ ok }),
			(error: unknown) => ({ error }),
		),
	);
	const failed = results.find((r) => 'error' in r);
	if (failed && 'error' in failed) {
		await undo(results.flatMap((r) => ('ok' in r ? [r.ok] : [])));
		throw failed.error;
	}
	return results.map((r) => (r as { ok: R }).ok);
}
