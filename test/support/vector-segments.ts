// Vector indexes laid out segment by segment for tests: an add merges its newest segments as they come
// (vector-maintenance.ts, tailRun), so a test that needs many small segments (a search across them,
// cell tiers built from them) lists each one as written, as an index before that merge kept them.
import { SEGMENT_MAX_VECTORS } from '../../src/internal';
import { normaliseRows } from '../../src/indexes/vector/vector-segment';
import type { EmbeddedIndex, IndexedChunk } from '../../src/internal';

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
