// The texts a vector segment's table numbers (its conversations and capture times), stored after the
// table and read one at a time (common/stored-texts.ts), and a cell bucket's cells stored as its rows'
// tags: the same chunks and rankings as the form before (the texts in the JSON header), which is still
// read; every altered count, offset or text is an error naming the key, never another chunk.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { encodeTexts, textsAt } from '../../../src/common/stored-texts';
import { chunkAt, decodeSegment, encodeSegment } from '../../../src/internal';
import type { IndexedChunk } from '../../../src/internal';
import { BestChunks } from '../../../src/indexes/vector/best-chunks';
import { decodeCellBucket, encodeCellBucket } from '../../../src/indexes/vector/cell-tiers';
import { normaliseRows, rowMask } from '../../../src/indexes/vector/vector-segment';
import { randomRows, seededRandom } from '../../support/embeddings';
import { closeVectors, corruptNamed, expanded, openVectors } from '../../support/stored-segments';

const DIMS = 8;
const chunk = (i: number): IndexedChunk => ({
	id: `c-${i}`,
	session_id: i % 3 === 0 ? `chat-${i % 7}` : `Gespräch-${i % 5} 💬`,
	message_id: `m-${i}`,
	seq: i % 32,
	run_id: 'r',
	chunk_index: i % 2,
	created_at: new Date(1e12 + (i % 40) * 1000).toISOString(),
	text: `message ${i} about the weather`,
});
const chunks = (n: number) => Array.from({ length: n }, (_, i) => chunk(i));
const rowsOf = (n: number, seed = 1) =>
	normaliseRows(randomRows(n, DIMS, seededRandom(seed)), n, DIMS);
const corrupt = corruptNamed;
const failWith = (detail: string): never => {
	throw new Error(detail);
};

/** The ids of the k best rows for `q`, over the segments as given. */
function bestIds(bodies: Buffer[], q: Float32Array, k: number): string[] {
	const best = new BestChunks(k);
	bodies.forEach((body, i) => {
		const seg = decodeSegment(`s${i}`, body);
		best.offerRows(seg, rowMask(seg, {}), q);
	});
	return best.sorted().map((m) => m.chunk.id);
}

describe('stored texts', () => {
	it('read back each text as written, in any script, from any place in a buffer', () => {
		const texts = ['chat-1', 'Gespräch 💬', '2001-09-09T01:46:40.000Z', 'ü', 'x'.repeat(300)];
		const stored = encodeTexts(texts);
		assert.equal(stored.length % 4, 0, 'padded to 4 bytes');
		for (const before of [0, 4, 12]) {
			const buf = Buffer.concat([Buffer.alloc(before, 7), stored, Buffer.from('tail')]);
			const got = textsAt(buf, before, texts.length, failWith);
			assert.equal(got.end, before + stored.length);
			assert.deepEqual(
				Array.from({ length: got.texts.length }, (_, i) => got.texts.at(i)),
				texts,
			);
		}
		assert.deepEqual(textsAt(encodeTexts([]), 0, 0, failWith).end, 4);
	});

	it('offsets that do not start at 0, go back, name an empty text or run past the bytes are refused', () => {
		const stored = encodeTexts(['abc', 'de', 'f']);
		const at = (i: number, v: number) => {
			const copy = Buffer.from(stored);
			copy.writeUInt32LE(v, 4 * i);
			return copy;
		};
		const cases: Array<[string, Buffer, number, RegExp]> = [
			['first offset', at(0, 1), 3, /does not start/],
			['backwards', at(2, 2), 3, /text 1 .* out of order/],
			['empty', at(2, 3), 3, /text 1 of a list is empty/],
			['past the end', at(3, 4000), 3, /cut short/],
			['more texts than bytes', stored, 400, /cut short/],
		];
		for (const [name, buf, count, detail] of cases)
			assert.throws(() => textsAt(buf, 0, count, failWith), detail, name);
	});
});

describe('vector segments with their texts after the table', () => {
	it('hold the chunks, rows and rankings of the form before, which is still read', () => {
		const list = chunks(300);
		const rows = rowsOf(300);
		const body = encodeSegment(DIMS, list, rows);
		assert.equal(body.subarray(0, 8).toString('latin1'), 'LLMVEC03');
		const before = closeVectors(openVectors(body), { form: 'LLMVEC02' });
		assert.equal(before.subarray(0, 8).toString('latin1'), 'LLMVEC02');
		const now = decodeSegment('a', body);
		const then = decodeSegment('b', before);
		assert.deepEqual(now.chunks, list);
		assert.deepEqual(then.chunks, list);
		assert.deepEqual([...now.vectors], [...then.vectors]);
		// Every row ties (one vector): the order comes from the texts, the same in both forms.
		const one = new Float32Array(300 * DIMS);
		for (let r = 0; r < 300; r++) one.set(rows.subarray(0, DIMS), r * DIMS);
		const tied = encodeSegment(DIMS, list, one);
		const q = rows.subarray(0, DIMS);
		const expected = bestIds([closeVectors(openVectors(tied), { form: 'LLMVEC02' })], q, 60);
		assert.equal(expected.length, 60);
		assert.deepEqual(bestIds([tied], q, 60), expected);
		// What a byte scan sees holds the texts.
		assert.ok(expanded(body).includes(Buffer.from('Gespräch-1 💬')));
	});

	it('an altered text or count is named: as the segment is read, or as a chunk the text misnames is', () => {
		const body = encodeSegment(DIMS, chunks(100), rowsOf(100));
		const s = openVectors(body);
		assert.deepEqual(closeVectors(s), body, 'opened and closed as it was');
		// Another conversation for the rows of one: each chunk of it no longer matches its table.
		const renamed = closeVectors({ ...s, texts: [['chat-X', ...s.texts[0].slice(1)], s.texts[1]] });
		// Read without its texts checked one by one; its first chunk is named as it is asked for.
		const seg = decodeSegment('segments/t', renamed);
		assert.throws(() => chunkAt(seg, 0), corrupt('segments/t', 'not the chunk its table lists'));
		const cases: Array<[string, Buffer]> = [
			[
				'fewer texts than the table names',
				closeVectors({
					header: { ...s.header, texts: [s.texts[0].length - 1, s.texts[1].length] },
					texts: [s.texts[0].slice(0, -1), s.texts[1]],
					rows: s.rows,
					table: s.table,
					blocks: s.blocks,
				}),
			],
			[
				'a count past the rows',
				closeVectors({ ...s, header: { ...s.header, texts: [101, s.texts[1].length] } }),
			],
			[
				'counts missing',
				closeVectors({ ...s, header: { ...s.header, texts: undefined as never } }),
			],
			['tags said, none stored', closeVectors({ ...s, header: { ...s.header, tags: true } })],
		];
		for (const [name, bytes] of cases)
			assert.throws(() => decodeSegment('segments/u', bytes), corrupt('segments/u'), name);
	});

	it('a cell bucket keeps each row’s cell as its tag; one naming another bucket’s cell is refused, and buckets from before are read', () => {
		const list = chunks(50);
		const rows = rowsOf(50);
		const tier = { id: 't', codebook: 'k', segments: 1, rows: 50, buckets: 4, bytes: 0 };
		// 64 cells in 4 buckets: bucket 1 holds cells 16 to 31.
		const cells = list.map((_, i) => 16 + (i % 16));
		const body = encodeCellBucket(DIMS, list, rows, cells);
		const got = decodeCellBucket('cells/1', body, tier, 1, 64);
		assert.deepEqual([...got.cells], cells);
		assert.deepEqual(got.segment.chunks, list);
		const s = openVectors(body);
		assert.deepEqual(s.tags, cells);
		assert.throws(
			() =>
				decodeCellBucket(
					'cells/1',
					closeVectors({ ...s, tags: [40, ...cells.slice(1)] }),
					tier,
					1,
					64,
				),
			corrupt('cells/1', 'row 0 names cell 40'),
		);
		assert.throws(
			() =>
				decodeCellBucket(
					'cells/1',
					closeVectors({ ...s, tags: undefined, header: { ...s.header, tags: undefined } }),
					tier,
					1,
					64,
				),
			corrupt('cells/1', 'not a cell bucket'),
		);
		// Stored before tags: the cells in the header.
		const before = closeVectors(
			{ ...s, tags: undefined, header: { ...s.header, tags: undefined, cells } },
			{ form: 'LLMVEC02' },
		);
		assert.deepEqual([...decodeCellBucket('cells/1', before, tier, 1, 64).cells], cells);
	});
});
