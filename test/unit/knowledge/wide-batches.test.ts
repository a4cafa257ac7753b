// Copies into the base-wide index (an upgrade moving partitions into it) write whole segments: a batch
// written as it passed a segment's size left a segment of a few chunks beside each full one, which
// nothing merges later, so every search of the base read twice as many objects.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	COMPACT_BELOW,
	EmbeddedIndex,
	LexicalIndex,
	LocalDiskStorage,
	SEGMENT_MAX_VECTORS,
	WIDE_SEGMENT_CHUNKS,
	WideBatches,
} from '../../../src/internal';
import type { IndexedChunk } from '../../../src/internal';
import { randomRows, seededRandom } from '../../support/embeddings';
import { tempDir } from '../../support/storages';

const chunk = (i: number): IndexedChunk => ({
	id: `c${i}`,
	session_id: `s${Math.floor(i / 100)}`,
	message_id: `m${i}`,
	seq: (i % 100) + 1,
	run_id: `r${i}`,
	chunk_index: 0,
	created_at: new Date(i * 1000).toISOString(),
	text: `word${i % 50} other${i % 7} note ${i}`,
});

describe('copies into the base-wide index', () => {
	it('are written in whole segments, the rest once at the end', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('wide-batches') });
		const lexical = new LexicalIndex(storage, 'wide words', 'wide/lexical/', 12, undefined, {
			segmentChunks: WIDE_SEGMENT_CHUNKS,
		});
		const vectors = new EmbeddedIndex(storage, 'kb', 'wide/index/');
		const batches = new WideBatches(lexical, vectors);
		// 82 partitions of 100 chunks: 8,200, just past two segments' worth.
		const total = 2 * WIDE_SEGMENT_CHUNKS + 8;
		const rows = randomRows(total, 8, seededRandom(3));
		for (let from = 0; from < total; from += 100) {
			const part = Array.from({ length: Math.min(100, total - from) }, (_, j) => chunk(from + j));
			await batches.addWords(part);
			await batches.addVectors(part, rows.slice(from, from + part.length));
		}
		await batches.flush();
		const words = (await lexical.readManifest(true)).doc.segments.map((r) => r.count);
		assert.deepEqual(
			[...words].sort((a, b) => a - b),
			[8, WIDE_SEGMENT_CHUNKS, WIDE_SEGMENT_CHUNKS],
		);
		const stats = await lexical.stats();
		assert.equal(stats.chunks, total);
		const listed = (await vectors.readManifest(true)).doc.segments.map((r) => r.count);
		assert.equal(
			listed.reduce((a, b) => a + b, 0),
			total,
		);
		// Full segments, then what compaction merged: no run of small neighbours is left behind.
		const small = listed.filter((n) => n < SEGMENT_MAX_VECTORS);
		assert.ok(small.length <= 1, `vector segments ${listed.join(' ')}`);
		assert.ok(listed.length <= Math.ceil(total / COMPACT_BELOW) + 16, `${listed.length}`);
	});
});
