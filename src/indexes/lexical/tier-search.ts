// A search's use of term tiers (tiers.ts): the statistics and the best matches of the segments a tier
// covers, from the buckets of the query's own words, then the chunks of those matches from their
// segments. Scores are summed term by term in the query's order, as a pass over the segments sums
// them, so the matches and their order are the ones reading every segment gives.
import { shareLoop } from '../../common/loop-turns';
import { mapLimit, withBytes } from '../../common/parallel';
import type { ReadBudget } from '../../common/parallel';
import { CorruptDocumentError } from '../../errors';
import { chunkHeapBytes, chunkOrder } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import { WINDOW } from '../chunks/search-reads';
import type { SearchReads } from '../chunks/search-reads';
import { TopK } from '../chunks/top-k';
import { idfOf, weigh } from './bm25';
import type { ScopeStats } from './bm25';
import { docAt, docsOf, sessionsIn } from './segment';
import type { LexicalSegment } from './segment';
import { bucketKey, bucketOf, readBucket, ROW, sessionBucket, wordRow } from './tiers';
import type { TierFiles, UsableTier } from './tiers';
import { termCounts } from './tokenize';
import { RowCursor } from './postings';
import type { Postings } from './postings';

/** Each tier's rows of each query term (absent: no document of the tier holds it). */
export type TierRows = Array<Map<string, Postings>>;

/**
 * Segments read at once for the best matches' chunks: read lazily, each holds its stored bytes and a
 * block or two (stored-segment.ts); one after another, each waited for the round trip of the last.
 */
const SEGMENT_READS = 8;

/** A tier's files as a search reads them: within its reads' budget, when it has one. */
type SearchedFiles = TierFiles & { readonly reads?: SearchReads };

/**
 * The rows of `keys` (words or conversations, as `bucket` places them) in each tier, each bucket read
 * once, WINDOW at a time for all tiers together (a search's read window, chunks/search-reads.ts);
 * `gone(key)` when a listed bucket is not held.
 */
async function rowsOf(
	files: SearchedFiles,
	tiers: readonly UsableTier[],
	keys: readonly string[],
	bucket: (tier: UsableTier['tier'], key: string) => number,
	gone: (key: string) => Error,
): Promise<TierRows> {
	const out: TierRows = tiers.map(() => new Map());
	const reads = tiers.flatMap(({ tier }, i) =>
		[...new Set(keys.map((k) => bucket(tier, k)))].map((b) => ({ i, tier, b })),
	);
	// Each bucket's rows taken as it comes: a bucket of conversations decoded holds megabytes. Its
	// bytes count in the search's budget from its read until its rows are taken.
	const budget = files.reads?.budget;
	await mapLimit(reads, WINDOW, async ({ i, tier, b }) => {
		await withBytes(budget, bucketBytesOf(tier, b), async () => {
			const got = await readBucket(files, tier, b);
			if (!got) throw gone(bucketKey(files.segmentsPrefix, tier, b));
			await shareLoop();
			for (const k of keys) {
				const list = got.get(k);
				if (list) out[i].set(k, list);
			}
		});
	});
	return out;
}

/**
 * What a row of conversations weighs against a value of a word row: its ROW values and its
 * conversation's ID (stored once per conversation, about as long as eight values). Measured stored:
 * small tiers' buckets of conversations weigh about this, large ones less (so it errs on the heavy side).
 */
const SESSION_ROW_VALUES = ROW + 8;

/**
 * What one of a tier's buckets weighs stored, about: its kind's share of the tier's bytes (words or
 * conversations, by their rows), shared evenly among that kind's buckets.
 */
export function bucketBytesOf(tier: UsableTier['tier'], b: number): number {
	const words = tier.postings * wordRow(tier);
	const sessions = tier.sessionRows * SESSION_ROW_VALUES;
	const share = words + sessions > 0 ? words / (words + sessions) : 1;
	return b < tier.buckets
		? (tier.bytes * share) / tier.buckets
		: (tier.bytes * (1 - share)) / Math.max(1, tier.sessionBuckets);
}

/** The rows of `terms` in each tier (see rowsOf). */
export const tierRows = (
	files: SearchedFiles,
	tiers: readonly UsableTier[],
	terms: readonly string[],
	gone: (key: string) => Error,
) => rowsOf(files, tiers, terms, (tier, t) => bucketOf(t, tier.buckets), gone);

/** Where a conversation is in a tier's segment: the segment, its lowest and highest message number. */
export interface SessionSpan {
	key: string;
	from: number;
	to: number;
}

/**
 * Every tiered segment holding chunks of these conversations, with the message numbers it holds (by
 * the tiers' buckets of conversations: exact, where a segment's bloom filter may say "maybe" to every
 * conversation, and a long conversation is in many segments).
 */
export async function tierSessionRows(
	files: SearchedFiles,
	tiers: readonly UsableTier[],
	sessions: readonly string[],
	gone: (key: string) => Error,
): Promise<Map<string, SessionSpan[]>> {
	const rows = await rowsOf(files, tiers, sessions, sessionBucket, gone);
	const out = new Map<string, SessionSpan[]>(sessions.map((s) => [s, []]));
	tiers.forEach(({ refs }, i) => {
		for (const [s, postings] of rows[i])
			for (const list of postings.blocks())
				for (let r = 0; r < list.length; r += ROW)
					out.get(s)!.push({ key: refs[list[r]].key, from: list[r + 2], to: list[r + 3] });
	});
	return out;
}

/** The tiers' share of a search's statistics, added to those of the other segments. */
export function withTierStats(
	stats: { n: number; total: number; df: Map<string, number> },
	tiers: readonly UsableTier[],
	rows: TierRows,
): void {
	tiers.forEach(({ tier }, i) => {
		stats.n += tier.n;
		stats.total += tier.total;
		for (const [term, list] of rows[i])
			if (stats.df.has(term)) stats.df.set(term, stats.df.get(term)! + list.length / wordRow(tier));
	});
}

/** A chunk's BM25 by its own words under `stats`, summed in the query's order. */
export function ownScore(chunk: IndexedChunk, terms: readonly string[], stats: ScopeStats): number {
	const { terms: counts, length } = termCounts(chunk.text);
	const avg = stats.total / stats.n || 1;
	let score = 0;
	for (const t of terms) {
		const df = stats.df.get(t) ?? 0;
		const tf = counts.get(t) ?? 0;
		if (df > 0 && tf > 0) score += weigh(idfOf(stats.n, df), tf, length, avg);
	}
	return score;
}

/** Where a tier's documents are read from, and which chunks a newer copy supersedes. */
export interface TierSource {
	tiers: readonly UsableTier[];
	rows: TierRows;
	read: (key: string) => Promise<LexicalSegment>;
	superseded: ReadonlySet<string>;
	/** Keeps the conversations of the best from the segments read for them (the next step's reads). */
	held?: HeldSessions;
	/** What the search's readers may hold at once, together: a segment's bytes count until it is used. */
	budget?: ReadBudget;
}

/** Bytes of chunks HeldSessions keeps, at most. */
const HELD_BYTES = 4 * 2 ** 20;

/**
 * The chunks of some conversations in segments read for the best matches, kept so that finding the
 * messages beside the best reads no segment a second time: per segment, which conversations it kept
 * whole (every chunk of theirs it holds, none a newer copy supersedes). Past HELD_BYTES it keeps no
 * more (those segments are read again); what it kept stays valid.
 */
export class HeldSessions {
	private bytes = 0;
	private full = false;
	private readonly bySegment = new Map<
		string,
		{ present: ReadonlySet<string>; sessions: Set<string>; chunks: IndexedChunk[] }
	>();

	constructor(private readonly limit = HELD_BYTES) {}

	note(seg: LexicalSegment, sessions: Set<string>, skip: ReadonlySet<string>) {
		if (this.full || this.bySegment.has(seg.key)) return;
		const chunks = docsOf(seg, sessions).filter((d) => !skip.has(d.id));
		const bytes = chunkHeapBytes(chunks);
		if (this.bytes + bytes > this.limit) {
			this.full = true;
			return;
		}
		this.bytes += bytes;
		this.bySegment.set(seg.key, { present: sessionsIn(seg), sessions, chunks });
	}

	/**
	 * The segment's chunks of these conversations, when it kept every one of them that it holds (a
	 * conversation its bloom filter only seemed to hold is not in it).
	 */
	of(key: string, sessions: readonly string[]): IndexedChunk[] | undefined {
		const held = this.bySegment.get(key);
		if (!held || !sessions.every((s) => held.sessions.has(s) || !held.present.has(s)))
			return undefined;
		const wanted = new Set(sessions);
		return held.chunks.filter((c) => wanted.has(c.session_id));
	}
}

/** Documents walked between two checks of the event loop's turn (shareLoop). */
const WALK_SLICE = 4096;

/**
 * Every tier document holding a query term with its score and its capture second (timeKey; 0 in a tier
 * that is not timed), document after document: each term's rows are in (segment, document) order, so
 * the lists are merged as they are and nothing per document is held (a common word may be in millions).
 * Walked WALK_SLICE documents at a time, the event loop turning between (the walk itself stays
 * synchronous: an await inside its loop slows every step).
 */
async function eachScored(
	source: TierSource,
	terms: readonly string[],
	stats: ScopeStats,
	fn: (at: number, score: number, time: number) => void,
): Promise<void> {
	const avg = stats.total / stats.n || 1;
	const used = terms.filter((t) => (stats.df.get(t) ?? 0) > 0);
	const idf = used.map((t) => idfOf(stats.n, stats.df.get(t)!));
	for (const [i, rows] of source.rows.entries()) {
		const width = wordRow(source.tiers[i].tier);
		// Each list walked block by block: a common word's rows are never all decoded at once.
		const lists = used.map((t) => new RowCursor(rows.get(t), width));
		const walk = { lists, idf, avg, timed: width > ROW, base: i * 2 ** 32 };
		while (walkSome(walk, WALK_SLICE, fn)) await shareLoop();
	}
}

/** Up to `most` documents of one tier's walk (eachScored); false once its lists are done. */
function walkSome(
	walk: { lists: RowCursor[]; idf: number[]; avg: number; timed: boolean; base: number },
	most: number,
	fn: (at: number, score: number, time: number) => void,
): boolean {
	const { lists, idf, avg, timed, base } = walk;
	for (let walked = 0; walked < most; walked++) {
		let next = Infinity;
		for (const list of lists) if (!list.done) next = Math.min(next, list.place());
		if (next === Infinity) return false;
		let score = 0;
		let time = 0;
		for (let j = 0; j < lists.length; j++) {
			const list = lists[j];
			if (list.done || list.place() !== next) continue;
			score += weigh(idf[j], list.value(2), list.value(3), avg);
			if (timed) time = list.value(4);
			list.advance();
		}
		fn(base + next, score, time);
	}
	return true;
}

/** A capture second that orders last: a document whose time a tier row does not give (timeKey 0). */
const UNKNOWN = 2 ** 32;

/** Documents one walk keeps as it goes for the k best (a second walk when more would be kept). */
const WALK_KEPT = 16_384;

/**
 * Where the k best of the tiers are (not `passed`), by segment: the documents scoring more than the
 * k-th, and of those tying it only those of its capture second or earlier (chunkOrder starts with the
 * capture time; a time the rows do not give orders last, and then every tied one is read).
 */
async function placesOfBest(
	source: TierSource,
	terms: readonly string[],
	stats: ScopeStats,
	k: number,
	passed: ReadonlySet<number>,
): Promise<Map<string, Array<[number, number]>>> {
	const values = new TopK(k, (a1, _b1, a2) => a1 - a2);
	// Every document wanted at the end was admitted when the walk met it (the k-th only gets better),
	// so one walk keeps those admitted and a second walks only when they are too many.
	let seen: number[] | null = [];
	const walk = (fn: (at: number, score: number, time: number) => void) =>
		eachScored(source, terms, stats, (at, score, time) => {
			if (!passed.has(at)) fn(at, score, time);
		});
	await walk((at, score, time) => {
		// Tying the k-th with a later known second: the k-th at the end goes first too.
		const later = score === values.min && time !== 0 && time > values.minA!;
		if (!values.admits(score) || later) return;
		values.push(score, time || UNKNOWN, 0);
		if (seen && seen.length < 3 * WALK_KEPT) seen.push(at, score, time);
		else seen = null;
	});
	const last = values.sorted().at(-1);
	const kth = last?.score ?? Infinity;
	const latest = last && last.a !== UNKNOWN ? last.a : Infinity;
	const wanted = new Map<string, Array<[number, number]>>();
	const want = (at: number, score: number, time: number) => {
		if (score < kth || (score === kth && time > latest)) return;
		const seg = `${Math.floor(at / 2 ** 16)}`;
		const list = wanted.get(seg);
		if (list) list.push([at, score]);
		else wanted.set(seg, [[at, score]]);
	};
	if (seen) for (let i = 0; i < seen.length; i += 3) want(seen[i], seen[i + 1], seen[i + 2]);
	else await walk(want);
	return wanted;
}

/**
 * The `k` best chunks of the tiers with their scores, best first (ties by the chunks), read from the
 * segments that hold them; a chunk a newer copy supersedes is passed over for the next best.
 */
export async function tierBest(
	source: TierSource,
	terms: readonly string[],
	stats: ScopeStats,
	k: number,
): Promise<Array<{ chunk: IndexedChunk; score: number }>> {
	const passed = new Set<number>();
	for (;;) {
		const wanted = await placesOfBest(source, terms, stats, k, passed);
		const kept: IndexedChunk[] = [];
		const top = new TopK(k, (a, _b, c) => chunkOrder(kept[a], kept[c]));
		const before = passed.size;
		// Read SEGMENT_READS at a time (each one's place in the ranking does not depend on the order).
		await mapLimit([...wanted], SEGMENT_READS, async ([place, list]) => {
			const tier = Math.floor(Number(place) / 2 ** 16);
			const ref = source.tiers[tier].refs[Number(place) % 2 ** 16];
			await withBytes(source.budget, ref.bytes, async () => {
				const seg = await source.read(ref.key);
				await shareLoop();
				if (list.some(([at]) => at % 2 ** 16 >= seg.lengths.length))
					throw new CorruptDocumentError(ref.key, 'a term tier names a document it does not hold');
				const chunks = list.map(([at]) => docAt(seg, at % 2 ** 16));
				source.held?.note(seg, new Set(chunks.map((c) => c.session_id)), source.superseded);
				for (const [j, [at, score]] of list.entries()) {
					const chunk = chunks[j];
					if (source.superseded.has(chunk.id)) passed.add(at);
					else if (top.admits(score)) top.push(score, kept.push(chunk) - 1, 0);
				}
			});
		});
		if (passed.size === before)
			return top.sorted().map(({ a, score }) => ({ chunk: kept[a], score }));
	}
}

/** The `k` best of two rankings under one order (score, then the chunks). */
export function mergeBest(
	a: ReadonlyArray<{ chunk: IndexedChunk; score: number }>,
	b: ReadonlyArray<{ chunk: IndexedChunk; score: number }>,
	k: number,
): IndexedChunk[] {
	const kept: IndexedChunk[] = [];
	const top = new TopK(k, (x, _y, z) => chunkOrder(kept[x], kept[z]));
	for (const { chunk, score } of [...a, ...b])
		if (top.admits(score)) top.push(score, kept.push(chunk) - 1, 0);
	return top.sorted().map(({ a: i }) => kept[i]);
}
