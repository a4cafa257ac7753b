// Locks in two levels, made of expiring leases (lease.ts): one per part and one for the whole, which
// takes every part's too. A Memory Base's parts are its conversations: a sync of one takes that
// conversation's lock; a sync of the whole base, Regenerate and Delete take the base's. Expiring, so a
// crashed holder blocks the others for one lease duration at most.
import { acquireLease, isFresh, readLease } from './lease';
import type { HeldLease, Lease } from './lease';
import type { MemoryStorage } from './storage';

/** The locks of one whole: where its leases are, how long they last, what finding one held throws. */
export interface LeaseLocks {
	storage: MemoryStorage;
	/** The whole's lease. */
	wholeKey: string;
	/** A part's lease. */
	partKey(part: string): string;
	/**
	 * Every part there is now, a page at a time (a whole of 100,000 parts is never held as one list):
	 * the whole's lock takes each one's.
	 */
	partPages(): AsyncIterable<string[]>;
	/** How long a lease lasts without renewal (renewed every third of it while held). */
	ttlMs: number;
	/** How many parts' leases are taken or read side by side. */
	parallel: number;
	/** The error for a lock another holder has: a part's, or the whole's (null), with its lease if readable. */
	held(part: string | null, lease: Lease | undefined): Error;
}

/**
 * The leases a locked function holds: one part's, or the whole's (whose lock took every part's lease
 * and let it go: see locked). Holding the whole, check and confirm the whole's lease.
 */
export interface HeldLocks {
	whole?: HeldLease;
	parts: Map<string, HeldLease>;
}

/** A lock another holder has, as found: a part's, or the whole's (null). */
export interface FoundLock {
	part: string | null;
	lease: Lease;
}

function takePart(locks: LeaseLocks, part: string, operation: string): Promise<HeldLease> {
	return acquireLease(
		locks.storage,
		locks.partKey(part),
		{ ttlMs: locks.ttlMs, operation },
		(lease) => locks.held(part, lease),
	);
}

async function release(held: HeldLocks, parallel: number): Promise<void> {
	const parts = [...held.parts.values()];
	for (let i = 0; i < parts.length; i += parallel)
		await Promise.all(parts.slice(i, i + parallel).map((l) => l.release().catch(() => {})));
	await held.whole?.release().catch(() => {});
}

/** Every part (or the pages given), `parallel` at a time, page by page of the listing. */
async function eachBatch(
	locks: LeaseLocks,
	visit: (batch: string[]) => Promise<void>,
	pages: AsyncIterable<string[]> | Iterable<string[]> = locks.partPages(),
): Promise<void> {
	for await (const page of pages)
		for (let i = 0; i < page.length; i += locks.parallel)
			await visit(page.slice(i, i + locks.parallel));
}

/**
 * The parts a locked function works on: the one part, or every part of the whole, listed again page
 * by page each time it is walked (a part added meanwhile is walked too: its own lock gives way to the
 * whole's, see locked).
 */
export type Parts = AsyncIterable<string>;

const onePart = (part: string): Parts => ({
	async *[Symbol.asyncIterator]() {
		yield part;
	},
});

const everyPart = (locks: LeaseLocks): Parts => ({
	async *[Symbol.asyncIterator]() {
		for await (const page of locks.partPages()) yield* page;
	},
});

/**
 * Runs `fn` holding the locks it needs: for one part, that part's lock (and no whole lock held by
 * anyone); for the whole (`part` undefined), the whole's lock, once every part's lease was taken (no
 * part is held by another) and given back. Any of them held by another holder: the error `held`
 * gives, with nothing changed. Released when `fn` ends.
 */
export async function locked<T>(
	locks: LeaseLocks,
	part: string | undefined,
	operation: string,
	fn: (parts: Parts, held: HeldLocks) => Promise<T>,
): Promise<T> {
	const held: HeldLocks = { parts: new Map() };
	try {
		if (part !== undefined) {
			held.parts.set(part, await takePart(locks, part, operation));
			const whole = await readLease(locks.storage, locks.wholeKey);
			if (whole && isFresh(whole.lease)) throw locks.held(null, whole.lease);
			return await fn(onePart(part), held);
		}
		held.whole = await acquireLease(
			locks.storage,
			locks.wholeKey,
			{ ttlMs: locks.ttlMs, operation },
			(lease) => locks.held(null, lease),
		);
		await eachBatch(locks, async (batch) => {
			const taken = await Promise.allSettled(batch.map((s) => takePart(locks, s, operation)));
			// Taken, a part is free of other holders: from here the whole's lease guards it (a part's
			// lock checks the whole's after taking its own, and gives way: above), so its lease goes at
			// once and none is held for the run (a base of 100,000 conversations would hold them all).
			await Promise.all(
				taken.map((t) => (t.status === 'fulfilled' ? t.value.release().catch(() => {}) : null)),
			);
			const failed = taken.find((t) => t.status === 'rejected');
			if (failed) throw (failed as PromiseRejectedResult).reason;
		});
		return await fn(everyPart(locks), held);
	} finally {
		await release(held, locks.parallel);
	}
}

/**
 * The locks others hold right now (unexpired leases): the whole's first, then the parts'. Given
 * `only`, only those parts' leases are read (a waiter reading again the few it found held, instead of
 * every part of a whole of 100,000).
 */
export async function heldLocks(locks: LeaseLocks, only?: readonly string[]): Promise<FoundLock[]> {
	const out: FoundLock[] = [];
	const whole = await readLease(locks.storage, locks.wholeKey);
	if (whole && isFresh(whole.lease)) out.push({ part: null, lease: whole.lease });
	const read = async (batch: string[]) => {
		const found = await Promise.all(batch.map((s) => readLease(locks.storage, locks.partKey(s))));
		found.forEach((l, j) => {
			if (l && isFresh(l.lease)) out.push({ part: batch[j], lease: l.lease });
		});
	};
	await eachBatch(locks, read, only && [[...only]]);
	return out;
}
