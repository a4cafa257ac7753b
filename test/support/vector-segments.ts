// Vector indexes laid out segment by segment for tests: an add merges its newest segments as they come
// (vector-maintenance.ts, tailRun), so a test that needs many small segments (a search across them,
// cell tiers built from them) lists each one as written, as an index before that merge kept them.
import {
	EmbeddedIndex,
	LocalDiskStorage,
	SEGMENT_MAX_VECTORS,
	settleCellTiers,
	vectorIndexPrefix,
} from '../../src/internal';
import { normaliseRows } from '../../src/indexes/vector/vector-segment';
import type { IndexedChunk, MemoryStorage } from '../../src/internal';
import { seededRandom } from './embeddings';
import { tempDir } from './storages';

/** Chunk `i` of a conversation, as a sync indexes it (`fields` replace its own). */
export const vectorChunk = (
	i: number,
	session = 's',
	fields: Partial<IndexedChunk> = {},
): IndexedChunk => ({
	id: `c${i}`,
	session_id: session,
	message_id: `m${i}`,
	seq: i + 1,
	run_id: `r${i}`,
	chunk_index: 0,
	created_at: new Date(0).toISOString(),
	text: `text ${i} of ${session}`,
	...fields,
});

/** Writes `chunks` with `rows` as segments of at most `per` rows, each listed last, unmerged. */
export async function appendSegments(
	index: EmbeddedIndex,
	chunks: IndexedChunk[],
	rows: number[][],
	per = SEGMENT_MAX_VECTORS,
): Promise<void> {
	const vectors = normaliseRows(rows, chunks.length);
	const dims = vectors.length / chunks.length;
	for (let from = 0; from < chunks.length; from += per) {
		const part = chunks.slice(from, from + per);
		const { ref } = await index.writeSegment(
			dims,
			part,
			vectors.slice(from * dims, (from + part.length) * dims),
		);
		const result = await index.updateManifest((cur) => ({
			...(cur.version === null ? {} : cur.doc),
			dimensions: dims,
			segments: [...(cur.version === null ? [] : cur.doc.segments), ref],
			updated_at: ref.created_at,
		}));
		if (!result.written) throw new Error('the manifest changed under the test');
	}
}

/**
 * `count` rows around `topics` random centres (seeded), spread by `spread`, in an order that mixes the
 * topics (as conversations interleave).
 */
export function clusteredRows(
	count: number,
	topics: number,
	dims: number,
	spread: number,
	seed: number,
): number[][] {
	const next = seededRandom(seed);
	const rand = () => next() + 0.5;
	const centres = Array.from({ length: topics }, () =>
		Array.from({ length: dims }, () => rand() - 0.5),
	);
	return Array.from({ length: count }, (_, i) =>
		centres[(i * 7) % topics].map((x) => x + spread * (rand() - 0.5)),
	);
}

/**
 * An index that keeps cell tiers, of many small segments (a byte cap keeps them from merging): 2,400
 * rows of 40 topics in 60 adds, its tiers settled; `open` opens it again over another storage (with
 * `options`: buckets of `bucketBytes` split its cells).
 */
export async function tieredVectorIndex(
	dims: number,
	chunk: (i: number) => IndexedChunk,
	options: { bucketBytes?: number } = {},
) {
	const root = tempDir('cell-tiers');
	const open = (storage: MemoryStorage = new LocalDiskStorage({ root }), cacheBytes?: number) =>
		new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb'), 12, {
			segmentBytes: 6000,
			tiers: true,
			...options,
			...(cacheBytes === undefined ? {} : { cacheBytes }),
		});
	const rows = clusteredRows(2400, 40, dims, 0.1, 21);
	const writer = open();
	for (let s = 0; s < 60; s++)
		await writer.add(
			rows.slice(s * 40, (s + 1) * 40).map((_, i) => chunk(s * 40 + i)),
			rows.slice(s * 40, (s + 1) * 40),
		);
	await settleCellTiers(writer);
	return { root, open, writer, rows };
}
