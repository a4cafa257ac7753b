// Tiers of an index too large to read whole, whatever they regroup (a word index's postings by word, a
// vector index's rows by cell): which are usable, and upkeep a step after each add. Settled segments
// (all but the newest SETTLING, and any segment no merge will replace: `final`) are regrouped
// TIER_SEGMENTS at a time into a new tier; the two newest tiers merge when they are of one size class
// (class k: up to TIER_SEGMENTS · GROWTH^k segments) or there are more than MAX_TIERS. An index of s segments thus keeps about two tiers per class, and each
// segment is rewritten a few times per class. Every change is one compare-and-swap of the manifest that
// checks the segments it was built from are still listed as they were; what a change that lost wrote
// is deleted, and so is what a replaced tier held, once the swap is stored. A tier is used only while
// every segment it was built from is listed as it was, in order: a Forget rewriting one drops it.
import { randomBytes } from 'node:crypto';

import { deleteParts } from '../../common/parallel';
import { CorruptDocumentError, IndexDamagedError, TiersUnsettledError } from '../../errors';
import type { Versioned } from '../../store/document-store';
import { retireParts } from './retiring';
import type { RetirePolicy, Retiring } from './retiring';

/**
 * Bytes a Forget's rewrite of a tier's buckets holds at once, about: each bucket it takes out rows of is
 * read, and written again beside it. Buckets of a large base are megabytes: a rewrite of many of them
 * at once would hold tens of MiB.
 */
export const REWRITE_BYTES = 8 * 2 ** 20;

/** Settled segments one tier is built from. */
export const TIER_SEGMENTS = 8;
/** The newest segments stay out of tiers: merges of small segments still replace them. */
export const SETTLING = 16;
/** Size classes of tiers grow by this factor. */
export const GROWTH = 8;
/** Past this many tiers the two newest merge whatever their sizes (a search reads each one). */
export const MAX_TIERS = 6;
/** A tier's segments are numbered in 16 bits. */
const MAX_TIER_SEGMENTS = 65_536;

/** A manifest of segments, some placed in tiers. */
type Listing<R> = { segments: R[] } & Retiring;

/** Parts of a new tier made and written at once (each one's rows are held while it is written). */
const UPKEEP_WINDOW = 8;

/**
 * Writes the `count` parts of a new tier, UPKEEP_WINDOW at a time (`write(b)` makes and stores part
 * `b` and gives its stored size); on a failure, deletes every part it may have written (`keys`) and
 * throws. Returns the bytes written.
 */
export async function writeParts(
	count: number,
	write: (b: number) => Promise<number>,
	keys: readonly string[],
	deleteKey: (key: string) => Promise<void>,
): Promise<number> {
	let bytes = 0;
	try {
		for (let b = 0; b < count; b += UPKEEP_WINDOW) {
			const group = Array.from({ length: Math.min(UPKEEP_WINDOW, count - b) }, (_, i) => b + i);
			// Every write of the group settled before any is undone.
			const sizes = await Promise.allSettled(group.map(write));
			for (const size of sizes) {
				if (size.status === 'rejected') throw size.reason;
				bytes += size.value;
			}
		}
		return bytes;
	} catch (error) {
		await deleteParts(keys, deleteKey);
		throw error;
	}
}

/** A tier as its parts' keys name it: its ID, and the versions of parts a Forget wrote again. */
export interface PartNames {
	id: string;
	/** By part number: each rewritten part's version, part of its key (a new object, never a changed one). */
	versions?: Record<string, string>;
}

/** Where part `b` of a tier is stored: `{prefix}{kind}-{id}-{b}[-{version}].{ext}`. */
export function tierPartKey(prefix: string, kind: string, tier: PartNames, b: number, ext: string) {
	const version = tier.versions?.[b];
	return `${prefix}${kind}-${tier.id}-${b}${version ? `-${version}` : ''}.${ext}`;
}

/** A new version of a part (random: two rewrites never name the same object). */
export const newPartVersion = () => randomBytes(6).toString('hex');

/** A tier's size class: the smallest k with segments ≤ TIER_SEGMENTS · GROWTH^k. */
export function sizeClass(segments: number): number {
	let k = 0;
	for (let cap = TIER_SEGMENTS; segments > cap; cap *= GROWTH) k++;
	return k;
}

/** A segment's place in a tier (on its manifest entry). */
export interface TierPlace {
	id: string;
	ord: number;
}

export interface Placed {
	key: string;
	tier?: TierPlace;
}

export interface Tier {
	id: string;
	/** Segments it was built from (each names it in its entry's `tier`). */
	segments: number;
	/** What its parts take in storage. */
	bytes: number;
}

/** A tier with its segments in order, when every one is listed as it was built. */
export interface Usable<R, T> {
	tier: T;
	refs: R[];
}

/** Where a manifest lists its tiers of one kind. */
export interface TierList<D extends Listing<R>, R extends Placed, T extends Tier> {
	of(doc: D): T[];
	with(doc: D, tiers: T[], segments: R[]): D;
	/** Whether a tier still fits the manifest beyond its segments (a tier of cells: its codebook). */
	fits?(doc: D, tier: T): boolean;
}

/** The manifest's tiers whose segments are all listed; the others are stale (upkeep drops them). */
export function tiersOf<D extends Listing<R>, R extends Placed, T extends Tier>(
	list: TierList<D, R, T>,
	doc: D,
): { usable: Array<Usable<R, T>>; stale: T[] } {
	const byId = new Map<string, R[]>();
	for (const r of doc.segments)
		if (r.tier) byId.set(r.tier.id, [...(byId.get(r.tier.id) ?? []), r]);
	const usable: Array<Usable<R, T>> = [];
	const stale: T[] = [];
	for (const tier of list.of(doc)) {
		const refs = (byId.get(tier.id) ?? []).sort((a, b) => a.tier!.ord - b.tier!.ord);
		const whole = refs.length === tier.segments && refs.every((r, i) => r.tier!.ord === i);
		if (whole && (list.fits?.(doc, tier) ?? true)) usable.push({ tier, refs });
		else stale.push(tier);
	}
	return { usable, stale };
}

/** The manifest without these tiers (their segments no longer name them). */
export function withoutTiers<D extends Listing<R>, R extends Placed, T extends Tier>(
	list: TierList<D, R, T>,
	doc: D,
	ids: ReadonlySet<string>,
): D {
	if (ids.size === 0) return doc;
	const segments = doc.segments.map((r) => {
		if (!r.tier || !ids.has(r.tier.id)) return r;
		const rest = { ...r };
		delete rest.tier;
		return rest;
	});
	return list.with(
		doc,
		list.of(doc).filter((t) => !ids.has(t.id)),
		segments,
	);
}

/** The manifest without its stale tiers, and what they stored (to delete once it is stored). */
export function dropStale<D extends Listing<R>, R extends Placed, T extends Tier>(
	list: TierList<D, R, T>,
	doc: D,
	keysOf: (tier: T) => string[],
): { doc: D; keys: string[] } {
	const { stale } = tiersOf(list, doc);
	if (stale.length === 0) return { doc, keys: [] };
	const keys = stale.flatMap(keysOf);
	return { doc: withoutTiers(list, doc, new Set(stale.map((t) => t.id))), keys };
}

/** What upkeep needs of an index and of its kind of tier. */
export interface TierUpkeep<D extends Listing<R>, R extends Placed, T extends Tier> {
	readonly list: TierList<D, R, T>;
	/** What a tier stores (deleted when it is dropped or replaced). */
	keysOf(tier: T): string[];
	/** A new tier of these settled segments, stored, listed nowhere yet. */
	build(refs: R[]): Promise<T>;
	/** One tier of two (the segments of `a`, then `b`'s); throws `gone` errors when a part is not held. */
	merge(a: Usable<R, T>, b: Usable<R, T>): Promise<T>;
	/** Errors of a merge that drop both tiers (a part lost or damaged) rather than stop upkeep. */
	gone(error: unknown): boolean;
	/**
	 * A segment no merge of segments will replace (full, or past half a cap): settled however new.
	 * Left out of tiers, each one was read whole by every search until 16 newer ones came.
	 */
	final(ref: R): boolean;
	deleteKey(key: string): Promise<void>;
	/** How the parts of a tier a merge replaced are deleted (retiring.ts). */
	readonly retiring: RetirePolicy;
	/** The manifest as a drop of tiers stores it (its time of change set). */
	stamp(doc: D): D;
	update(
		fn: (cur: Versioned<D>) => D | undefined,
	): Promise<{ current: Versioned<D>; written: boolean }>;
}

/** What a tier stores, each part with its share of the tier's bytes. */
const partsOf =
	<T extends Tier>(up: { keysOf(tier: T): string[] }) =>
	(tier: T) => {
		const keys = up.keysOf(tier);
		return keys.map((key) => ({ key, bytes: Math.ceil(tier.bytes / keys.length) }));
	};

/** Whether these segments are still listed as they were, in no tier (or in `was`, given). */
function stillListed<R extends Placed>(
	segments: readonly R[],
	refs: readonly R[],
	was?: ReadonlySet<string>,
): boolean {
	const listed = new Map(segments.map((r) => [r.key, r]));
	return refs.every((r) => {
		const now = listed.get(r.key);
		return now !== undefined && (now.tier ? (was?.has(now.tier.id) ?? false) : !was);
	});
}

/** The manifest with `tier` over `refs` (in that order), in place of the tiers `replacing`. */
function withTier<D extends Listing<R>, R extends Placed, T extends Tier>(
	list: TierList<D, R, T>,
	doc: D,
	tier: T,
	refs: R[],
	replacing: string[],
): D {
	const ord = new Map(refs.map((r, i) => [r.key, i]));
	const base = withoutTiers(list, doc, new Set(replacing));
	const at = list.of(doc).findIndex((t) => replacing.includes(t.id));
	const tiers = [...list.of(base)];
	tiers.splice(at < 0 ? tiers.length : at, 0, tier);
	const segments = base.segments.map((r) =>
		ord.has(r.key) ? { ...r, tier: { id: tier.id, ord: ord.get(r.key)! } } : r,
	);
	return list.with(base, tiers, segments);
}

/**
 * Lists a tier written for `refs` (replacing the tiers `replacing`, whose segments they are), unless
 * the manifest changed under it; deletes what is no longer listed either way. Returns whether it was.
 */
async function commit<D extends Listing<R>, R extends Placed, T extends Tier>(
	up: TierUpkeep<D, R, T>,
	tier: T,
	refs: R[],
	replacing: T[],
): Promise<boolean> {
	const ids = replacing.map((t) => t.id);
	const was = ids.length > 0 ? new Set(ids) : undefined;
	let due: string[] = [];
	const result = await up.update((cur) => {
		if (cur.version === null || !stillListed(cur.doc.segments, refs, was)) return undefined;
		// A tier merged is still listed as the merge read it (a Forget may have rewritten its parts).
		if (!listedAsRead(up.list.of(cur.doc), replacing)) return undefined;
		// The merged tiers hold what the new one holds: kept a while for searches reading them.
		const next = withTier(up.list, cur.doc, tier, refs, ids);
		const retired = retireParts(next, replacing.flatMap(partsOf(up)), up.retiring);
		due = retired.due;
		return retired.doc;
	});
	const gone = result.written ? due : up.keysOf(tier);
	await deleteParts(gone, (key) => up.deleteKey(key));
	return result.written;
}

/** Whether every tier of `tiers` is listed in `listed` as it is there (same parts, same sizes). */
export function listedAsRead<T extends Tier>(listed: readonly T[], tiers: readonly T[]): boolean {
	const now = new Map(listed.map((t) => [t.id, JSON.stringify(t)]));
	return tiers.every((t) => now.get(t.id) === JSON.stringify(t));
}

/**
 * Drops the stale tiers of the manifest (and `named`, while listed as they are: a tier a Forget has
 * rewritten since is another), what they stored deleted once the swap is stored.
 */
async function dropTiers<D extends Listing<R>, R extends Placed, T extends Tier>(
	up: TierUpkeep<D, R, T>,
	named: readonly T[] = [],
): Promise<void> {
	let keys: string[] = [];
	const result = await up.update((cur) => {
		if (cur.version === null) return undefined;
		const asRead = new Set(named.map((t) => JSON.stringify(t)));
		const ids: Set<string> = new Set(
			up.list
				.of(cur.doc)
				.filter((t) => asRead.has(JSON.stringify(t)))
				.map((t) => t.id),
		);
		const listed = up.list.of(cur.doc).filter((t) => ids.has(t.id));
		const dropped = dropStale(up.list, withoutTiers(up.list, cur.doc, ids), (t) => up.keysOf(t));
		keys = [...listed.flatMap((t) => up.keysOf(t)), ...dropped.keys];
		return keys.length > 0 ? up.stamp(dropped.doc) : undefined;
	});
	if (result.written) await deleteParts(keys, (key) => up.deleteKey(key));
}

/**
 * One step of upkeep on the manifest as an add left it: stale tiers dropped, else the two newest tiers
 * merged when due, else a tier built of the oldest settled segments in none. Returns whether it
 * changed anything (settleTiers repeats it until nothing is left to do).
 */
export async function maintainTiers<D extends Listing<R>, R extends Placed, T extends Tier>(
	up: TierUpkeep<D, R, T>,
	doc: D,
): Promise<boolean> {
	const { usable, stale } = tiersOf(up.list, doc);
	if (stale.length > 0) {
		await dropTiers(up);
		return true;
	}
	const [a, b] = usable.slice(-2);
	const due =
		b !== undefined &&
		(sizeClass(a.tier.segments) <= sizeClass(b.tier.segments) || usable.length > MAX_TIERS) &&
		a.tier.segments + b.tier.segments <= MAX_TIER_SEGMENTS;
	if (due) {
		try {
			return await commit(up, await up.merge(a, b), [...a.refs, ...b.refs], [a.tier, b.tier]);
		} catch (error) {
			// What the tiers hold is still in their segments: both dropped, the segments regrouped again.
			if (!up.gone(error)) throw error;
			await dropTiers(up, [a.tier, b.tier]);
			return true;
		}
	}
	const newest = doc.segments.length - SETTLING;
	const free = doc.segments
		.filter((r, i) => !r.tier && (i < newest || up.final(r)))
		.slice(0, TIER_SEGMENTS);
	if (free.length < TIER_SEGMENTS) return false;
	return commit(up, await up.build(free), free, []);
}

/**
 * One step of upkeep after an add was stored: a damaged segment stops it without failing the add (a
 * search of the segment says so, and Status), a storage error does not.
 */
export async function upkeepAfterAdd<D extends Listing<R>, R extends Placed, T extends Tier>(
	up: TierUpkeep<D, R, T>,
	doc: D,
): Promise<void> {
	try {
		await maintainTiers(up, doc);
	} catch (error) {
		if (!(error instanceof CorruptDocumentError || error instanceof IndexDamagedError)) throw error;
	}
}

/**
 * Upkeep until nothing is left to do (after an upgrade's copy, or a bulk load). Settling takes about
 * a build and a merge per batch of segments, plus a rebuild for each tier a failed merge dropped: past
 * a few times that, the steps undo each other (a merge that fails every time), and it stops with an
 * error rather than rebuilding the same tiers for ever.
 */
export async function settleTiers<D extends Listing<R>, R extends Placed, T extends Tier>(
	up: TierUpkeep<D, R, T>,
	read: () => Promise<Versioned<D>>,
): Promise<void> {
	let budget: number | undefined;
	for (let step = 0; ; step++) {
		const m = await read();
		if (m.version === null) return;
		budget ??=
			4 * (Math.ceil(m.doc.segments.length / TIER_SEGMENTS) + up.list.of(m.doc).length) + 16;
		if (step >= budget) throw new TiersUnsettledError(step);
		if (!(await maintainTiers(up, m.doc))) return;
	}
}
