// The bytes one search holds of what it is reading: the word ranking's and the vector ranking's reads
// (segments, cell and term buckets, the segments of the best matches) share one budget per search, so however the
// two overlap, what is under way together stays within it (one part at least, however large).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { SEARCH_BYTES, SearchReads } from '../../../src/indexes/chunks/search-reads';
import { LexicalIndex } from '../../../src/indexes/lexical/lexical-index';
import { streamedView } from '../../../src/indexes/lexical/stream';
import { bucketBytesOf } from '../../../src/indexes/lexical/tier-search';
import { bucketKey } from '../../../src/indexes/lexical/tiers';
import {
	clearAllCaches,
	EmbeddedIndex,
	LocalDiskStorage,
	MemoryBase,
	settleTiers,
	streamedRanking,
	vectorIndexPrefix,
} from '../../../src/internal';
import type { MemoryStorage } from '../../../src/internal';
import { sleep } from '../../../src/common/sleep';
import { TestEmbedder } from '../../support/embeddings';
import { docs, indexOn, QUERIES } from '../../support/term-tiers';
import { tieredVectorIndex, vectorChunk } from '../../support/vector-segments';
import { aroundGets, tempDir } from '../../support/storages';
import { manyUsers } from '../../support/wide-base';

/** Index parts: word and vector segments, cell buckets, term buckets (words and conversations). */
const isPart = (key: string) => /\.(lex|vec|vcl|trm)$/.test(key);

/** `inner` with each part's read taking a few milliseconds: how many are under way at once, at most. */
function partsUnderWay(inner: MemoryStorage) {
	const seen = { now: 0, peak: 0, reads: 0 };
	const storage = aroundGets(inner, async (key, read) => {
		if (!isPart(key)) return read();
		seen.now++;
		seen.reads++;
		seen.peak = Math.max(seen.peak, seen.now);
		try {
			await sleep(5);
			return await read();
		} finally {
			seen.now--;
		}
	});
	return { storage, seen };
}

/** A search measured with the default budget (`free`) and with one of a byte (`tight`). */
interface Measured {
	answers: string[][];
	peak: number;
	reads: number;
}

/** With a budget of a byte, one part at a time where the default read several, the same answers. */
function assertOneAtATime(free: Measured, tight: Measured, fewest: number): void {
	assert.ok(free.reads >= fewest, `${free.reads} parts read`);
	assert.ok(free.peak >= 2, 'with the default budget, parts are read side by side');
	assert.equal(tight.peak, 1, `${tight.peak} parts under way at once within a budget of 1 byte`);
	assert.equal(tight.reads, free.reads);
	assert.deepEqual(tight.answers, free.answers);
}

/** Runs `fn` with the search budget at `bytes`. */
async function withBudget<T>(bytes: number, fn: () => Promise<T>): Promise<T> {
	const before = SEARCH_BYTES.bytes;
	SEARCH_BYTES.bytes = bytes;
	try {
		return await fn();
	} finally {
		SEARCH_BYTES.bytes = before;
	}
}

describe('the bytes one search reads at once', () => {
	it('both rankings of a search of every conversation share one budget: at a byte, one part is read at a time, and the answers are the same', async () => {
		const dims = 512;
		const {
			root,
			base: writer,
			baseId,
		} = await manyUsers({ users: 40, turns: 6, dimensions: dims });
		await writer.sync();
		const { storage, seen } = partsUnderWay(new LocalDiskStorage({ root }));
		const base = new MemoryBase({ storage, baseId, embedder: new TestEmbedder(dims) });
		const measure = async () => {
			seen.peak = 0;
			seen.reads = 0;
			const answers: string[][] = [];
			for (const q of ['pricing plan', 'heron nest', 'user 17 asks about the lantern repair']) {
				clearAllCaches();
				const found = await base.search(q, { allUsers: true, k: 5 });
				answers.push(found.map((m) => `${m.messageId} ${m.score} ${m.similarity}`));
			}
			return { answers, peak: seen.peak, reads: seen.reads };
		};
		assertOneAtATime(await measure(), await withBudget(1, measure), 6);
	});

	it("with term tiers and cell tiers (the query's term buckets, the best matches' segments, the probed buckets): one part at a time at a byte, the same answers", async () => {
		const dims = 16;
		const { root } = await tieredVectorIndex(dims, (i) => vectorChunk(i, `s${i % 7}`));
		const words = new LocalDiskStorage({ root: `${root}-words` });
		await indexOn(words).addOlder(docs(2000, 3));
		await settleTiers(indexOn(words));
		const { storage, seen } = partsUnderWay(new LocalDiskStorage({ root }));
		const wordParts = partsUnderWay(words);
		const query = new TestEmbedder(dims);
		// Both rankings of one search, side by side, as a search of every conversation runs them.
		const search = async (text: string) => {
			const reads = new SearchReads();
			const lexical = new LexicalIndex(
				wordParts.storage,
				'test',
				'kb/lexical/',
				12,
				async () => [],
				{
					segmentChunks: 40,
					tiers: true,
					reads,
				},
			);
			const vectors = new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb'), 12, {
				segmentBytes: 6000,
				tiers: true,
				reads,
			});
			const [w, v] = await Promise.all([
				streamedView(lexical, {}).then((view) => view.search(text, 50)),
				query.embedQuery(text).then((q) => streamedRanking(vectors, q, 50, {})),
			]);
			return [...w.map((m) => `${m.id} ${m.score}`), ...v.matches.map((m) => `${m.id} ${m.score}`)];
		};
		const measure = async () => {
			const out = { answers: [] as string[][], peak: 0, reads: 0, tierReads: 0 };
			for (const text of QUERIES) {
				clearAllCaches();
				for (const s of [seen, wordParts.seen]) Object.assign(s, { peak: 0, reads: 0 });
				let most = 0;
				const watch = setInterval(() => (most = Math.max(most, seen.now + wordParts.seen.now)), 1);
				try {
					out.answers.push(await search(text));
				} finally {
					clearInterval(watch);
				}
				out.peak = Math.max(out.peak, most, seen.peak, wordParts.seen.peak);
				out.reads += seen.reads + wordParts.seen.reads;
			}
			return out;
		};
		assertOneAtATime(await measure(), await withBudget(1, measure), 20);
	});

	it("a term bucket's bytes are taken at its share of its tier: words and conversations by their rows, summing to the tier", async () => {
		const storage = new LocalDiskStorage({ root: await tempDir() });
		const index = indexOn(storage);
		await index.addOlder(docs(2000, 3));
		await settleTiers(index);
		const { doc } = await index.readManifest(true);
		const tiers = doc.terms ?? [];
		assert.ok(tiers.length > 0, 'the words were regrouped into a tier');
		for (const tier of tiers) {
			const all = tier.buckets + tier.sessionBuckets;
			const sizes = await Promise.all(
				Array.from({ length: all }, async (_, b) => {
					const got = await storage.get(bucketKey(index.segmentsPrefix, tier, b));
					return got!.body.length;
				}),
			);
			const estimates = sizes.map((_, b) => bucketBytesOf(tier, b));
			const sum = estimates.reduce((a, b) => a + b, 0);
			assert.ok(Math.abs(sum - tier.bytes) < 1, `${sum} estimated of ${tier.bytes} stored`);
			// Words at about their buckets' mean size; conversations at about theirs, or more.
			const meanOf = (from: number, to: number) =>
				sizes.slice(from, to).reduce((a, b) => a + b, 0) / (to - from);
			const words = meanOf(0, tier.buckets);
			const sessions = meanOf(tier.buckets, all);
			assert.ok(
				estimates[0] > words / 2 && estimates[0] < words * 2,
				`words estimated ${estimates[0]}, stored ${words} on average`,
			);
			assert.ok(
				estimates[tier.buckets] > sessions / 2,
				`conversations estimated ${estimates[tier.buckets]}, stored ${sessions} on average`,
			);
		}
	});
});
