// Term tiers kept up to date (tiers.ts): how a tier of settled segments is built (their postings by
// word, and their conversations' rows) and how two are merged (bucket by bucket: a bucket's words come
// from the few buckets of each that hashed them). When upkeep builds and merges them is chunks/tiering.ts.
import { CorruptDocumentError, IndexDamagedError } from '../../errors';
import type { Versioned } from '../../store/document-store';
import {
	writeParts,
	maintainTiers as maintainSteps,
	settleTiers as settleSteps,
	upkeepAfterAdd as upkeepStep,
} from '../chunks/tiering';
import type { TierUpkeep } from '../chunks/tiering';
import type { LexicalManifest } from './manifest';
import type { LexicalRef, LexicalSegment } from './segment';
import {
	bucketCount,
	bucketKeys,
	bucketOf,
	bucketsFor,
	SESSION_BUCKET_ROWS,
	homeOf,
	newTierId,
	readBucket,
	ROW,
	sessionBucket,
	TIMED_ROW,
	timeKey,
	wordRow,
	conversationRows,
	termTiers,
	writeBucket,
} from './tiers';
import type { RetirePolicy } from '../chunks/retiring';
import { pastHalf } from './merge';
import { chained, mapped } from './postings';
import type { Postings } from './postings';
import type { BucketToWrite, TermBucket, TermTier, TierFiles, UsableTier } from './tiers';

/** What maintenance needs of an index (a LexicalIndex). */
export interface TieredIndex extends TierFiles {
	readonly name: string;
	readSegment(ref: LexicalRef): Promise<LexicalSegment | null>;
	deleteSegment(key: string): Promise<void>;
	readonly retiring: RetirePolicy;
	/** Chunks a segment holds at most (a merge's cap). */
	readonly segmentChunks: number;
	/** Rows of a new tier's bucket of conversations, about (SESSION_BUCKET_ROWS unless a test says). */
	readonly sessionBucketRows?: number;
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

const rowsIn = (lists: Map<string, number[]>, width: number) => {
	let n = 0;
	for (const rows of lists.values()) n += rows.length / width;
	return n;
};

/** A new tier of these segments, its buckets written (listed nowhere yet). */
async function buildTier(index: TieredIndex, refs: LexicalRef[]): Promise<TermTier> {
	const words = new Map<string, number[]>();
	const sessions = new Map<string, number[]>();
	const tier = {
		id: newTierId(),
		segments: refs.length,
		n: 0,
		total: 0,
		bytes: 0,
		timed: true,
		binarySessions: true,
	};
	for (const [ord, ref] of refs.entries()) {
		const seg = await index.readSegment(ref);
		if (!seg) throw new IndexDamagedError(index.name, [ref.key]);
		tier.n += seg.docs.length - (seg.gone ?? 0);
		for (const length of seg.lengths) tier.total += length;
		const times = seg.docs.map((d) => timeKey(d.created_at));
		for (const [term, list] of seg.postings) {
			let rows = words.get(term);
			if (!rows) words.set(term, (rows = []));
			for (let i = 0; i < list.length; i += 2)
				rows.push(ord, list[i], list[i + 1], seg.lengths[list[i]], times[list[i]]);
		}
		for (const [session, [count, from, to]] of conversationRows(seg.docs)) {
			let rows = sessions.get(session);
			if (!rows) sessions.set(session, (rows = []));
			rows.push(ord, count, from, to);
		}
	}
	const [postings, sessionRows] = [rowsIn(words, TIMED_ROW), rowsIn(sessions, ROW)];
	const full: TermTier = {
		...tier,
		buckets: bucketsFor(postings),
		postings,
		sessionBuckets: bucketsFor(sessionRows, index.sessionBucketRows ?? SESSION_BUCKET_ROWS),
		sessionRows,
	};
	const groups = [
		...grouped(words, full.buckets, (t) => bucketOf(t, full.buckets)),
		...grouped(sessions, full.sessionBuckets, (s) => sessionBucket(full, s) - full.buckets),
	];
	return writeAll(index, full, async (b) => groups[b]);
}

/** Writes every bucket of a new tier; on a failure, deletes those it may have written and throws. */
async function writeAll(
	index: TieredIndex,
	tier: TermTier,
	bucket: (b: number) => Promise<BucketToWrite>,
): Promise<TermTier> {
	const write = async (b: number) => writeBucket(index, tier, b, await bucket(b));
	const keys = bucketKeys(index.segmentsPrefix, tier);
	tier.bytes += await writeParts(bucketCount(tier), write, keys, (k) => index.deleteSegment(k));
	return tier;
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
		sessionBuckets: bucketsFor(sessionRows, index.sessionBucketRows ?? SESSION_BUCKET_ROWS),
		sessionRows,
		bytes: 0,
		// Timed only when both are: a tier built before has no capture seconds to carry over.
		...(a.tier.timed && b.tier.timed ? { timed: true } : {}),
		// Its buckets are written anew: conversations in the binary form whatever the two had.
		binarySessions: true,
	};
	// A common word's rows stay in their source buckets' compressed blocks, moved a block at a time as
	// the new bucket is written: never all in memory.
	return writeAll(index, tier, async (t) => {
		const out = new Map<string, Postings>();
		const width = t < tier.buckets ? wordRow(tier) : ROW;
		for (const [from, offset] of [
			[a.tier, 0],
			[b.tier, a.tier.segments],
		] as const)
			for (const s of sourcesOf(from, tier, t)) {
				const bucket = await readBucket(index, from, s);
				if (!bucket) throw new TierGone();
				const had = t < tier.buckets ? wordRow(from) : ROW;
				for (const [key, rows] of bucket) {
					if (!homeOf(tier, key, t)) continue;
					const moved = mapped(rows, (rows.length / had) * width, (r) =>
						moveRows(r, had, width, offset),
					);
					const before = out.get(key);
					out.set(key, before ? chained(before, moved) : moved);
				}
			}
		return out;
	});
}

/** Rows of `had` values as rows of `width` (the first values kept), their segment ordinals moved. */
function moveRows(rows: Uint32Array, had: number, width: number, offset: number): Uint32Array {
	const out = new Uint32Array((rows.length / had) * width);
	for (let i = 0, j = 0; i < rows.length; i += had, j += width) {
		out.set(rows.subarray(i, i + width), j);
		out[j] += offset;
	}
	return out;
}

/** A bucket of a tier being merged is not held (another process replaced the tier, or it was lost). */
class TierGone extends Error {}

/** The upkeep of an index's term tiers. */
function upkeepOf(index: TieredIndex): TierUpkeep<LexicalManifest, LexicalRef, TermTier> {
	return {
		list: termTiers,
		keysOf: (t) => bucketKeys(index.segmentsPrefix, t),
		build: (refs) => buildTier(index, refs),
		merge: (a, b) => mergeTiers(index, a, b),
		gone: (error) => error instanceof TierGone || error instanceof CorruptDocumentError,
		// A merge never takes a segment past half the cap again (merge.ts), full or not.
		final: (r) => pastHalf(r.count, index.segmentChunks),
		deleteKey: (key) => index.deleteSegment(key),
		retiring: index.retiring,
		stamp: (doc) => ({ ...doc, updated_at: new Date().toISOString() }),
		update: (fn) => index.update(fn),
	};
}

/** One step of upkeep of an index's term tiers (chunks/tiering.ts). */
export const maintainTiers = (index: TieredIndex, doc: LexicalManifest) =>
	maintainSteps(upkeepOf(index), doc);

/** One step of upkeep after an add was stored (chunks/tiering.ts). */
export const upkeepAfterAdd = (index: TieredIndex, doc: LexicalManifest) =>
	upkeepStep(upkeepOf(index), doc);

/** Upkeep until nothing is left to do (after an upgrade's copy, or a bulk load). */
export const settleTiers = (
	index: TieredIndex & { readManifest(fresh?: boolean): Promise<Versioned<LexicalManifest>> },
) => settleSteps(upkeepOf(index), () => index.readManifest(true));
