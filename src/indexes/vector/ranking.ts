// Exact cosine ranking over one or more embedded indexes read together: a base's partitions that a
// scope spans, or, while a base is upgraded, its moved single index and its partitions (a chunk in
// both counts once, as the partition's copy). Every live row in scope is compared (topRows).
import { DimensionMismatchError } from '../../errors';
import type { Versioned } from '../../store/document-store';
import { chunkKey } from '../chunks/chunk';
import type { ChunkFilter } from '../chunks/filter';
import type { IndexManifest } from './manifest';
import type { EmbeddedIndex } from './vector-index';
import { messageHash } from './stored-vectors';
import { chunkAt, dot, MAX_TOP_K, normaliseRows, rowOf, topRows } from './vector-segment';
import type { Segment, VectorMatch } from './vector-segment';

/** What one index contributes to a search: its manifest, the segments in scope, their rows in scope. */
export interface LoadedVectors {
	manifest: Versioned<IndexManifest>;
	segments: Segment[];
	masks: Uint8Array[];
}

/**
 * Cosine similarities with the query of the chunks named (message ID → chunk indexes), by chunkKey;
 * `sessions` names their conversations (a ranking that holds no segments reads only theirs).
 */
export type Similarities = (
	wanted: Map<string, Set<number>>,
	sessions: ReadonlySet<string>,
) => Map<string, number> | Promise<Map<string, number>>;

export interface VectorRanking {
	matches: VectorMatch[];
	similarities: Similarities;
	/**
	 * The k best cosines of another query over the same rows (no read): what fusion's probes score.
	 * Absent from a ranking that does not hold its segments (each probe would be a pass over the index).
	 */
	probe?: (query: Float32Array, k: number) => number[];
}

const clampCosine = (score: number) => Math.max(-1, Math.min(1, score));

/**
 * Masks of a moved index without the rows a later index holds a copy of (an upgrade copies them over):
 * each chunk is ranked once. Only a moved index is checked; partitions never share a chunk.
 */
function withoutCopies(parts: LoadedVectors[]): Uint8Array[][] {
	const out = parts.map((p) => p.masks);
	parts.forEach((part, i) => {
		if (part.manifest.doc.moved_at === undefined || i === parts.length - 1) return;
		const later = new Set<string>();
		for (const p of parts.slice(i + 1))
			p.segments.forEach((seg, s) =>
				seg.chunks.forEach((c, r) => p.masks[s][r] && later.add(c.id)),
			);
		out[i] = part.masks.map((mask, s) =>
			mask.map((m, r) => (m && !later.has(part.segments[s].chunks[r].id) ? 1 : 0)),
		);
	});
	return out;
}

/**
 * The `k` chunks most similar to `query` over the indexes (oldest first), best first, with a way to
 * score more chunks of the same scope afterwards without reading anything again.
 */
export async function rankOver(
	indexes: EmbeddedIndex[],
	query: unknown,
	k: number,
	filter: ChunkFilter,
	options: { withVectors?: boolean } = {},
): Promise<VectorRanking> {
	const parts = (await Promise.all(indexes.map((i) => i.loadFor(filter)))).filter(
		(p) => p.manifest.version !== null && p.segments.length > 0,
	);
	if (parts.length === 0) return { matches: [], similarities: () => new Map(), probe: () => [] };
	const q = normaliseRows([query], 1);
	for (const p of parts)
		if (p.manifest.doc.dimensions !== q.length)
			throw new DimensionMismatchError(indexes[0].kbId, p.manifest.doc.dimensions, q.length);
	const segs = parts.flatMap((p) => p.segments);
	const masks = withoutCopies(parts).flat();
	const top = topRows(segs, masks, q, Math.max(1, Math.min(k, MAX_TOP_K)));
	const matches = top.map(({ score, a, b }) => ({
		...chunkAt(segs[a], b),
		score: clampCosine(score),
		...(options.withVectors ? { vector: Float32Array.from(rowOf(segs[a], b)) } : {}),
	}));
	return {
		matches,
		similarities: (ids) => similaritiesOf(segs, masks, q, ids),
		probe: (p, n) =>
			topRows(segs, masks, p, Math.min(n, MAX_TOP_K)).map((r) => clampCosine(r.score)),
	};
}

/** Per decoded segment read whole: its rows by message ID (built on first need; never rewritten). */
const rowsByMessage = new WeakMap<Segment, Map<string, number[]>>();

function rowsOf(seg: Segment): Map<string, number[]> {
	let map = rowsByMessage.get(seg);
	if (map) return map;
	map = new Map();
	seg.chunks.forEach((c, r) => {
		const rows = map!.get(c.message_id);
		if (rows) rows.push(r);
		else map!.set(c.message_id, [r]);
	});
	rowsByMessage.set(seg, map);
	return map;
}

/**
 * The rows of a segment that may hold the chunks `wanted` names: of one read in blocks, those whose
 * message hash and chunk index in its table match (one pass over the table, no chunk decoded); of one
 * read whole, those of the messages named.
 */
function rowsNamed(seg: Segment, wanted: Map<string, Set<number>>): number[] {
	const lazy = seg.lazy;
	if (!lazy) return [...wanted.keys()].flatMap((m) => rowsOf(seg).get(m) ?? []);
	const byHash = new Map<number, Array<Set<number>>>();
	for (const [m, chunks] of wanted) {
		const h = messageHash(m);
		byHash.set(h, [...(byHash.get(h) ?? []), chunks]);
	}
	const out: number[] = [];
	lazy.messages.forEach((h, r) => {
		if (byHash.get(h)?.some((chunks) => chunks.has(lazy.chunkIndexes[r]))) out.push(r);
	});
	return out;
}

/**
 * Cosine with `q` of the live, in-scope rows of the chunks `wanted` names (message ID → chunk
 * indexes), by chunkKey. (The word index names chunks by their own IDs: the message is what they share.)
 */
export function similaritiesOf(
	segs: Segment[],
	masks: Uint8Array[],
	q: Float32Array,
	wanted: Map<string, Set<number>>,
): Map<string, number> {
	const out = new Map<string, number>();
	segs.forEach((seg, s) => {
		for (const r of rowsNamed(seg, wanted)) {
			if (masks[s][r] === 0) continue;
			// A hash names a message ID: the chunk's own says whether it is one of those wanted.
			const c = chunkAt(seg, r);
			if (!wanted.get(c.message_id)?.has(c.chunk_index)) continue;
			const score = dot(seg.vectors, r * seg.dimensions, q, seg.dimensions);
			out.set(chunkKey(c), clampCosine(score));
		}
	});
	return out;
}
