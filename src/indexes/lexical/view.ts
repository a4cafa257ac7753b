// What one search (or Status) sees of one or more lexical indexes read together: a base's partitions
// that a scope spans, or, while a base is upgraded, its moved single index and its partitions. Their
// segments and the open sources in scope are loaded once, a later copy of a chunk ID supersedes an
// earlier one across all of them (the indexes are given oldest first), and BM25 ranks over the union.
import { BoundedCache } from '../../common/bounded-cache';
import { MAX_PARALLEL, mapLimit } from '../../common/parallel';
import { isGone } from '../chunks/chunk';
import type { IndexedChunk } from '../chunks/chunk';
import type { ChunkFilter } from '../chunks/filter';
import { bm25, frequencies, scopeOf } from './bm25';
import type { SearchScope } from './bm25';
import type { LexicalIndex } from './lexical-index';
import type { LexicalManifest } from './manifest';
import { namesOf } from './names';
import { movedPast, sourcesInScope } from './open-sources';
import type { SourceTail } from './open-sources';
import type { LexicalSegment } from './segment';
import type { LexicalStats, LexicalView } from './types';
import type { Versioned } from '../../store/document-store';

/** What one index contributes to a read: its manifest as read, and the segments loaded from it. */
export interface LoadedIndex {
	manifest: Versioned<LexicalManifest>;
	loaded: LexicalSegment[];
	/** Names the manifest version and the segments loaded (what cached masks depend on). */
	id: string;
}

/** Which documents are live, per set of loaded segments. */
const masks = new BoundedCache<Uint8Array[]>({ name: 'lexical live masks', maxEntries: 128 });
/** Which documents a filter lets through, per live mask and filter (a user's searches reuse it). */
const scopes = new BoundedCache<SearchScope>({ name: 'lexical search scopes', maxEntries: 256 });

export function clearViewCache(): void {
	masks.clear();
	scopes.clear();
}

const EMPTY: LexicalView = {
	search: () => [],
	names: () => [],
	size: 0,
	sample: () => [],
	frequencies: () => [],
};

/** Texts of `count` in-scope documents drawn at random (with replacement). */
function sampleTexts(
	loaded: LexicalSegment[],
	scope: SearchScope,
	count: number,
	rand: () => number,
): string[] {
	const docs: Array<[number, number]> = [];
	scope.ok.forEach((mask, s) => mask.forEach((m, d) => m && docs.push([s, d])));
	if (docs.length === 0) return [];
	return Array.from({ length: count }, () => {
		const [s, d] = docs[Math.floor(rand() * docs.length)];
		return loaded[s].docs[d].text;
	});
}

/** Live documents per loaded segment: a later copy of a chunk ID supersedes earlier ones. */
function liveOf(id: string, loaded: LexicalSegment[]): Uint8Array[] {
	return masks.getOrSet(id, () => {
		const seen = new Set<string>();
		const out: Uint8Array[] = new Array(loaded.length);
		for (let s = loaded.length - 1; s >= 0; s--) {
			const docs = loaded[s].docs;
			const mask = new Uint8Array(docs.length);
			for (let d = docs.length - 1; d >= 0; d--)
				if (!seen.has(docs[d].id) && !isGone(docs[d])) {
					seen.add(docs[d].id);
					mask[d] = 1;
				}
			out[s] = mask;
		}
		return out;
	});
}

/** The open sources read for a search, and which indexes' manifests must be read again after them. */
interface Sources {
	segments: LexicalSegment[];
	/** Per index: a source in scope moved past its listing in the manifest read (see movedPast). */
	stale: boolean[];
}

/**
 * The open sources in scope, read once through the first index's reader (every index of a base
 * shares one): the filter's conversation, or those the manifests list for its user (or all).
 */
export async function openSources(
	indexes: LexicalIndex[],
	filter: ChunkFilter,
	listed?: ReadonlyArray<Promise<Versioned<LexicalManifest>>>,
): Promise<Sources> {
	if (filter.sessionId !== undefined) {
		// Read before any manifest: the manifests are read once, after it.
		const read = await indexes[0].readSources([filter.sessionId]);
		return { segments: segmentsOf(indexes[0], read), stale: indexes.map(() => false) };
	}
	const listings = await Promise.all(listed ?? indexes.map((i) => i.readManifest()));
	const inScope = listings.map((l) => sourcesInScope(l.doc.open, filter));
	const ids = [...new Set(inScope.flatMap((list) => list.map((o) => o.session_id)))];
	const read = ids.length > 0 ? await indexes[0].readSources(ids) : [];
	const states = new Map(read.map((t) => [t.id, t.state]));
	// A source folded after its manifest was read may be in neither as read: that manifest again.
	const stale = inScope.map((list) =>
		list.some((o) => movedPast(o, states.has(o.session_id) ? states.get(o.session_id)! : null)),
	);
	return { segments: segmentsOf(indexes[0], read), stale };
}

const segmentsOf = (index: LexicalIndex, read: SourceTail[]) =>
	read.map((t) => index.sourceSegment(t)).filter((seg) => seg.docs.length > 0);

/**
 * The segments of each index's manifest, read while its open sources are (each use: a search of a
 * user, or of everything; a search of one conversation reads its source before any manifest). Used
 * where no source moved past its listing in that manifest: the segments read then are those to use.
 */
function loadWhileSources(indexes: LexicalIndex[], filter: ChunkFilter) {
	if (filter.sessionId !== undefined) return undefined;
	const listed = indexes.map((i) => i.readManifest());
	const segments = listed.map(async (m, n) => indexes[n].loadSegments(filter, false, await m));
	// Awaited only where used (a moved source reads them again); until then, no unhandled rejection.
	for (const p of [...listed, ...segments]) p.catch(() => undefined);
	return { listed, segments };
}

/**
 * The indexes (oldest first) as one search sees them. Sources are read after the manifest that lists
 * them and before the manifest whose segments are used: a chunk its owner takes out of a source is in
 * every manifest read after it. One read of each manifest serves both unless a source moved past its
 * listing since (then it is read again, and its segments); its segments are read beside the sources.
 */
export async function lexicalView(
	indexes: LexicalIndex[],
	filter: ChunkFilter,
): Promise<LexicalView> {
	if (indexes.length === 0) return EMPTY;
	const early = loadWhileSources(indexes, filter);
	const { segments: sources, stale } = await openSources(indexes, filter, early?.listed);
	const parts = await Promise.all(
		indexes.map((i, n) =>
			early && !stale[n] ? early.segments[n] : i.loadSegments(filter, stale[n]),
		),
	);
	const loaded = [...parts.flatMap((p) => p.loaded), ...sources];
	if (loaded.every((seg) => seg.docs.length === 0)) return EMPTY;
	const id = [...parts.map((p) => p.id), ...sources.map((s) => s.key)].join('\n');
	const f = [filter.sessionId, filter.userId, filter.since, filter.until];
	const scope = scopes.getOrSet(`${id}\n${JSON.stringify(f)}`, () =>
		scopeOf(loaded, liveOf(id, loaded), filter),
	);
	return {
		search: (query, k) => bm25(query, loaded, scope, k),
		names: (chunk: IndexedChunk) => namesOf(chunk, loaded, scope),
		size: scope.n,
		sample: (count, rand) => sampleTexts(loaded, scope, count, rand),
		frequencies: (query) => frequencies(query, loaded, scope),
	};
}

/** What the indexes hold together (every segment read), and which listed segments storage lost. */
export async function lexicalStats(indexes: LexicalIndex[]): Promise<LexicalStats> {
	const none = { exists: false, chunks: 0, bySession: {}, segments: 0, missing: [] };
	if (indexes.length === 0) return none;
	const { segments: sources, stale } = await openSources(indexes, {}); // as lexicalView
	// A few at a time: a Status may check the partitions of a hundred conversations.
	const parts = await mapLimit(
		indexes.map((index, n) => ({ index, n })),
		MAX_PARALLEL,
		({ index, n }) => index.loadAll(stale[n]),
	);
	if (parts.every((p) => p.manifest.version === null)) return none;
	const loaded = [...parts.flatMap((p) => p.loaded), ...sources];
	const live = liveOf([...parts.map((p) => p.id), ...sources.map((s) => s.key)].join('\n'), loaded);
	const bySession: Record<string, number> = {};
	let chunks = 0;
	loaded.forEach((seg, s) =>
		seg.docs.forEach((d, i) => {
			if (!live[s][i]) return;
			chunks++;
			bySession[d.session_id] = (bySession[d.session_id] ?? 0) + 1;
		}),
	);
	const segments = parts.reduce((n, p) => n + p.segments, 0);
	return { exists: true, chunks, bySession, segments, missing: parts.flatMap((p) => p.missing) };
}
