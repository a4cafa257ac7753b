// Vector segments in blocks (stored-vectors.ts): the same rows and chunks as the form written whole, a
// chunk read decodes only its block, a search of the wide kind (no filter) decodes only what it returns,
// and every altered part is an error naming the key when it is first asked for (never an empty answer).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	chunkAt,
	decodeSegment,
	encodeSegment,
	encodeWholeSegment,
	messageHash,
	rowCount,
} from '../../../src/internal';
import type { IndexedChunk } from '../../../src/internal';
import { chunkOrder } from '../../../src/indexes/chunks/chunk';
import { BestChunks } from '../../../src/indexes/vector/best-chunks';
import { similaritiesOf } from '../../../src/indexes/vector/ranking';
import { normaliseRows, rowMask } from '../../../src/indexes/vector/vector-segment';
import { randomRows, seededRandom } from '../../support/embeddings';
import { closeVectors, corruptNamed, openVectors } from '../../support/stored-segments';
import { collect } from '../../support/held';

const DIMS = 8;
const chunk = (i: number, message = `m-${i}`): IndexedChunk => ({
	id: `c-${i}`,
	session_id: `chat-${i >> 5}`,
	user_id: `user-${i >> 5}`,
	message_id: message,
	seq: i % 32,
	run_id: 'r',
	chunk_index: i % 3,
	created_at: new Date(1e12 + i * 1000).toISOString(),
	text: `message ${i} about the weather`,
});
const chunks = (n: number) => Array.from({ length: n }, (_, i) => chunk(i));
const rowsOf = (n: number, seed = 1) =>
	normaliseRows(randomRows(n, DIMS, seededRandom(seed)), n, DIMS);
const corrupt = corruptNamed;

/** Blocks of a stored segment replaced by bytes that are not gzipped JSON. */
function spoilBlocks(body: Buffer, blocks: number[]): Buffer {
	const s = openVectors(body);
	assert.deepEqual(closeVectors(s), body, 'opened and closed as it was');
	const out = Buffer.from(body);
	for (const b of blocks) {
		const start = body.length - s.header.parts.slice(b).reduce((a, p) => a + p, 0);
		out.fill(0x41, start, start + s.header.parts[b]);
	}
	return out;
}

describe('vector segments in blocks', () => {
	it('hold what the whole form holds: rows, chunks, the table of messages and chunk indexes', () => {
		const list = chunks(200);
		const rows = rowsOf(200);
		const lazy = decodeSegment('k', encodeSegment(DIMS, list, rows));
		const whole = decodeSegment('k', encodeWholeSegment(DIMS, list, rows));
		assert.deepEqual([...lazy.vectors], [...whole.vectors]);
		assert.deepEqual(lazy.chunks, whole.chunks);
		assert.equal(rowCount(lazy), 200);
		assert.deepEqual(chunkAt(lazy, 137), list[137]);
		assert.deepEqual(
			[...lazy.lazy!.messages],
			list.map((c) => messageHash(c.message_id)),
		);
		assert.deepEqual(
			[...lazy.lazy!.chunkIndexes],
			list.map((c) => c.chunk_index),
		);
		assert.equal(whole.lazy, undefined);
		// The stored form is smaller: the chunks are gzipped.
		assert.ok(encodeSegment(DIMS, list, rows).length < encodeWholeSegment(DIMS, list, rows).length);
	});

	it('a chunk read decodes its block only: an altered block elsewhere is not read, and is named when it is', () => {
		const body = spoilBlocks(encodeSegment(DIMS, chunks(200), rowsOf(200)), [2]);
		const seg = decodeSegment('segments/x', body);
		assert.equal(chunkAt(seg, 0).id, 'c-0');
		assert.equal(chunkAt(seg, 199).id, 'c-199');
		for (let i = 0; i < 2; i++) {
			assert.throws(() => chunkAt(seg, 130), corrupt('segments/x', 'block 2'));
			assert.throws(() => seg.chunks, corrupt('segments/x', 'block 2'));
		}
		assert.throws(() => chunkAt(seg, 200), RangeError);
	});

	it('a block whose chunks are not those its table lists is named (another message, another chunk index)', () => {
		for (const alter of [
			(c: Record<string, unknown>) => (c.message_id = 'm-other'),
			(c: Record<string, unknown>) => (c.chunk_index = 9),
		]) {
			const s = openVectors(encodeSegment(DIMS, chunks(100), rowsOf(100)));
			alter(s.blocks[1][3]);
			const seg = decodeSegment('segments/y', closeVectors(s));
			assert.equal(chunkAt(seg, 3).id, 'c-3');
			assert.throws(
				() => chunkAt(seg, 67),
				corrupt('segments/y', 'chunks.67: not the chunk its table lists'),
			);
		}
	});

	it('an altered header, rows or lengths are refused as it is decoded, naming it', () => {
		const body = encodeSegment(DIMS, chunks(100), rowsOf(100));
		const s = openVectors(body);
		const cases: Array<[string, Buffer]> = [
			['cut short', body.subarray(0, body.length - 3)],
			['longer', Buffer.concat([body, Buffer.from([0])])],
			['parts', closeVectors(s, { parts: [1] })],
			['count', closeVectors({ ...s, header: { ...s.header, count: 0 } })],
			['heap', closeVectors({ ...s, header: { ...s.header, heap: -1 } })],
			['dimensions', closeVectors({ ...s, header: { ...s.header, dimensions: 0 } })],
		];
		const rows = Buffer.from(s.rows);
		rows.writeFloatLE(7, 4 * DIMS * 5);
		cases.push(['row', closeVectors({ ...s, rows })]);
		for (const [name, bytes] of cases)
			assert.throws(() => decodeSegment('segments/z', bytes), corrupt('segments/z'), name);
		// Sizes that add up but split the parts elsewhere: the block cut is named when it is read.
		const shifted = closeVectors(s, { parts: [s.header.parts[0] + 1, s.header.parts[1] - 1] });
		const seg = decodeSegment('segments/z', shifted);
		assert.throws(() => chunkAt(seg, 70), corrupt('segments/z', 'block 1'));
	});

	it('a row that is not a unit vector is refused at any place, whatever the dimensions', () => {
		for (const dims of [1, 3, 4, 5, 8, 13]) {
			const n = 7;
			const rows = normaliseRows(randomRows(n, dims, seededRandom(dims)), n, dims);
			const good = encodeSegment(dims, chunks(n), rows);
			assert.equal(decodeSegment('segments/u', good).dimensions, dims);
			const zeros = new Float32Array(rows);
			zeros.fill(0, 2 * dims, 3 * dims); // an embedder's zeros are a row as written
			assert.equal(
				decodeSegment('segments/u', encodeSegment(dims, chunks(n), zeros)).dimensions,
				dims,
			);
			for (const [value, at] of [
				[Number.NaN, 0],
				[Number.POSITIVE_INFINITY, dims - 1],
				[2, 6 * dims + (dims >> 1)],
				[-2, 3 * dims + dims - 1],
			] as const) {
				const bad = new Float32Array(rows);
				bad[at] = value;
				const body = encodeSegment(dims, chunks(n), bad);
				assert.throws(
					() => decodeSegment('segments/u', body),
					corrupt('segments/u'),
					`${dims}/${at}`,
				);
			}
			// Every value of a row a tenth longer: its length is past the tolerance.
			const long = new Float32Array(rows);
			for (let j = 4 * dims; j < 5 * dims; j++) long[j] *= 1.1;
			assert.throws(
				() => decodeSegment('segments/u', encodeSegment(dims, chunks(n), long)),
				corrupt('segments/u'),
			);
		}
	});

	it('a search without a filter decodes the chunks it keeps only (not every row of every block)', () => {
		const q = rowsOf(1, 9);
		// The best row of all is in the first segment: the query itself.
		const firstRows = rowsOf(64, 2);
		firstRows.set(q, 5 * DIMS);
		const first = decodeSegment('a', encodeSegment(DIMS, chunks(64), firstRows));
		// Every block of the second is spoilt: reading any chunk of it would throw.
		const n = 640;
		const body = encodeSegment(DIMS, chunks(n), rowsOf(n, 3));
		const second = decodeSegment('b', spoilBlocks(body, [...Array(n / 64).keys()]));
		const top = new BestChunks(1);
		top.offerRows(first, rowMask(first, {}), q);
		top.offerRows(second, rowMask(second, {}), q);
		assert.deepEqual(
			top.sorted().map((m) => m.chunk.id),
			['c-5'],
		);
		// A filter needs every chunk: the spoilt blocks are named, not skipped.
		assert.throws(() => rowMask(second, { userId: 'user-1' }), corrupt('b', 'block'));
		// And a row that ranks is read: the spoilt block is named, never passed over.
		assert.throws(() => {
			const alone = new BestChunks(1);
			alone.offerRows(second, rowMask(second, {}), q);
			alone.sorted();
		}, corrupt('b'));
	});

	it('similarities find the rows of a message by its hash, and never a row of another message with the same hash', () => {
		// Two message IDs with one hash (32 bits: found among some hundred thousand).
		const seen = new Map<number, string>();
		let pair: [string, string] | undefined;
		for (let i = 0; !pair; i++) {
			const id = `msg-${i}`;
			const h = messageHash(id);
			const other = seen.get(h);
			if (other) pair = [other, id];
			else seen.set(h, id);
		}
		const [a, b] = pair;
		const list = [chunk(0, a), chunk(1, b), chunk(2, 'm-2')];
		const rows = rowsOf(3, 5);
		const q = rowsOf(1, 6);
		for (const encode of [encodeSegment, encodeWholeSegment]) {
			const seg = decodeSegment('k', encode(DIMS, list, rows));
			const mask = new Uint8Array(3).fill(1);
			const got = similaritiesOf([seg], [mask], q, new Map([[a, new Set([0, 1, 2])]]));
			assert.deepEqual([...got.keys()], [`${list[0].session_id}\n${a}\n0`]);
			// A chunk index the table does not hold for it is not a match either.
			assert.equal(similaritiesOf([seg], [mask], q, new Map([[b, new Set([0])]])).size, 0);
		}
	});

	it('rows that score alike rank by chunkOrder from the table, however split, and each chunk ID counts once', () => {
		// One vector for all: every score ties. Capture times, conversations and places vary, and repeat.
		const list = Array.from({ length: 150 }, (_, i) => ({
			...chunk(i),
			created_at: new Date(1e12 + (i % 7) * 1000).toISOString(),
			session_id: `chat-${(i * 7) % 5}`,
			seq: i % 11,
			chunk_index: i % 2,
		}));
		const one = rowsOf(1, 4);
		const rows = new Float32Array(150 * DIMS);
		for (let r = 0; r < 150; r++) rows.set(one, r * DIMS);
		const expected = [...list]
			.sort(chunkOrder)
			.slice(0, 40)
			.map((c) => c.id);
		for (const encode of [encodeSegment, encodeWholeSegment])
			for (const cut of [
				[0, 150],
				[0, 64, 150],
				[0, 33, 100, 150],
			]) {
				const best = new BestChunks(40);
				for (let i = 0; i + 1 < cut.length; i++) {
					const part = list.slice(cut[i], cut[i + 1]);
					const seg = decodeSegment(
						`s${i}`,
						encode(DIMS, part, rows.subarray(cut[i] * DIMS, cut[i + 1] * DIMS)),
					);
					best.offerRows(seg, rowMask(seg, {}), one);
				}
				// A retried write's copy of some chunks, in a segment of its own: counted once.
				const copy = decodeSegment(
					'copy',
					encode(DIMS, list.slice(0, 20), rows.subarray(0, 20 * DIMS)),
				);
				best.offerRows(copy, rowMask(copy, {}), one);
				assert.deepEqual(
					best.sorted().map((m) => m.chunk.id),
					expected,
					`${encode.name} ${cut}`,
				);
			}
	});

	it('rows among the best after one segment that later ones push out are never decoded; those that stay are, at the end', () => {
		const q = rowsOf(1, 9);
		// The first segment's rows are all weaker than the second's (near the query's opposite), and
		// every block of the first is spoilt: decoding any of its chunks would throw.
		const weak = rowsOf(128, 4);
		for (let r = 0; r < 128; r++)
			for (let j = 0; j < DIMS; j++) weak[r * DIMS + j] = -q[j] * 0.9 + weak[r * DIMS + j] * 0.1;
		const strong = rowsOf(128, 5);
		for (let r = 0; r < 128; r++)
			for (let j = 0; j < DIMS; j++) strong[r * DIMS + j] = q[j] + strong[r * DIMS + j] * 0.1;
		const norm = (rows: Float32Array) =>
			normaliseRows(
				Array.from({ length: 128 }, (_, r) => Array.from(rows.subarray(r * DIMS, (r + 1) * DIMS))),
				128,
				DIMS,
			);
		const first = decodeSegment(
			'weak',
			spoilBlocks(encodeSegment(DIMS, chunks(128), norm(weak)), [0, 1]),
		);
		const second = decodeSegment(
			'strong',
			encodeSegment(DIMS, chunks(256).slice(128), norm(strong)),
		);
		const best = new BestChunks(5);
		// The first segment's five best are kept past its turn (decoded then, they threw before).
		best.offerRows(first, rowMask(first, {}), q);
		best.offerRows(second, rowMask(second, {}), q);
		const got = best.sorted();
		assert.equal(got.length, 5);
		assert.ok(
			got.every((m) => Number(m.chunk.id.slice(2)) >= 128),
			'the strong rows only',
		);
		// Had none of the second's rows come, the first's are named as spoilt when returned.
		const alone = new BestChunks(5);
		alone.offerRows(first, rowMask(first, {}), q);
		assert.throws(() => alone.sorted(), corrupt('weak', 'block'));
	});

	it('the k best keep nothing of a segment once it is done, its stored bytes included: memory holds copies of their blocks only', async () => {
		// A bucket of the cell tiers is megabytes: a kept row that held its bytes (through a view of the
		// table, or a reference weakly held until a full collection) kept every bucket a search read.
		const q = rowsOf(1, 9);
		const best = new BestChunks(50);
		const refs: Array<WeakRef<object>> = [];
		const offer = (s: number) => {
			const bytes = encodeSegment(DIMS, chunks(640), rowsOf(640, 20 + s));
			const own = new Uint8Array(new ArrayBuffer(bytes.length));
			own.set(bytes);
			const seg = decodeSegment(`s${s}`, own);
			refs.push(new WeakRef(seg), new WeakRef(own.buffer));
			best.offerRows(seg, rowMask(seg, {}), q);
		};
		for (let s = 0; s < 4; s++) offer(s);
		await collect();
		assert.deepEqual(
			refs.map((r) => r.deref() === undefined),
			Array(8).fill(true),
		);
		const got = best.sorted();
		assert.equal(got.length, 50);
		// Decoded from the copies, the chunks are those stored.
		for (const { chunk: c } of got) assert.deepEqual(c, chunks(640)[Number(c.id.slice(2))]);
	});
});
