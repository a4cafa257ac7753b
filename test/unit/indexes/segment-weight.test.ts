// The weight a decoded segment is cached at is what it holds in memory, not its stored size: the caches'
// limits are only limits if the weights are. Measured here against the heap (and typed arrays) after
// forced collections, for word segments of short and long chunks and vector segments of 64 dimensions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { build, decode, encode, encodeWhole } from '../../../src/indexes/lexical/segment';
import { encodeSegment, encodeWholeSegment } from '../../../src/indexes/vector/segment-writer';
import { decodeSegment } from '../../../src/indexes/vector/stored-vectors';
import { normaliseRows, weightOf } from '../../../src/indexes/vector/vector-segment';
import type { IndexedChunk } from '../../../src/internal';
import { randomRows, seededRandom } from '../../support/embeddings';
import { gc } from '../../support/held';

function chunks(n: number, words: number, seed: number): IndexedChunk[] {
	const rand = seededRandom(seed);
	return Array.from({ length: n }, (_, i) => ({
		id: `c-${i}-0123456789abcdef-${seed}`,
		session_id: `chat-user-${i >> 6}`,
		user_id: `user-${i >> 6}`,
		message_id: `m${i}`,
		seq: i % 100,
		run_id: `run-${i}`,
		chunk_index: 0,
		created_at: new Date(1e12 + i * 1000).toISOString(),
		text: `${Array.from({ length: words }, () => `w${Math.floor((rand() + 0.5) ** 2 * 5000).toString(36)}`).join(' ')}.`,
		role: 'user',
	}));
}

/** Bytes the heap and typed arrays grew by per value `make` returns, `copies` of them kept at once. */
function heldBy<T>(make: () => T, copies: number): { each: number; kept: T[] } {
	gc();
	gc();
	const before = process.memoryUsage();
	const kept = Array.from({ length: copies }, make);
	gc();
	gc();
	const after = process.memoryUsage();
	const grown = after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers);
	return { each: grown / copies, kept };
}

describe('the cache weight of a decoded segment', () => {
	for (const words of [14, 60]) {
		it(`word segment of ${words}-word chunks: at least what it holds, at most twice`, () => {
			const body = encode(build('k', chunks(2048, words, words)));
			// Read lazily, a segment holds its stored bytes and what was asked of it: all of it here.
			const whole = () => {
				const seg = decode('k', Buffer.from(body));
				assert.equal(seg.docs.length, 2048);
				assert.ok(seg.postings.size > 0);
				return seg;
			};
			const { each, kept } = heldBy(whole, 8);
			const weight = kept[0].bytes;
			assert.ok(weight >= 0.95 * each, `weight ${weight} < held ${Math.round(each)}`);
			assert.ok(weight <= 2 * each, `weight ${weight} > twice held ${Math.round(each)}`);
			// Its table alone holds far less than that weight: the cache errs on the side of its limit.
			const fresh = heldBy(() => decode('k', Buffer.from(body)), 8);
			assert.ok(fresh.each < weight / 2, `held ${Math.round(fresh.each)} of ${weight} unread`);
		});

		it(`word segment of ${words}-word chunks written whole (before blocks): at least what it holds, at most twice`, () => {
			const body = encodeWhole(build('k', chunks(2048, words, words)));
			const { each, kept } = heldBy(() => decode('k', body), 8);
			const weight = kept[0].bytes;
			assert.ok(weight >= 0.95 * each, `weight ${weight} < held ${Math.round(each)}`);
			assert.ok(weight <= 2 * each, `weight ${weight} > twice held ${Math.round(each)}`);
		});
	}

	const n = 2048;
	const dims = 64;
	const rows = normaliseRows(randomRows(n, dims, seededRandom(5)), n, dims);

	it('vector segment of 64 dimensions: at least what it holds, at most twice', () => {
		const body = encodeSegment(dims, chunks(n, 14, 3), rows);
		// Read in blocks, it holds what was asked of it: all of it here. (Without the int8 rows:
		// WebAssembly memory, not counted by the heap figures.)
		const whole = () => {
			const seg = decodeSegment('k', Buffer.from(body));
			assert.equal(seg.chunks.length, n);
			return seg;
		};
		const { each, kept } = heldBy(whole, 8);
		const weight = weightOf(kept[0]);
		assert.ok(weight >= 0.95 * each, `weight ${weight} < held ${Math.round(each)}`);
		assert.ok(weight <= 2 * each, `weight ${weight} > twice held ${Math.round(each)}`);
		// Its rows and table alone hold less than all of it, and less than that weight: the cache errs
		// on the side of its limit.
		const fresh = heldBy(() => decodeSegment('k', Buffer.from(body)), 8);
		assert.ok(fresh.each < 0.75 * each, `held ${Math.round(fresh.each)} of ${each} unread`);
		assert.ok(fresh.each < weight, `held ${Math.round(fresh.each)} of ${weight} unread`);
	});

	it('vector segment of 64 dimensions written whole (before blocks): at least what it holds, at most twice', () => {
		const body = encodeWholeSegment(dims, chunks(n, 14, 3), rows);
		const { each, kept } = heldBy(() => decodeSegment('k', Buffer.from(body)), 8);
		const weight = weightOf(kept[0]);
		assert.ok(weight >= 0.95 * each, `weight ${weight} < held ${Math.round(each)}`);
		assert.ok(weight <= 2 * each, `weight ${weight} > twice held ${Math.round(each)}`);
	});
});
