// Searching a word index too large to hold, one segment after another (a Memory Base's base-wide
// index): memory holds a couple of segments and the best matches, never the whole index. The answer is
// the one bm25() gives over the whole index loaded at once, in passes:
//   1. the statistics BM25 takes over the scope: documents, their total length, each term's documents,
//      from the term tiers' buckets of the query's words for the segments a tier covers (tiers.ts; a
//      search of everything only), and from a pass over the other segments, noting where the
//      documents holding the terms are (candidates.ts, bounded);
//   2. the k best by their own words, under those statistics (ties by the chunks: chunkOrder): from the
//      tiers' rows and from the notes, reading only the segments of the best (every segment of the
//      pass when the notes gave up);
//   3. the chunks near those matches in their conversations (near.ts), then bm25() over them with the
//      statistics of step 1: the same k best, and the neighbours lifted as over the whole index;
//   4. asked for names (a recency half-life), how many documents hold each term of the matches (the
//      tiers' share from their buckets of those words).
// Its size (the chunks in scope) is known once a search took the statistics; it offers no sample.
// The tail and the open sources come last, as in lexicalView: a chunk they hold supersedes its copy
// in a segment (a tier's copy is passed over, though it still counts in the statistics). Copies in two
// segments (a writer that died between its writes) count twice in the statistics until a merge drops
// one; the matches hold one of them.
import { IndexDamagedError } from '../../errors';
import type { Versioned } from '../../store/document-store';
import { chunkOrder } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import { isUnfiltered } from '../chunks/filter';
import type { ChunkFilter } from '../chunks/filter';
import { TopK } from '../chunks/top-k';
import { bm25, idfOf, weigh } from './bm25';
import { Candidates } from './candidates';
import type { LexicalMatch, ScopeStats } from './bm25';
import type { LexicalIndex } from './lexical-index';
import type { LexicalManifest } from './manifest';
import { nameLimit, namesBy } from './names';
import { mergeBest, ownScore, tierBest, tierRows, withTierStats } from './tier-search';
import type { TierRows } from './tier-search';
import { wordRow } from './tiers';
import { messagesOf, nearSegment } from './near';
import { docAt, postingOf } from './segment';
import { readOrGone, scopeFor, SegmentGone, visit } from './stream-scope';
import type { Scope } from './stream-scope';
import { tokenize } from './tokenize';
import type { LexicalView } from './types';
import { openSources } from './view';

/** Times a search starts over on a newer manifest when a segment it lists is gone (merged meanwhile). */
const ATTEMPTS = 3;

/**
 * Step 1: the scope's statistics for these terms (and, given `notes`, the documents holding them).
 * `early`: the tiers' rows of these terms, if read already on this manifest (earlyRows).
 */
async function statsOf(
	scope: Scope,
	terms: readonly string[],
	notes?: Candidates,
	early?: TierRows,
): Promise<ScopeStats> {
	const stats = { n: 0, total: 0, df: new Map(terms.map((t) => [t, 0])) };
	const { df } = stats;
	// The tiers' buckets are read while the other segments are: the two parts add up in any order.
	const [, rows] = await Promise.all([
		visit(scope, (seg, ok) => {
			notes?.add(seg, ok, scope.later.includes(seg));
			ok.forEach((o, d) => {
				if (!o) return;
				stats.n++;
				stats.total += seg.lengths[d];
			});
			for (const t of terms) {
				const list = postingOf(seg, t);
				if (list) for (let i = 0; i < list.length; i += 2) df.set(t, df.get(t)! + ok[list[i]]);
			}
		}),
		scope.tiers.length > 0
			? (early ?? tierRows(scope.index, scope.tiers, terms, (key) => new SegmentGone(key)))
			: undefined,
	]);
	if (rows) {
		scope.rows = rows;
		withTierStats(stats, scope.tiers, rows);
	}
	return stats;
}

/** Step 2 with tiers: the best of the segments read in turn and of the tiers, as one ranking. */
async function bestOfAll(
	scope: Scope,
	terms: readonly string[],
	stats: ScopeStats,
	k: number,
	notes: Candidates,
): Promise<IndexedChunk[]> {
	const read =
		(await notes.best(stats, k, (key) => readOrGone(scope, key), {
			bytesOf: (key) => scope.all.find((r) => r.key === key)?.bytes ?? 0,
			budget: scope.index.reads?.budget,
		})) ?? (await bestChunks(scope, terms, stats, k));
	if (scope.tiers.length === 0 || !scope.rows) return read;
	const later = new Set(scope.later.flatMap((s) => s.docs.map((d) => d.id)));
	const tiered = await tierBest(
		{
			tiers: scope.tiers,
			rows: scope.rows,
			read: (key) => readOrGone(scope, key),
			superseded: later,
			held: scope.held,
			budget: scope.index.reads?.budget,
		},
		terms,
		stats,
		k,
	);
	const own = read.map((chunk) => ({ chunk, score: ownScore(chunk, terms, stats) }));
	return mergeBest(own, tiered, k);
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
		const scores = new Float64Array(seg.lengths.length);
		const touched: number[] = [];
		for (const t of used) {
			const list = postingOf(seg, t);
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
			if (top.admits(scores[d])) top.push(scores[d], kept.push(docAt(seg, d)) - 1, 0);
	});
	return top.sorted().map(({ a }) => kept[a]);
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
				throw new IndexDamagedError(
					index.name,
					error.key ? [error.key] : listed.map((r) => r.key).slice(0, 1),
				);
			}
		}
	}
}

/**
 * The tiers' rows of a search's terms on the manifest the open sources are listed in, read while the
 * sources are (they need only that manifest): used if the search runs on that manifest, else read again.
 */
function earlyRows(index: LexicalIndex, filter: ChunkFilter, terms: readonly string[]) {
	// Tiers serve a search of everything only; a search of one conversation reads its source before any
	// manifest (openSources), which an early read must not come before.
	if (!isUnfiltered(filter)) return async () => undefined;
	const early = index.readManifest().then(async (manifest) => {
		const { tiers } = scopeFor(index, filter, [], manifest);
		const gone = (key: string) => new SegmentGone(key);
		return {
			version: manifest.version,
			rows: tiers.length > 0 ? await tierRows(index, tiers, terms, gone) : undefined,
		};
	});
	// A failed early read is read again on the search's manifest (and fails there, if it must).
	const settled = early.catch(() => undefined);
	return async (manifest: Versioned<LexicalManifest>) => {
		const got = await settled;
		return got && got.version === manifest.version ? got.rows : undefined;
	};
}

/**
 * The index as one search sees it, read one segment after another: the open sources in scope first
 * (as lexicalView), then the manifest, once unless a source moved past its listing. A search reads the
 * tiers' buckets of its words beside the open sources.
 */
export async function streamedView(index: LexicalIndex, filter: ChunkFilter): Promise<LexicalView> {
	const opened = openSources([index], filter);
	// Awaited by the first search (or frequencies, names); until then a failure is not unhandled.
	opened.catch(() => undefined);
	const scopeOf = async (manifest: Versioned<LexicalManifest>) =>
		scopeFor(index, filter, (await opened).segments, manifest);
	const stale = async () => (await opened).stale[0];
	let names = new Map<string, number>();
	let n = 0;
	// The last statistics taken: frequencies() of the query just searched reads no segment again.
	let last: ScopeStats | undefined;
	const statsFor = (query: string) =>
		attempt(index, false, async (manifest) => {
			const terms = [...new Set(tokenize(query))];
			if (!last || terms.some((t) => !last!.df.has(t)))
				last = await statsOf(await scopeOf(manifest), terms);
			n = last.n;
			return terms.map((term) => ({ term, df: last!.df.get(term)! }));
		});
	const search = async (query: string, k: number): Promise<LexicalMatch[]> => {
		const terms = [...new Set(tokenize(query))];
		const early = earlyRows(index, filter, terms);
		return attempt(index, await stale(), async (manifest) => {
			const scope = await scopeOf(manifest);
			const notes = new Candidates(terms);
			const stats = await statsOf(scope, terms, notes, await early(manifest));
			last = stats;
			n = stats.n;
			if (terms.length === 0 || stats.n === 0) return [];
			const best = await bestOfAll(scope, terms, stats, k, notes);
			const seg = await nearSegment(scope, messagesOf(best), scope.held);
			const all = { ok: [new Uint8Array(seg.docs.length).fill(1)], n: seg.docs.length };
			const total = seg.lengths.reduce((a, b) => a + b, 0);
			return bm25(query, [seg], { ...all, total }, k, stats);
		});
	};
	return {
		get size() {
			return n;
		},
		frequencies: statsFor,
		search,
		names: (chunk: IndexedChunk) => namesBy(chunk, n, (term) => names.get(term) ?? 0),
		prepareNames: async (chunks: readonly IndexedChunk[]) =>
			attempt(index, false, async (manifest) => {
				names = await termCounts(await scopeOf(manifest), chunks, nameLimit(n));
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
	// The tiers' share from their buckets of these words (a search of everything), the rest read.
	if (scope.tiers.length > 0) {
		const rows = await tierRows(
			scope.index,
			scope.tiers,
			[...counts.keys()],
			(k) => new SegmentGone(k),
		);
		rows.forEach((byTerm, i) => {
			const width = wordRow(scope.tiers[i].tier);
			for (const [term, list] of byTerm) counts.set(term, counts.get(term)! + list.length / width);
		});
	}
	await visit(scope, (seg, ok) => {
		for (const [term, held] of counts) {
			const list = postingOf(seg, term);
			if (!list || held > most) continue;
			let df = held;
			for (let i = 0; i < list.length && df <= most; i += 2) df += ok[list[i]];
			counts.set(term, df);
		}
	});
	return counts;
}
