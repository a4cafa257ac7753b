// Merging a word index's segments: FAN of one level into one of the next; under a cap (the base-wide
// index), as many of one level as the cap takes whole, so segments stay near the cap instead of FAN
// times smaller. Every segment is a read for a search that needs one of its chunks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ListedSegment } from '../../../src/indexes/chunks/listed';
import { LexicalIndex } from '../../../src/indexes/lexical/lexical-index';
import { TIER_SEGMENTS } from '../../../src/indexes/chunks/tiering';
import { dueCount, FAN } from '../../../src/indexes/lexical/merge';
import type { LexicalRef } from '../../../src/indexes/lexical/segment';
import { lexicalView } from '../../../src/indexes/lexical/view';
import { clearAllCaches, LocalDiskStorage } from '../../../src/internal';
import { seededRandom } from '../../support/embeddings';
import { tempDir } from '../../support/storages';
import { assertExact, chunk, docs, indexOn } from '../../support/term-tiers';

const ref = (level: number, count: number, i = 0) => ({ level, count, key: `k${i}` }) as LexicalRef;
const refs = (spec: Array<[number, number]>) => spec.map(([l, c], i) => ref(l, c, i));

describe('which segments merge', () => {
	it('FAN of one level (or two next to each other) under the cap; none past it without the cap rule', () => {
		assert.equal(dueCount(refs(Array(FAN).fill([1, 130])), 4096), FAN);
		assert.equal(dueCount(refs([[2, 1050], ...Array(FAN - 1).fill([1, 130])]), 4096), FAN);
		assert.equal(dueCount(refs([[3, 3150], ...Array(FAN - 1).fill([1, 130])]), 4096), 0, 'a gap');
		assert.equal(dueCount(refs([[1, 130], ...Array(FAN - 1).fill([0, 64])]), 4096), FAN);
		assert.equal(dueCount(refs(Array(FAN - 1).fill([1, 130])), 4096), 0, 'one short of FAN');
		assert.equal(dueCount(refs(Array(FAN).fill([2, 1050])), Infinity), FAN, 'no cap');
	});

	it('past the cap: as many of the newest of one level as the cap takes whole, at least two', () => {
		assert.equal(dueCount(refs(Array(FAN).fill([2, 1050])), 4096), 3);
		assert.equal(
			dueCount(
				refs([
					[3, 3150],
					[2, 1050],
					[2, 1050],
					[2, 1050],
				]),
				4096,
			),
			3,
		);
		assert.equal(
			dueCount(
				refs([
					[3, 3150],
					[2, 1050],
					[2, 1050],
				]),
				4096,
			),
			0,
			'waits for a third',
		);
		assert.equal(
			dueCount(
				refs([
					[1, 130],
					[2, 1050],
					[2, 1050],
				]),
				4096,
			),
			0,
			'two levels',
		);
		assert.equal(
			dueCount(
				refs([
					[1, 130],
					[2, 1050],
					[2, 1050],
				]),
				3000,
			),
			2,
			'two fit',
		);
		assert.equal(
			dueCount(
				refs([
					[3, 3150],
					[3, 3150],
				]),
				4096,
			),
			0,
			'one fits: stays',
		);
		assert.equal(
			dueCount(
				refs([
					[2, 2048],
					[2, 2048],
				]),
				4096,
			),
			2,
			'exactly the cap',
		);
		assert.equal(
			dueCount(
				refs([
					[2, 2049],
					[2, 2048],
				]),
				4096,
			),
			0,
			'over the cap',
		);
		assert.equal(
			dueCount(
				refs([
					[2, 1050],
					[2, 1050],
					[2, 1050],
				]),
				Infinity,
			),
			0,
			'no cap',
		);
		assert.equal(dueCount([], 4096), 0);
	});
});

describe('a capped word index fed small adds', () => {
	it('keeps its segments near the cap, never past it, and answers as an uncapped index does', async () => {
		const cap = 400;
		const rand = seededRandom(5);
		const words = ['harbour', 'kayak', 'heron', 'lantern', 'orchard', 'copper', 'meadow', 'sail'];
		const docs = Array.from({ length: 3000 }, (_, i) =>
			chunk(i, Array.from({ length: 4 }, () => words[Math.floor((rand() + 0.5) * 8)]).join(' ')),
		);
		const make = (name: string, options = {}) =>
			new LexicalIndex(
				new LocalDiskStorage({ root: tempDir(name) }),
				'test',
				'kb/lexical/',
				12,
				async () => [],
				options,
			);
		const capped = make('merge-capped', { segmentChunks: cap });
		const plain = make('merge-plain');
		for (let i = 0; i < docs.length; i += 20) {
			await capped.add(docs.slice(i, i + 20));
			await plain.add(docs.slice(i, i + 20));
		}
		const m = (await capped.readManifest()).doc;
		const counts = m.segments.map((s: ListedSegment & { count: number }) => s.count);
		assert.ok(
			counts.every((c) => c <= cap),
			`every segment at most the cap: ${counts}`,
		);
		// Without the cap rule, eight 64-chunk segments (512) pass the cap: 46 segments of 64.
		assert.ok(m.segments.length <= 12, `${m.segments.length} segments: ${counts}`);
		const held = counts.reduce((a, b) => a + b, 0) + m.tail.length;
		assert.equal(held, docs.length);
		for (const query of ['harbour', 'kayak heron', 'copper sail meadow']) {
			clearAllCaches();
			const a = await (await lexicalView([capped], {})).search(query, 10);
			const b = await (await lexicalView([plain], {})).search(query, 10);
			assert.deepEqual(a, b, query);
		}
	});
});

describe('segments past half the cap', () => {
	it('no merge takes one again (two of its size pass the cap), nor a segment in a tier', () => {
		const pair = refs([
			[2, 2100],
			[2, 1400],
		]);
		assert.equal(dueCount(pair, 4096), 0, 'the cap would take both, but one is past half');
		const within = refs([
			[2, 2000],
			[2, 1400],
		]);
		assert.equal(dueCount(within, 4096), 2, 'both within half the cap: they merge');
		const withSmall = refs([[3, 2100], ...Array(FAN - 1).fill([2, 100])]);
		assert.equal(dueCount(withSmall, 4096), 0, 'FAN under the cap, one past half');
		assert.equal(dueCount(withSmall, 8192), FAN);
		const tiered = refs(Array(FAN).fill([1, 130]));
		tiered[0] = { ...tiered[0], tier: { id: 't', ord: 0 } };
		assert.equal(dueCount(tiered, 4096), 0, 'one of them is in a tier');
		assert.equal(dueCount(refs(Array(FAN).fill([1, 130])), 4096), FAN);
	});

	it('go into term tiers at once, however new, so a search does not read them whole', async () => {
		// Adds of 5 and of 11 chunks under a cap of 40 leave segments of 25 and 26 that never merge:
		// each one used to wait among the newest 16 segments, read whole by every search.
		for (const per of [5, 11]) {
			const index = indexOn(new LocalDiskStorage({ root: tempDir(`past-half-${per}`) }));
			const all = docs(per * 200, per);
			for (let i = 0; i < all.length; i += per) await index.add(all.slice(i, i + per));
			const m = (await index.readManifest(true)).doc;
			const out = m.segments.filter((r) => !r.tier);
			const pastHalf = out.filter((r) => 2 * r.count > index.segmentChunks);
			assert.ok(
				pastHalf.length < TIER_SEGMENTS,
				`${per} a time: ${pastHalf.length} segments past half the cap in no tier (${out.map((r) => r.count)})`,
			);
			assert.ok(out.length < 10, `${per} a time: ${out.length} segments in no tier`);
			const held = m.segments.reduce((n, r) => n + r.count, 0) + m.tail.length;
			assert.equal(held, all.length);
			clearAllCaches();
			await assertExact(index);
		}
	});
});
