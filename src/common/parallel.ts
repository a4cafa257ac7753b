// Bounded concurrency: no operation runs more than a fixed number of storage requests at once.

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
