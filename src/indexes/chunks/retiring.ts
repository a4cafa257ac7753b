// Parts a swap replaced (segments a merge took in, a replaced tier's buckets), kept a while before they
// are deleted: a search of an index too large to read at once (the base-wide one) reads its parts for
// seconds after it read the manifest, and a part deleted under it makes it start over; under a steady
// stream of syncs, every attempt could lose a part. So such an index lists what it replaced with the
// time, and a later swap deletes what has been replaced for longer than a search takes. A Forget takes
// every retired part at once: they may hold what is forgotten.
import { z } from 'zod';

/** A part the manifest no longer uses, since when, and its size. */
export interface RetiredPart {
	key: string;
	at: string;
	bytes: number;
}

/** A part a swap replaces. */
export type Part = Omit<RetiredPart, 'at'>;

/** What a manifest that retires parts holds of them. */
export interface Retiring {
	retired?: RetiredPart[];
}

/** How long a replaced part of an index too large to read at once is kept. */
export const RETIRE_GRACE_MS = 2 * 60_000;
/**
 * Parts listed as retired at most, and their bytes at most: past either, the oldest go at once (a
 * manifest stays small, about 60 KiB of them beside a base-wide manifest of hundreds, and storage holds
 * little more). Ten syncs a second fill the list in about 15 seconds; the merge of two large tiers
 * passes the bytes at once, and its buckets go as before (a search reading them starts over).
 */
export const MAX_RETIRED = 512;
export const MAX_RETIRED_BYTES = 64 * 2 ** 20;

export const retiredSchema = z
	.array(
		z.object({
			key: z.string().min(1),
			at: z.iso.datetime({ offset: true }),
			bytes: z.number().int().min(0),
		}),
	)
	.optional();

/** How an index deletes what it replaced: at once (grace 0), or after a grace. */
export interface RetirePolicy {
	/** Only keys under this prefix are ever deleted (a manifest names them). */
	prefix: string;
	graceMs: number;
}

/**
 * `doc` with `parts` retired now, and what is due: retired parts past the grace (or past MAX_RETIRED
 * or MAX_RETIRED_BYTES, oldest first), taken off the list, to delete once the swap is stored. `all`:
 * every retired part is due (a Forget).
 */
export function retireParts<D extends Retiring>(
	doc: D,
	parts: readonly Part[],
	policy: RetirePolicy,
	options: { now?: number; all?: boolean } = {},
): { doc: D; due: string[] } {
	const now = options.now ?? Date.now();
	const at = new Date(now).toISOString();
	const fresh = policy.graceMs > 0 ? parts.map((p) => ({ ...p, at })) : [];
	const listed = [...(doc.retired ?? []), ...fresh];
	const cutoff = now - policy.graceMs;
	const keep = options.all ? [] : newest(listed.filter((r) => Date.parse(r.at) > cutoff));
	const kept = new Set(keep.map((r) => r.key));
	const due = [...listed, ...(policy.graceMs > 0 ? [] : parts)]
		.map((p) => p.key)
		.filter((key) => !kept.has(key) && key.startsWith(policy.prefix));
	const next = { ...doc };
	if (keep.length > 0) next.retired = keep;
	else delete next.retired;
	return { doc: next, due: [...new Set(due)] };
}

/** The newest of `parts` (listed oldest first) within MAX_RETIRED and MAX_RETIRED_BYTES. */
function newest(parts: RetiredPart[]): RetiredPart[] {
	let bytes = 0;
	let from = parts.length;
	while (from > 0 && parts.length - from < MAX_RETIRED) {
		bytes += parts[from - 1].bytes;
		if (bytes > MAX_RETIRED_BYTES) break;
		from--;
	}
	return parts.slice(from);
}

/** The keys a manifest lists as retired (a sweep keeps them). */
export const retiredKeys = (doc: Retiring | undefined): string[] =>
	doc?.retired?.map((r) => r.key) ?? [];
