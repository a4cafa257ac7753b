// Parts a swap replaced (segments a merge took in, a replaced tier's buckets), kept a while before they
// are deleted: a search of an index too large to read at once (the base-wide one) reads its parts for
// seconds after it read the manifest, and a part deleted under it makes it start over; under a steady
// stream of syncs, every attempt could lose a part. So such an index lists what it replaced with the
// time, and a later swap deletes what has been replaced for longer than a search takes. A Forget takes
// every retired part at once: they may hold what is forgotten.
import { z } from 'zod';

/** A part the manifest no longer uses, and since when. */
export interface RetiredPart {
	key: string;
	at: string;
}

/** What a manifest that retires parts holds of them. */
export interface Retiring {
	retired?: RetiredPart[];
}

/** How long a replaced part of an index too large to read at once is kept. */
export const RETIRE_GRACE_MS = 2 * 60_000;
/**
 * Parts listed as retired at most: past it, the oldest go at once (a manifest stays small: about 60 KiB
 * of them, beside a base-wide manifest of hundreds). Ten syncs a second fill it in about 15 seconds.
 */
export const MAX_RETIRED = 512;

export const retiredSchema = z
	.array(z.object({ key: z.string().min(1), at: z.iso.datetime({ offset: true }) }))
	.optional();

/** How an index deletes what it replaced: at once (grace 0), or after a grace. */
export interface RetirePolicy {
	/** Only keys under this prefix are ever deleted (a manifest names them). */
	prefix: string;
	graceMs: number;
}

/**
 * `doc` with `keys` retired now, and what is due: retired parts past the grace (or past MAX_RETIRED),
 * taken off the list, to delete once the swap is stored. `all`: every retired part is due (a Forget).
 */
export function retireParts<D extends Retiring>(
	doc: D,
	keys: readonly string[],
	policy: RetirePolicy,
	options: { now?: number; all?: boolean } = {},
): { doc: D; due: string[] } {
	const now = options.now ?? Date.now();
	const fresh =
		policy.graceMs > 0 ? keys.map((key) => ({ key, at: new Date(now).toISOString() })) : [];
	const listed = [...(doc.retired ?? []), ...fresh];
	const cutoff = now - policy.graceMs;
	const keep = options.all
		? []
		: listed.filter((r) => Date.parse(r.at) > cutoff).slice(-MAX_RETIRED);
	const kept = new Set(keep.map((r) => r.key));
	const due = [...listed.map((r) => r.key), ...(policy.graceMs > 0 ? [] : keys)].filter(
		(key) => !kept.has(key) && key.startsWith(policy.prefix),
	);
	const next = { ...doc };
	if (keep.length > 0) next.retired = keep;
	else delete next.retired;
	return { doc: next, due: [...new Set(due)] };
}

/** The keys a manifest lists as retired (a sweep keeps them). */
export const retiredKeys = (doc: Retiring | undefined): string[] =>
	doc?.retired?.map((r) => r.key) ?? [];
