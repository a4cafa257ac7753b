// Keeping an index's term tiers (tiers.ts) up to date, a step after each add: stale tiers dropped,
// settled segments regrouped into a new tier once there are TIER_SEGMENTS of them, and the two newest
// tiers merged when they are of one size class (class k: up to TIER_SEGMENTS · GROWTH^k segments) or
// there are more than MAX_TIERS. An index of s segments thus keeps about two tiers per class, log(s /
// TIER_SEGMENTS) / log(GROWTH) classes, and each segment's postings are rewritten a few times per
// class: a search reads a few buckets per word, and upkeep costs a bounded share of each add. Every
// change is one compare-and-swap of the manifest that checks the segments it was built from are still
// listed as they were; buckets written for a change that lost are deleted, and so are those of a tier
// replaced, once the swap is stored. Tiers only ever hold what their segments hold: a tier found
// damaged or with a bucket lost is dropped, and its segments regrouped again.
import { CorruptDocumentError, IndexDamagedError } from '../../errors';
import type { Versioned } from '../../store/document-store';
import type { LexicalManifest } from './manifest';
import type { LexicalRef, LexicalSegment } from './segment';
import {
	bucketCount,
	bucketKeys,
	bucketOf,
	bucketsFor,
	dropStale,
	homeOf,
	newTierId,
	readBucket,
	ROW,
	sessionBucket,
	tiersOf,
	withoutTiers,
	writeBucket,
} from './tiers';
import type { TermBucket, TermTier, TierFiles, UsableTier } from './tiers';

/** Settled segments one tier is built from (their postings are held while it is built). */
export const TIER_SEGMENTS = 8;
/** The newest segments stay out of tiers: merges of small segments still replace them. */
export const SETTLING = 16;
/** Size classes of tiers grow by this factor. */
export const GROWTH = 8;
/** Past this many tiers the two newest merge whatever their sizes (a search reads each one's buckets). */
export const MAX_TIERS = 6;

/** A tier's size class: the smallest k with segments ≤ TIER_SEGMENTS · GROWTH^k. */
export function sizeClass(segments: number): number {
	let k = 0;
	for (let cap = TIER_SEGMENTS; segments > cap; cap *= GROWTH) k++;
	return k;
}
/** A tier's segments are numbered in 16 bits, and their documents in 16 (segments hold 4,096 at most). */
const MAX_TIER_SEGMENTS = 65_536;

/** What maintenance needs of an index (a LexicalIndex). */
export interface TieredIndex extends TierFiles {
	readonly name: string;
	readSegment(ref: LexicalRef): Promise<LexicalSegment | null>;
	deleteSegment(key: string): Promise<void>;
	update(
		fn: (
			cur: Versioned<LexicalManifest>,
		) => Promise<LexicalManifest | undefined> | LexicalManifest | undefined,
	): Promise<{ current: Versioned<LexicalManifest>; written: boolean }>;
}

/** Rows grouped into buckets by their key's home (`home(key)`), `count` of them. */
function grouped(lists: Map<string, number[]>, count: number, home: (key: string) => number) {
	const groups: TermBucket[] = Array.from({ length: count }, () => new Map());
	for (const [key, rows] of lists) groups[home(key)].set(key, Uint32Array.from(rows));
	lists.clear();
	return groups;
}

const rowsIn = (lists: Map<string, number[]>) => {
	let n = 0;
	for (const rows of lists.values()) n += rows.length / ROW;
	return n;
};

/** Each conversation of a segment: its chunks there, their lowest and highest message number. */
function sessionsIn(seg: LexicalSegment): Map<string, [number, number, number]> {
	const out = new Map<string, [number, number, number]>();
	for (const d of seg.docs) {
		const had = out.get(d.session_id);
		if (!had) out.set(d.session_id, [1, d.seq, d.seq]);
		else out.set(d.session_id, [had[0] + 1, Math.min(had[1], d.seq), Math.max(had[2], d.seq)]);
	}
	return out;
}

/** A new tier of these segments, its buckets written (listed nowhere yet). */
async function buildTier(index: TieredIndex, refs: LexicalRef[]): Promise<TermTier> {
	const words = new Map<string, number[]>();
	const sessions = new Map<string, number[]>();
	const tier = { id: newTierId(), segments: refs.length, n: 0, total: 0, bytes: 0 };
	for (const [ord, ref] of refs.entries()) {
		const seg = await index.readSegment(ref);
		if (!seg) throw new IndexDamagedError(index.name, [ref.key]);
		tier.n += seg.docs.length;
		for (const length of seg.lengths) tier.total += length;
		for (const [term, list] of seg.postings) {
			let rows = words.get(term);
			if (!rows) words.set(term, (rows = []));
			for (let i = 0; i < list.length; i += 2)
				rows.push(ord, list[i], list[i + 1], seg.lengths[list[i]]);
		}
		for (const [session, [count, from, to]] of sessionsIn(seg)) {
			let rows = sessions.get(session);
			if (!rows) sessions.set(session, (rows = []));
			rows.push(ord, count, from, to);
		}
	}
	const [postings, sessionRows] = [rowsIn(words), rowsIn(sessions)];
	const full: TermTier = {
		...tier,
		buckets: bucketsFor(postings),
		postings,
		sessionBuckets: bucketsFor(sessionRows),
		sessionRows,
	};
	const groups = [
		...grouped(words, full.buckets, (t) => bucketOf(t, full.buckets)),
		...grouped(sessions, full.sessionBuckets, (s) => sessionBucket(full, s) - full.buckets),
	];
	return writeAll(index, full, async (b) => groups[b]);
}

/** Buckets made and written at once by upkeep (each one read, merged and written in turn). */
const UPKEEP_WINDOW = 8;

/** Writes every bucket of a new tier; on a failure, deletes those it may have written and throws. */
async function writeAll(
	index: TieredIndex,
	tier: TermTier,
	bucket: (b: number) => Promise<TermBucket>,
): Promise<TermTier> {
	const count = bucketCount(tier);
	try {
		for (let b = 0; b < count; b += UPKEEP_WINDOW) {
			const group = Array.from({ length: Math.min(UPKEEP_WINDOW, count - b) }, (_, i) => b + i);
			// Every write of the group settled before any is undone.
			const sizes = await Promise.allSettled(
				group.map(async (g) => writeBucket(index, tier, g, await bucket(g))),
			);
			for (const size of sizes) {
				if (size.status === 'rejected') throw size.reason;
				tier.bytes += size.value;
			}
		}
		return tier;
	} catch (error) {
		for (const key of bucketKeys(index.segmentsPrefix, tier))
			await index.deleteSegment(key).catch(() => {});
		throw error;
	}
}

/**
 * The buckets of `from` whose keys may go to bucket `b` of `tier` (of the same kind): hashes' high bits
 * pick buckets, so a bucket splits into, or merges, neighbours in order.
 */
function sourcesOf(from: TermTier, tier: TermTier, b: number): number[] {
	const words = b < tier.buckets;
	const [mine, theirs] = words
		? [tier.buckets, from.buckets]
		: [tier.sessionBuckets, from.sessionBuckets];
	const at = words ? b : b - tier.buckets;
	const base = words ? 0 : from.buckets;
	if (theirs <= mine) return [base + Math.floor((at * theirs) / mine)];
	const per = theirs / mine;
	return Array.from({ length: per }, (_, i) => base + at * per + i);
}

/** One tier of two (the segments of `a`, then those of `b`), its buckets written bucket by bucket. */
async function mergeTiers(index: TieredIndex, a: UsableTier, b: UsableTier): Promise<TermTier> {
	const postings = a.tier.postings + b.tier.postings;
	const sessionRows = a.tier.sessionRows + b.tier.sessionRows;
	const tier: TermTier = {
		id: newTierId(),
		segments: a.tier.segments + b.tier.segments,
		n: a.tier.n + b.tier.n,
		total: a.tier.total + b.tier.total,
		buckets: bucketsFor(postings),
		postings,
		sessionBuckets: bucketsFor(sessionRows),
		sessionRows,
		bytes: 0,
	};
	return writeAll(index, tier, async (t) => {
		const out: TermBucket = new Map();
		for (const [from, offset] of [
			[a.tier, 0],
			[b.tier, a.tier.segments],
		] as const)
			for (const s of sourcesOf(from, tier, t)) {
				const bucket = await readBucket(index, from, s);
				if (!bucket) throw new TierGone();
				for (const [key, rows] of bucket) {
					if (!homeOf(tier, key, t)) continue;
					const moved = Uint32Array.from(rows);
					for (let i = 0; i < moved.length; i += ROW) moved[i] += offset;
					const had = out.get(key);
					out.set(key, had ? concat(had, moved) : moved);
				}
			}
		return out;
	});
}

function concat(x: Uint32Array, y: Uint32Array): Uint32Array {
	const out = new Uint32Array(x.length + y.length);
	out.set(x);
	out.set(y, x.length);
	return out;
}

/** A bucket of a tier being merged is not held (another process replaced the tier, or it was lost). */
class TierGone extends Error {}

/** Whether these segments are still listed as they were, in no tier (or in `was`, given). */
function stillListed(doc: LexicalManifest, refs: LexicalRef[], was?: ReadonlySet<string>): boolean {
	const listed = new Map(doc.segments.map((r) => [r.key, r]));
	return refs.every((r) => {
		const now = listed.get(r.key);
		return now !== undefined && (now.tier ? (was?.has(now.tier.id) ?? false) : !was);
	});
}

/** The manifest with `tier` over `refs` (in that order), in place of the tiers `replacing`. */
function withTier(doc: LexicalManifest, tier: TermTier, refs: LexicalRef[], replacing: string[]) {
	const ord = new Map(refs.map((r, i) => [r.key, i]));
	const base = withoutTiers(doc, new Set(replacing));
	const at = (doc.terms ?? []).findIndex((t) => replacing.includes(t.id));
	const terms = [...(base.terms ?? [])];
	terms.splice(at < 0 ? terms.length : at, 0, tier);
	return {
		...base,
		terms,
		segments: base.segments.map((r) =>
			ord.has(r.key) ? { ...r, tier: { id: tier.id, ord: ord.get(r.key)! } } : r,
		),
	};
}

/**
 * Lists a tier written for `refs` (replacing the tiers `replacing`, whose segments they are), unless
 * the manifest changed under it; deletes what is no longer listed either way. Returns whether it was.
 */
async function commit(
	index: TieredIndex,
	tier: TermTier,
	refs: LexicalRef[],
	replacing: TermTier[],
): Promise<boolean> {
	const ids = replacing.map((t) => t.id);
	const was = ids.length > 0 ? new Set(ids) : undefined;
	const result = await index.update((cur) => {
		if (cur.version === null || !stillListed(cur.doc, refs, was)) return undefined;
		if (ids.some((id) => !(cur.doc.terms ?? []).some((t) => t.id === id))) return undefined;
		return withTier(cur.doc, tier, refs, ids);
	});
	const gone = result.written ? replacing : [tier];
	for (const key of gone.flatMap((t) => bucketKeys(index.segmentsPrefix, t)))
		await index.deleteSegment(key).catch(() => {});
	return result.written;
}

/** Drops the stale tiers of the manifest (and those of `ids`), their buckets deleted once the swap is stored. */
async function dropTiers(index: TieredIndex, ids: ReadonlySet<string> = new Set()): Promise<void> {
	let keys: string[] = [];
	const result = await index.update((cur) => {
		if (cur.version === null) return undefined;
		const named = (cur.doc.terms ?? []).filter((t) => ids.has(t.id));
		const dropped = dropStale(withoutTiers(cur.doc, ids), index.segmentsPrefix);
		keys = [...named.flatMap((t) => bucketKeys(index.segmentsPrefix, t)), ...dropped.keys];
		return keys.length > 0 ? { ...dropped.doc, updated_at: new Date().toISOString() } : undefined;
	});
	if (result.written) for (const key of keys) await index.deleteSegment(key).catch(() => {});
}

/**
 * One step of upkeep on the manifest as an add left it: stale tiers dropped, else the two newest tiers
 * merged when due, else a tier built of the oldest settled segments in none.
 * Returns whether it changed anything (settleTiers repeats it until nothing is left to do).
 */
export async function maintainTiers(index: TieredIndex, doc: LexicalManifest): Promise<boolean> {
	const { usable, stale } = tiersOf(doc);
	if (stale.length > 0) {
		await dropTiers(index);
		return true;
	}
	const [a, b] = usable.slice(-2);
	const due =
		b !== undefined &&
		(sizeClass(a.tier.segments) <= sizeClass(b.tier.segments) || usable.length > MAX_TIERS) &&
		a.tier.segments + b.tier.segments <= MAX_TIER_SEGMENTS;
	if (due) return merge(index, a, b);
	const settled = doc.segments.slice(0, Math.max(0, doc.segments.length - SETTLING));
	const free = settled.filter((r) => !r.tier).slice(0, TIER_SEGMENTS);
	if (free.length < TIER_SEGMENTS) return false;
	return commit(index, await buildTier(index, free), free, []);
}

/**
 * The two newest tiers as one. A bucket damaged or not held drops both, if they are still listed
 * (another process may have merged them meanwhile): their segments, which hold the chunks, are
 * regrouped again, so upkeep never stops on one.
 */
async function merge(index: TieredIndex, a: UsableTier, b: UsableTier): Promise<boolean> {
	try {
		return await commit(
			index,
			await mergeTiers(index, a, b),
			[...a.refs, ...b.refs],
			[a.tier, b.tier],
		);
	} catch (error) {
		if (!(error instanceof TierGone || error instanceof CorruptDocumentError)) throw error;
		await dropTiers(index, new Set([a.tier.id, b.tier.id]));
		return true;
	}
}

/**
 * One step of upkeep after an add was stored: a damaged segment stops it without failing the add (a
 * search of the segment says so, and Status), a storage error does not.
 */
export async function upkeepAfterAdd(index: TieredIndex, doc: LexicalManifest): Promise<void> {
	try {
		await maintainTiers(index, doc);
	} catch (error) {
		if (!(error instanceof CorruptDocumentError || error instanceof IndexDamagedError)) throw error;
	}
}

/** Upkeep until nothing is left to do (after an upgrade's copy, or a bulk load). */
export async function settleTiers(
	index: TieredIndex & { readManifest(fresh?: boolean): Promise<Versioned<LexicalManifest>> },
): Promise<void> {
	for (let step = 0; step < 100_000; step++) {
		const m = await index.readManifest(true);
		if (m.version === null || !(await maintainTiers(index, m.doc))) return;
	}
}
