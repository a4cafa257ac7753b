// Searching a word index too large to hold, one segment after another (a Memory Base's base-wide
// index): memory holds a couple of segments and the best matches, never the whole index. The answer is
// the one bm25() gives over the whole index loaded at once, in passes over its segments:
//   1. the statistics BM25 takes over the scope: documents, their total length, each term's documents,
//      noting where the documents holding the terms are (candidates.ts, bounded);
//   2. the k best by their own words, under those statistics (ties by the chunks: chunkOrder): scored
//      from the notes, reading again only the segments of the best; every segment when the notes gave up;
//   3. the chunks near those matches in their conversations (where their neighbours are), found
//      through the segments' bloom filters, then bm25() over them with the statistics of step 1: the
//      same k best, and the neighbours lifted as over the whole index;
//   4. asked for names (a recency half-life), how many documents hold each term of the matches.
// Its size (the chunks in scope) is known once a search took the statistics; it offers no sample.
// The tail and the open sources come last, as in lexicalView: a chunk they hold supersedes its copy
// in a segment. Copies in two segments (a writer that died between its writes) count twice in the
// statistics until a merge drops one; the matches hold one of them.
import { IndexDamagedError } from '../../errors';
import { bloomMayHave, bloomPositions } from '../../store/bloom';
import type { Versioned } from '../../store/document-store';
import { chunkOrder } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import { isUnfiltered, passes } from '../chunks/filter';
import type { ChunkFilter } from '../chunks/filter';
import { TopK } from '../chunks/top-k';
import { bm25, idfOf, weigh } from './bm25';
import { Candidates } from './candidates';
import { aside, NEIGHBOUR_REACH } from './context';
import type { LexicalMatch, ScopeStats } from './bm25';
import type { LexicalIndex } from './lexical-index';
import type { LexicalManifest } from './manifest';
import { nameLimit, namesBy } from './names';
import { build } from './segment';
import type { LexicalRef, LexicalSegment } from './segment';
import { tokenize } from './tokenize';
import type { LexicalView } from './types';
import { openSources } from './view';

/** Segments read at once. */
const WINDOW = 2;
/** Times a search starts over on a newer manifest when a segment it lists is gone (merged meanwhile). */
const ATTEMPTS = 3;

/** A segment listed since this search read its manifest was deleted: start over on a newer one. */
class SegmentGone extends Error {}

/** What one search visits: the listed segments (read in turn), then the tail and open sources. */
interface Scope {
	index: LexicalIndex;
	refs: LexicalRef[];
	later: LexicalSegment[];
	filter: ChunkFilter;
}

/** Which documents of a segment count: in the filter, and not superseded by a copy in `dead`. */
function okOf(seg: LexicalSegment, filter: ChunkFilter, dead: ReadonlySet<string>): Uint8Array {
	// Every document, most often (a search of every conversation, nothing superseded): no test per document.
	if (isUnfiltered(filter) && (dead.size === 0 || !seg.docs.some((d) => dead.has(d.id))))
		return new Uint8Array(seg.docs.length).fill(1);
	return Uint8Array.from(seg.docs, (d) => (passes(d, filter) && !dead.has(d.id) ? 1 : 0));
}

/** A listed segment, read again; gone since the manifest was read: the search starts over. */
async function readOrGone(scope: Scope, key: string): Promise<LexicalSegment> {
	// The notes name segments of scope.refs only.
	const ref = scope.refs.find((r) => r.key === key);
	const seg = ref ? await scope.index.readSegment(ref) : null;
	if (!seg) throw new SegmentGone();
	return seg;
}

/** Runs `fn` over every segment in scope (those of `pick` only, if given), WINDOW read at a time. */
async function visit(
	scope: Scope,
	fn: (seg: LexicalSegment, ok: Uint8Array) => void,
	pick: (ref: LexicalRef) => boolean = () => true,
): Promise<void> {
	const ids = (segs: LexicalSegment[]) => new Set(segs.flatMap((s) => s.docs.map((d) => d.id)));
	const laterIds = ids(scope.later);
	const refs = scope.refs.filter(pick);
	for (let i = 0; i < refs.length; i += WINDOW) {
		const read = await Promise.all(
			refs.slice(i, i + WINDOW).map((r) => scope.index.readSegment(r)),
		);
		for (const seg of read) {
			if (!seg) throw new SegmentGone();
			fn(seg, okOf(seg, scope.filter, laterIds));
		}
	}
	scope.later.forEach((seg, n) => fn(seg, okOf(seg, scope.filter, ids(scope.later.slice(n + 1)))));
}

/** Step 1: the scope's statistics for these terms (and, given `notes`, the documents holding them). */
async function statsOf(
	scope: Scope,
	terms: readonly string[],
	notes?: Candidates,
): Promise<ScopeStats> {
	const df = new Map(terms.map((t) => [t, 0]));
	let n = 0;
	let total = 0;
	await visit(scope, (seg, ok) => {
		notes?.add(seg, ok, scope.later.includes(seg));
		ok.forEach((o, d) => {
			if (!o) return;
			n++;
			total += seg.lengths[d];
		});
		for (const t of terms) {
			const list = seg.postings.get(t);
			if (list) for (let i = 0; i < list.length; i += 2) df.set(t, df.get(t)! + ok[list[i]]);
		}
	});
	return { n, total, df };
}

/** Step 2 when the notes of step 1 gave up: the `k` best chunks by their own words, every segment read. */
async function bestChunks(
	scope: Scope,
	terms: readonly string[],
	stats: ScopeStats,
	k: number,
): Promise<IndexedChunk[]> {
	const kept: IndexedChunk[] = [];
	const top = new TopK(k, (a, _b, c) => chunkOrder(kept[a], kept[c]));
	const avg = stats.total / stats.n || 1;
	const used = terms.filter((t) => (stats.df.get(t) ?? 0) > 0);
	await visit(scope, (seg, ok) => {
		const scores = new Float64Array(seg.docs.length);
		const touched: number[] = [];
		for (const t of used) {
			const list = seg.postings.get(t);
			if (!list) continue;
			const idf = idfOf(stats.n, stats.df.get(t)!);
			for (let i = 0; i < list.length; i += 2) {
				const d = list[i];
				if (!ok[d]) continue;
				if (scores[d] === 0) touched.push(d);
				scores[d] += weigh(idf, list[i + 1], seg.lengths[d], avg);
			}
		}
		for (const d of touched)
			if (top.admits(scores[d])) top.push(scores[d], kept.push(seg.docs[d]) - 1, 0);
	});
	return top.sorted().map(({ a }) => kept[a]);
}

/** The messages the best chunks are, per conversation. */
function messagesOf(chunks: readonly IndexedChunk[]): Map<string, number[]> {
	const out = new Map<string, number[]>();
	for (const { session_id: session, seq } of chunks)
		out.set(session, [...(out.get(session) ?? []), seq]);
	return out;
}

/**
 * Step 3: the chunks bm25() looks at for those messages, as a segment: theirs, and the messages beside
 * them up to the first that is not a note (the notes passed included), one copy each (the later wins).
 * bm25() over it gives the same k best, and lifts the same neighbours, as over the whole index, without
 * holding or indexing whole conversations (one may be long).
 */
async function nearSegment(scope: Scope, best: Map<string, number[]>): Promise<LexicalSegment> {
	const byId = new Map<string, IndexedChunk>();
	const keys = [...best.keys()].map((s) => bloomPositions(`s:${s}`));
	const near = (d: IndexedChunk) =>
		best.get(d.session_id)?.some((seq) => Math.abs(d.seq - seq) <= NEIGHBOUR_REACH) ?? false;
	await visit(
		scope,
		(seg, ok) =>
			seg.docs.forEach((d, i) => {
				if (!ok[i] || !near(d)) return;
				byId.delete(d.id);
				byId.set(d.id, d);
			}),
		(ref) => keys.some((p) => bloomMayHave(ref.bloom, p)),
	);
	return build(`${scope.index.manifestKey}#near`, beside([...byId.values()], best));
}

/** Of the chunks within reach, the messages' own and those of the flow beside them (context.ts). */
function beside(chunks: IndexedChunk[], best: Map<string, number[]>): IndexedChunk[] {
	const place = (session: string, seq: number) => `${session}\n${seq}`;
	const bySeq = new Map<string, IndexedChunk[]>();
	for (const c of chunks) {
		const key = place(c.session_id, c.seq);
		bySeq.set(key, [...(bySeq.get(key) ?? []), c]);
	}
	const keep = new Set<IndexedChunk>();
	for (const [session, seqs] of best)
		for (const seq of seqs) {
			for (const c of bySeq.get(place(session, seq)) ?? []) keep.add(c);
			for (const step of [-1, 1])
				for (let i = 1; i <= NEIGHBOUR_REACH; i++) {
					const message = bySeq.get(place(session, seq + i * step));
					if (!message) break;
					for (const c of message) keep.add(c);
					if (!message.every(aside)) break;
				}
		}
	return chunks.filter((c) => keep.has(c));
}

/** The search, started over on a newer manifest when a segment went meanwhile. */
async function attempt<T>(
	index: LexicalIndex,
	stale: boolean,
	run: (manifest: Versioned<LexicalManifest>) => Promise<T>,
): Promise<T> {
	for (let n = 0; ; n++) {
		const manifest = await index.readManifest(stale || n > 0);
		try {
			return await run(manifest);
		} catch (error) {
			if (!(error instanceof SegmentGone)) throw error;
			if (n + 1 >= ATTEMPTS) {
				const listed = manifest.version === null ? [] : manifest.doc.segments;
				throw new IndexDamagedError(index.name, listed.map((r) => r.key).slice(0, 1));
			}
		}
	}
}

/**
 * The index as one search sees it, read one segment after another: the open sources in scope first
 * (as lexicalView), then the manifest, once unless a source moved past its listing.
 */
export async function streamedView(index: LexicalIndex, filter: ChunkFilter): Promise<LexicalView> {
	const { segments: sources, stale } = await openSources([index], filter);
	const scopeOf = (manifest: Versioned<LexicalManifest>): Scope => ({
		index,
		filter,
		refs: (manifest.version === null ? [] : manifest.doc.segments).filter(
			(r) =>
				(filter.since === undefined || r.to >= filter.since) &&
				(filter.until === undefined || r.from <= filter.until),
		),
		later: [...(manifest.version === null ? [] : [index.tailOf(manifest)]), ...sources],
	});
	let names = new Map<string, number>();
	let n = 0;
	// The last statistics taken: frequencies() of the query just searched reads no segment again.
	let last: ScopeStats | undefined;
	const statsFor = (query: string) =>
		attempt(index, false, async (manifest) => {
			const terms = [...new Set(tokenize(query))];
			if (!last || terms.some((t) => !last!.df.has(t)))
				last = await statsOf(scopeOf(manifest), terms);
			n = last.n;
			return terms.map((term) => ({ term, df: last!.df.get(term)! }));
		});
	return {
		get size() {
			return n;
		},
		frequencies: statsFor,
		search: (query: string, k: number): Promise<LexicalMatch[]> =>
			attempt(index, stale[0], async (manifest) => {
				const scope = scopeOf(manifest);
				const terms = [...new Set(tokenize(query))];
				const notes = new Candidates(terms);
				const stats = await statsOf(scope, terms, notes);
				last = stats;
				n = stats.n;
				if (terms.length === 0 || stats.n === 0) return [];
				const best =
					(await notes.best(stats, k, (key) => readOrGone(scope, key))) ??
					(await bestChunks(scope, terms, stats, k));
				const seg = await nearSegment(scope, messagesOf(best));
				const all = { ok: [new Uint8Array(seg.docs.length).fill(1)], n: seg.docs.length };
				const total = seg.lengths.reduce((a, b) => a + b, 0);
				return bm25(query, [seg], { ...all, total }, k, stats);
			}),
		names: (chunk: IndexedChunk) => namesBy(chunk, n, (term) => names.get(term) ?? 0),
		prepareNames: (chunks: readonly IndexedChunk[]) =>
			attempt(index, false, async (manifest) => {
				names = await termCounts(scopeOf(manifest), chunks, nameLimit(n));
			}),
	};
}

/** Step 4: how many documents in scope hold each term of the chunks, counting no further than most + 1. */
async function termCounts(
	scope: Scope,
	chunks: readonly IndexedChunk[],
	most: number,
): Promise<Map<string, number>> {
	const counts = new Map<string, number>();
	if (most < 2) return counts;
	for (const c of chunks) for (const t of tokenize(c.text)) counts.set(t, 0);
	await visit(scope, (seg, ok) => {
		for (const [term, held] of counts) {
			const list = seg.postings.get(term);
			if (!list || held > most) continue;
			let df = held;
			for (let i = 0; i < list.length && df <= most; i += 2) df += ok[list[i]];
			counts.set(term, df);
		}
	});
	return counts;
}
