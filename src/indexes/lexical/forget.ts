// One conversation's chunks taken out of a lexical manifest: the tail without them and each segment
// that may hold them (by its bloom filter) rewritten without them, or dropped once empty.
import { IndexDamagedError } from '../../errors';
import { bloomMayHave, bloomPositions } from '../../store/bloom';
import type { BloomPositions } from '../../store/bloom';
import type { IndexedChunk } from '../chunks/chunk';
import type { ListedSegment } from '../chunks/listed';
import { listedBy } from '../chunks/orphans';
import type { TierParts } from '../chunks/orphans';
import { retireParts } from '../chunks/retiring';
import type { Touched } from '../chunks/touched';
import type { LexicalIndex } from './lexical-index';
import type { LexicalManifest } from './manifest';
import type { LexicalRef, LexicalSegment } from './segment';
import { rewriteTermTier, takenFrom, TermBucketGone, withGone } from './tier-forget';
import type { RewrittenTermTier, TakenDocs, TakenSummary } from './tier-forget';
import { dropStale, isBucketKey, termParts, tiersOf } from './tiers';
import type { TermTier, TierFiles } from './tiers';

/** The segment reads and writes a rewrite needs (a LexicalIndex). */
export interface SegmentFiles extends TierFiles {
	readonly name: string;
	readSegment(ref: ListedSegment): Promise<LexicalSegment | null>;
	writeSegment(level: number, docs: IndexedChunk[]): Promise<LexicalRef>;
	deleteSegment(key: string): Promise<void>;
}

export interface Dropped {
	/** The manifest without the chunks; undefined: nothing to change. */
	doc?: LexicalManifest;
	removed: number;
	/** Segments (and buckets) the new manifest no longer lists. */
	replaced: string[];
	/** Segments and buckets written for it (deleted again if its swap fails). */
	written: string[];
}

/** A segment rewritten without a conversation's documents: which went, the segment written, and for its tier. */
interface RewrittenSegment {
	gone: Set<number>;
	fresh: LexicalRef | null;
	taken?: TakenSummary;
}

/**
 * What one Forget wrote on an attempt, kept for the next: an attempt whose swap lost to another
 * change (a sync's) reuses each rewrite of a segment or tier that is still listed as it was, so a
 * retry costs little on a busy index instead of writing hundreds of buckets again.
 */
export class ForgetWork {
	readonly segments = new Map<string, RewrittenSegment>();
	readonly tiers = new Map<string, RewrittenTermTier | null>();
}

/**
 * The manifest without the chunks `keep` refuses, of conversation `sessionId`; `unlist` also drops
 * the conversation from the open sources. A segment listed but gone is an error, never skipped. A
 * segment in a usable term tier keeps its place there: its chunks taken out are left as gone
 * documents, and the tier's buckets that named them are written again (tier-forget.ts).
 */
export async function dropChunks(
	files: SegmentFiles,
	doc: LexicalManifest,
	sessionId: string,
	keep: (d: IndexedChunk) => boolean,
	unlist: boolean,
	work = new ForgetWork(),
): Promise<Dropped> {
	const out: Dropped = { removed: 0, replaced: [], written: [] };
	const tail = doc.tail.filter(keep);
	out.removed += doc.tail.length - tail.length;
	const open = unlist ? doc.open?.filter((o) => o.session_id !== sessionId) : doc.open;
	const { refs, taken } = await rewriteSegments(files, doc, sessionId, keep, out, work);
	if (out.removed === 0 && open?.length === doc.open?.length) return out;
	const { terms, failed } = await keptTiers(files, doc, taken, out, work);
	// A segment of a tier not kept leaves it: the tier goes in the same swap (dropStale).
	const segments = refs.map((r) => {
		if (!r.tier || !failed.has(r.tier.id) || !out.written.includes(r.key)) return r;
		const rest = { ...r };
		delete rest.tier;
		return rest;
	});
	// A tier that lost a segment goes in the same swap (its buckets hold the words removed).
	const next = dropStale(
		{ ...doc, tail, segments, terms, updated_at: new Date().toISOString() },
		files.segmentsPrefix,
	);
	// Parts replaced earlier may hold the conversation's words: they go now, whatever their grace.
	const purged = retireParts(
		next.doc,
		[],
		{ prefix: files.segmentsPrefix, graceMs: 0 },
		{ all: true },
	);
	out.replaced.push(...next.keys, ...purged.due);
	out.doc = open ? { ...purged.doc, open } : purged.doc;
	return out;
}

/**
 * Each segment that may hold the conversation (by its bloom filter) rewritten without the chunks
 * `keep` refuses: dropped once empty, or, in a usable term tier, with them left as gone documents in
 * their places (`taken` says which, for the tier's buckets).
 */
async function rewriteSegments(
	files: SegmentFiles,
	doc: LexicalManifest,
	sessionId: string,
	keep: (d: IndexedChunk) => boolean,
	out: Dropped,
	work: ForgetWork,
): Promise<{ refs: LexicalRef[]; taken: TakenDocs[] }> {
	const position = bloomPositions(`s:${sessionId}`);
	const placed = new Map(
		tiersOf(doc).usable.flatMap(({ tier, refs }) =>
			refs.map((r, ord) => [r.key, { tier, ord }] as const),
		),
	);
	const taken: TakenDocs[] = [];
	const refs: LexicalRef[] = [];
	for (const ref of doc.segments) {
		const place = placed.get(ref.key);
		const id = `${ref.key}\n${place ? `${place.tier.id}:${place.ord}` : ''}`;
		const done = work.segments.get(id) ?? (await rewriteOne(files, ref, position, keep, !!place));
		if (!done) {
			refs.push(ref);
			continue;
		}
		work.segments.set(id, done);
		out.removed += done.gone.size;
		out.replaced.push(ref.key);
		if (place && done.taken) taken.push({ ...place, key: ref.key, ...done.taken });
		if (!done.fresh) continue;
		out.written.push(done.fresh.key);
		refs.push(place ? { ...done.fresh, tier: ref.tier } : done.fresh);
	}
	return { refs, taken };
}

/**
 * One segment without the chunks `keep` refuses, written (fresh null: nothing left of it), the
 * documents taken out in their places as gone when `inTier`; undefined when it holds none.
 */
async function rewriteOne(
	files: SegmentFiles,
	ref: LexicalRef,
	position: BloomPositions,
	keep: (d: IndexedChunk) => boolean,
	inTier: boolean,
): Promise<RewrittenSegment | undefined> {
	// Unread when its filter shows the conversation is not in it.
	if (!bloomMayHave(ref.bloom, position)) return undefined;
	const seg = await files.readSegment(ref);
	if (!seg) throw new IndexDamagedError(files.name, [ref.key]);
	const gone = new Set(seg.docs.flatMap((d, i) => (keep(d) ? [] : [i])));
	if (gone.size === 0) return undefined;
	const docs = inTier ? withGone(seg.docs, gone) : seg.docs.filter((_, i) => !gone.has(i));
	const fresh = docs.length > 0 ? await files.writeSegment(ref.level, docs) : null;
	// What its tier's buckets need, not the segment: a Forget holds this until its swap.
	return { gone, fresh, taken: inTier ? takenFrom(seg, gone) : undefined };
}

/**
 * The manifest's term tiers with those that lost documents rewritten (their buckets naming them
 * written again); `failed`: tiers whose buckets are not all held (left as they are, to be dropped).
 */
async function keptTiers(
	files: SegmentFiles,
	doc: LexicalManifest,
	taken: readonly TakenDocs[],
	out: Dropped,
	work: ForgetWork,
): Promise<{ terms: TermTier[] | undefined; failed: Set<string> }> {
	const rewritten = new Map<string, TermTier>();
	const failed = new Set<string>();
	for (const tier of new Set(taken.map((t) => t.tier))) {
		const mine = taken.filter((t) => t.tier === tier);
		// The same tier losing the same documents of the same segments: the same rewrite.
		const id = JSON.stringify([tier, mine.map((t) => [t.ord, t.key, [...t.docs]])]);
		const done = work.tiers.has(id) ? work.tiers.get(id)! : await rewriteOrNull(files, tier, mine);
		work.tiers.set(id, done);
		if (!done) {
			failed.add(tier.id);
			continue;
		}
		out.written.push(...done.written);
		out.replaced.push(...done.replaced);
		rewritten.set(tier.id, done.tier);
	}
	return { terms: doc.terms?.map((t) => rewritten.get(t.id) ?? t), failed };
}

/** The tier's rewrite, or null when a bucket it needs is not held (the tier is then dropped). */
async function rewriteOrNull(
	files: SegmentFiles,
	tier: TermTier,
	taken: readonly TakenDocs[],
): Promise<RewrittenTermTier | null> {
	try {
		return await rewriteTermTier(files, tier, taken);
	} catch (error) {
		if (error instanceof TermBucketGone) return null;
		throw error;
	}
}

/** A word index's tier parts, for a sweep (chunks/orphans.ts): its term tiers' buckets. */
export const termTierParts: TierParts<LexicalManifest> = {
	tiers: termParts,
	keys: () => [],
	isTierPart: isBucketKey,
};

/** What a Forget needs of a word index (a LexicalIndex). */
type ForgetTarget = SegmentFiles & Pick<LexicalIndex, 'update' | 'manifestKey'>;

/** LexicalIndex.forgetSession: the manifest swapped without the chunks, then what it replaced deleted. */
export async function forgetFrom(
	index: ForgetTarget,
	sessionId: string,
	only?: (d: IndexedChunk) => boolean,
	touched?: Touched,
): Promise<number> {
	const keep = (d: IndexedChunk) => d.session_id !== sessionId || (only !== undefined && !only(d));
	let dropped: Dropped = { removed: 0, replaced: [], written: [] };
	const written: string[] = [];
	const work = new ForgetWork();
	const result = await index.update(
		async (cur) => {
			if (cur.version === null) return undefined;
			dropped = await dropChunks(index, cur.doc, sessionId, keep, only === undefined, work);
			written.push(...dropped.written);
			return dropped.doc;
		},
		{ onMoved: 'allow' },
	); // what is forgotten goes from a moved index too
	const { removed, replaced } = dropped;
	// What the manifest stored lists: its segments and its tiers' buckets (a Forget's new versions).
	const current = result.current.doc;
	const listed = listedBy(index.segmentsPrefix, termTierParts, current);
	for (const k of [...written, ...(result.written ? replaced : [])])
		if (!listed.has(k)) await index.deleteSegment(k).catch(() => {});
	if (!result.written) return 0;
	touched?.deleted.push(...replaced);
	touched?.rewritten.push(index.manifestKey, ...written.filter((k) => listed.has(k)));
	return removed;
}
