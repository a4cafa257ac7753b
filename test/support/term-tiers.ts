// A word index with term tiers for tests: chunks of words of uneven frequency, and the check that a
// search read one segment after another answers as every segment loaded at once.
import assert from 'node:assert/strict';

import type { IndexedChunk } from '../../src/indexes/chunks/chunk';
import { LexicalIndex } from '../../src/indexes/lexical/lexical-index';
import { streamedView } from '../../src/indexes/lexical/stream';
import { lexicalView } from '../../src/indexes/lexical/view';
import { clearAllCaches, tiersOf } from '../../src/internal';
import type { MemoryStorage } from '../../src/internal';
import { expanded } from './stored-segments';
import { MeteredStorage } from './wide-base';
import { seededRandom } from './embeddings';

// Words of uneven frequency (the first ones in most chunks, the last in few), so that buckets differ.
export const VOCAB = Array.from({ length: 160 }, (_, i) => `w${i.toString(36)}x`);

export function chunk(i: number, text: string, session = `s-${Math.floor(i / 30)}`): IndexedChunk {
	return {
		id: `c-${i}`,
		session_id: session,
		user_id: `u-${i % 5}`,
		message_id: `m-${i}`,
		seq: i,
		run_id: `r-${i}`,
		chunk_index: 0,
		// Few distinct times: ties on score are decided further down chunkOrder.
		created_at: new Date(Date.UTC(2026, 0, 1 + (i % 4))).toISOString(),
		text,
	};
}

export function docs(count: number, seed = 5, from = 0): IndexedChunk[] {
	const rand = seededRandom(seed); // in [-0.5, 0.5)
	const pick = () => VOCAB[Math.floor((rand() + 0.5) ** 2 * VOCAB.length)];
	return Array.from({ length: count }, (_, i) => {
		const n = 1 + Math.floor((rand() + 0.5) * 6);
		return chunk(from + i, Array.from({ length: n }, pick).join(' '));
	});
}

export function indexOn(storage: MemoryStorage, tiers = true) {
	return new LexicalIndex(storage, 'test', 'kb/lexical/', 12, async () => [], {
		segmentChunks: 40,
		tiers,
	});
}

export const QUERIES = [
	'w0x',
	'w1x w2x',
	'w3x w4x w5x',
	`${VOCAB[150]} w0x`,
	`${VOCAB[120]}`,
	'w7x w7x wzzx',
];

/** The streamed search's answers against every segment loaded at once, for every query and k. */
export async function assertExact(index: LexicalIndex, queries = QUERIES) {
	for (const q of queries)
		for (const k of [1, 5, 30]) {
			const full = await (await lexicalView([index], {})).search(q, k);
			const view = await streamedView(index, {});
			const got = await view.search(q, k);
			assert.deepEqual(
				got.map((m) => [m.id, m.score, m.bm25, m.context ?? false]),
				full.map((m) => [m.id, m.score, m.bm25, m.context ?? false]),
				`${q} k=${k}`,
			);
			const loaded = await lexicalView([index], {});
			assert.deepEqual(await view.frequencies(q), await loaded.frequencies(q), q);
			assert.equal(view.size, loaded.size);
			// The names of the matches (a recency half-life): counted from the tiers' buckets too.
			await view.prepareNames?.(got);
			assert.deepEqual(
				got.map((c) => view.names(c)),
				got.map((c) => loaded.names(c)),
				`names ${q}`,
			);
		}
}

/**
 * One search of everything on a fresh view of the index stored on `disk`, its reads counted: the
 * answer, the manifest, the segments its tiers cover, and how often each key was read.
 */
export async function countedSearch(disk: MemoryStorage, query: string, k: number) {
	const metered = new MeteredStorage(disk);
	const index = indexOn(metered);
	const m = await index.readManifest(true);
	const covered = new Set(tiersOf(m.doc).usable.flatMap((t) => t.refs.map((r) => r.key)));
	clearAllCaches();
	metered.take();
	const got = await (await streamedView(index, {})).search(query, k);
	return { index, m, covered, got, gets: metered.take().gets };
}

/** Every stored object under `kb/` as a byte scan sees it (buckets and segments opened). */
export async function storedText(storage: MemoryStorage): Promise<string> {
	const out: string[] = [];
	for (const o of await storage.list('kb/')) {
		const got = await storage.get(o.key);
		out.push(expanded(got!.body).toString('utf8'));
	}
	return out.join('\n');
}
