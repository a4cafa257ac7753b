// Taking chunks out of a word index's term tiers without dropping them (a Forget, an expiry). A
// tier's postings name documents by their segment's place in the tier and their place in the segment,
// so a segment that loses chunks keeps its documents' places: each chunk taken out is left as a gone
// document (chunk.ts: goneChunk, nothing of what it was). Then only the buckets that named the chunks
// are written again, each as a new version (a new key) the tier lists: the buckets of the words they
// held, and of their conversations' rows. Dropping the tier instead would make every search of the
// index read its segments until later syncs regrouped them.
import { goneChunk } from '../chunks/chunk';
import { deleteParts, mapOrUndo, ReadBudget, withBytes } from '../../common/parallel';
import type { IndexedChunk } from '../chunks/chunk';
import { newPartVersion, REWRITE_BYTES } from '../chunks/tiering';
import { bucketBytesOf } from './tier-search';
import type { LexicalSegment } from './segment';
import {
	bucketKey,
	bucketOf,
	readBucket,
	ROW,
	wordRow,
	sessionBucket,
	conversationRows,
	writeBucket,
} from './tiers';
import { allRows, without } from './postings';
import type { Postings, Rows } from './postings';
import type { StoredBucket, TermTier, TierFiles } from './tiers';

/**
 * Documents taken out of one segment of a tier: its place and key, which documents, and what the
 * tier's buckets need of them (takenFrom), without the segment: a Forget holds these until its swap.
 */
export interface TakenDocs extends TakenSummary {
	tier: TermTier;
	ord: number;
	key: string;
}

/** What a tier's rewrite needs of a segment's documents taken out. */
export interface TakenSummary {
	docs: Set<number>;
	/** The words that name any of them. */
	terms: Set<string>;
	/** The sum of their lengths. */
	total: number;
	/** Each of their conversations' row for the segment after (null: none of it left there). */
	sessions: Map<string, [number, number, number] | null>;
}

/** What a tier's rewrite needs of the documents `docs` taken out of `seg`. */
export function takenFrom(seg: LexicalSegment, docs: Set<number>): TakenSummary {
	const terms = new Set<string>();
	for (const [term, list] of seg.postings)
		for (let i = 0; i < list.length; i += 2)
			if (docs.has(list[i])) {
				terms.add(term);
				break;
			}
	let total = 0;
	for (const d of docs) total += seg.lengths[d];
	const after = conversationRows(seg.docs, docs);
	const sessions = new Map<string, [number, number, number] | null>();
	for (const d of docs) {
		const session = seg.docs[d].session_id;
		sessions.set(session, after.get(session) ?? null);
	}
	return { docs, terms, total, sessions };
}

/** A tier with some buckets written again: its new entry, and the bucket keys written and replaced. */
export interface RewrittenTermTier {
	was: TermTier;
	tier: TermTier;
	written: string[];
	replaced: string[];
}

/** A bucket a rewrite needs is not held: the tier is dropped instead (its segments hold every chunk). */
export class TermBucketGone extends Error {}

/** The segment's documents with those of `taken` left as gone, in their places. */
export const withGone = (docs: readonly IndexedChunk[], taken: ReadonlySet<number>) =>
	docs.map((d, i) => (taken.has(i) ? goneChunk() : d));

/**
 * What changes in one tier: per bucket, per key (a word, or a conversation), the rows to take out
 * (by segment place and document) and, for conversations, the row to put instead; and the statistics.
 */
function plan(tier: TermTier, taken: readonly TakenDocs[]) {
	const words = new Map<number, Set<string>>();
	const sessions = new Map<number, Map<string, Map<number, number[] | null>>>();
	let n = 0;
	let total = 0;
	for (const t of taken) {
		for (const term of t.terms) {
			const b = bucketOf(term, tier.buckets);
			words.set(b, (words.get(b) ?? new Set()).add(term));
		}
		total += t.total;
		n += t.docs.size;
		for (const [session, row] of t.sessions) {
			const b = sessionBucket(tier, session);
			const rows = sessions.get(b) ?? new Map<string, Map<number, number[] | null>>();
			sessions.set(b, rows);
			rows.set(session, (rows.get(session) ?? new Map()).set(t.ord, row ? [t.ord, ...row] : null));
		}
	}
	return { words, sessions, n, total };
}

/**
 * A word bucket without the rows of the taken documents. A common word's list stays in its compressed
 * blocks: the rows kept are made a block at a time as the bucket is written.
 */
function withoutWords(
	bucket: StoredBucket,
	terms: ReadonlySet<string>,
	gone: Map<number, Set<number>>,
	width: number,
) {
	const out = new Map<string, Postings>(bucket);
	let removed = 0;
	for (const term of terms) {
		const rows = bucket.get(term);
		if (!rows) continue;
		const kept = without(rows, width, (r, i) => gone.get(r[i])?.has(r[i + 1]) === true);
		removed += (rows.length - kept.length) / width;
		if (kept.length === 0) out.delete(term);
		else out.set(term, kept);
	}
	return { bucket: out, removed };
}

/** A bucket of conversations with their rows of the changed segments replaced (or taken out). */
function withSessions(bucket: StoredBucket, changes: Map<string, Map<number, number[] | null>>) {
	const out = new Map<string, Rows>(bucket);
	let delta = 0;
	for (const [session, byOrd] of changes) {
		const had = bucket.get(session);
		const rows = had ? allRows(had) : new Uint32Array(0);
		const kept: number[] = [];
		for (let i = 0; i < rows.length; i += ROW) {
			if (!byOrd.has(rows[i])) kept.push(...rows.subarray(i, i + ROW));
			else delta--;
		}
		for (const row of byOrd.values())
			if (row) {
				kept.push(...row);
				delta++;
			}
		if (kept.length === 0) out.delete(session);
		else out.set(session, sortedRows(kept));
	}
	return { bucket: out, delta };
}

/** Rows in the order of their segment's place (as a tier builds them). */
function sortedRows(flat: number[]): Uint32Array {
	const rows: number[][] = [];
	for (let i = 0; i < flat.length; i += ROW) rows.push(flat.slice(i, i + ROW));
	rows.sort((a, b) => a[0] - b[0]);
	return Uint32Array.from(rows.flat());
}

/**
 * New versions of the tier's buckets that named the taken documents, listed nowhere yet (the caller's
 * swap lists the returned entry). A bucket storage does not hold is TermBucketGone. On a failure,
 * what it wrote is deleted.
 */
export async function rewriteTermTier(
	files: TierFiles & { deleteSegment(key: string): Promise<void> },
	tier: TermTier,
	taken: readonly TakenDocs[],
): Promise<RewrittenTermTier> {
	const { words, sessions, n, total } = plan(tier, taken);
	const gone = new Map(taken.map((t) => [t.ord, t.docs]));
	const numbers = [...words.keys(), ...sessions.keys()].sort((x, y) => x - y);
	const versions = { ...tier.versions };
	for (const b of numbers) versions[b] = newPartVersion();
	const next: TermTier = { ...tier, versions, n: tier.n - n, total: tier.total - total };
	// A bucket's rewrite holds it stored, its rows decoded and the bucket written: about three times.
	const budget = new ReadBudget(REWRITE_BYTES);
	const one = (b: number) => withBytes(budget, 3 * bucketBytesOf(tier, b), () => rewriteOne(b));
	const rewriteOne = async (b: number) => {
		const stored = await readBucket(files, tier, b);
		if (!stored) throw new TermBucketGone(bucketKey(files.segmentsPrefix, tier, b));
		const terms = words.get(b);
		const changed = terms
			? { ...withoutWords(stored, terms, gone, wordRow(tier)), delta: 0 }
			: { ...withSessions(stored, sessions.get(b)!), removed: 0 };
		await writeBucket(files, next, b, changed.bucket);
		// Not the bucket itself: a Forget rewrites hundreds, and only their counts are needed after.
		const { removed, delta } = changed;
		return { removed, delta, key: bucketKey(files.segmentsPrefix, next, b) };
	};
	const results = await mapOrUndo(numbers, one, (done) =>
		deleteParts(
			done.map((d) => d.key),
			(k) => files.deleteSegment(k),
		),
	);
	for (const r of results) {
		next.postings -= r.removed;
		next.sessionRows += r.delta;
	}
	const written = results.map((r) => r.key);
	return {
		was: tier,
		tier: next,
		written,
		replaced: numbers.map((b) => bucketKey(files.segmentsPrefix, tier, b)),
	};
}
