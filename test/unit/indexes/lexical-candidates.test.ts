// The notes a streamed word search takes while it counts its statistics: the k best scored from them
// are the k best a full pass finds (ties by the chunks), only the segments of the best are read again,
// and past its limit (bytes of notes) it gives up instead of growing.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import { chunkOrder } from '../../../src/indexes/chunks/chunk';
import type { IndexedChunk } from '../../../src/indexes/chunks/chunk';
import type { ListedSegment } from '../../../src/indexes/chunks/listed';
import { idfOf, weigh } from '../../../src/indexes/lexical/bm25';
import type { ScopeStats } from '../../../src/indexes/lexical/bm25';
import { Candidates } from '../../../src/indexes/lexical/candidates';
import { build } from '../../../src/indexes/lexical/segment';
import type { LexicalSegment } from '../../../src/indexes/lexical/segment';
import { tokenize } from '../../../src/indexes/lexical/tokenize';
import { LexicalIndex } from '../../../src/indexes/lexical/lexical-index';
import { streamedView } from '../../../src/indexes/lexical/stream';
import { lexicalView } from '../../../src/indexes/lexical/view';
import { clearAllCaches, LocalDiskStorage } from '../../../src/internal';
import { seededRandom } from '../../support/embeddings';
import { tempDir } from '../../support/storages';
import { setCandidateLimits } from '../../../src/testing';

const WORDS = 'kayak heron pricing fleet canoe paddle river harbour sail anchor'.split(' ');

function chunk(i: number, text: string): IndexedChunk {
	return {
		id: `c-${i}`,
		session_id: `s-${i % 7}`,
		message_id: `m-${i}`,
		seq: i,
		run_id: `r-${i}`,
		chunk_index: 0,
		// Few distinct times: ties on score are decided further down chunkOrder.
		created_at: new Date(Date.UTC(2026, 0, 1 + (i % 3))).toISOString(),
		text,
	};
}

/** `count` segments of `size` chunks of random words (repeated texts: many tie). */
function segments(count: number, size: number, seed = 7): LexicalSegment[] {
	const rand = seededRandom(seed); // in [-0.5, 0.5)
	let i = 0;
	return Array.from({ length: count }, (_, s) =>
		build(
			`seg-${s}`,
			Array.from({ length: size }, () => {
				const n = 1 + Math.floor((rand() + 0.5) * 4);
				const text = Array.from({ length: n }, () => WORDS[Math.floor((rand() + 0.5) * 5)]).join(
					' ',
				);
				return chunk(i++, text);
			}),
		),
	);
}

function statsOf(segs: LexicalSegment[], terms: string[]): ScopeStats {
	const df = new Map(terms.map((t) => [t, 0]));
	let n = 0;
	let total = 0;
	for (const seg of segs) {
		n += seg.docs.length;
		total += seg.lengths.reduce((a, b) => a + b, 0);
		for (const t of terms) df.set(t, df.get(t)! + (seg.postings.get(t)?.length ?? 0) / 2);
	}
	return { n, total, df };
}

/** The k best by a plain pass over every document (the reference). */
function reference(segs: LexicalSegment[], terms: string[], stats: ScopeStats, k: number) {
	const avg = stats.total / stats.n;
	const all: Array<{ chunk: IndexedChunk; score: number }> = [];
	for (const seg of segs)
		seg.docs.forEach((chunk, d) => {
			let score = 0;
			for (const t of terms) {
				const list = seg.postings.get(t);
				for (let i = 0; list && i < list.length; i += 2)
					if (list[i] === d)
						score += weigh(idfOf(stats.n, stats.df.get(t)!), list[i + 1], seg.lengths[d], avg);
			}
			if (score > 0) all.push({ chunk, score });
		});
	all.sort((a, b) => b.score - a.score || chunkOrder(a.chunk, b.chunk));
	return all.slice(0, k).map((x) => x.chunk.id);
}

/** Notes taken over `segs` (none held), and a reader that counts what it reads again. */
function noted(segs: LexicalSegment[], terms: string[]) {
	const notes = new Candidates(terms);
	for (const seg of segs) notes.add(seg, new Uint8Array(seg.docs.length).fill(1), false);
	const reads: string[] = [];
	const read = async (key: string) => {
		reads.push(key);
		return segs.find((s) => s.key === key)!;
	};
	return { notes, reads, read };
}

afterEach(() => setCandidateLimits({ bytes: 6 * 1024 * 1024, chunkBytes: 4 * 1024 * 1024 }));

describe('a streamed word search notes the documents holding its terms', () => {
	it('the k best from the notes are the k best of a full pass, ties by the chunks', async () => {
		const segs = segments(12, 200);
		for (const query of ['kayak', 'heron pricing', 'fleet canoe kayak', 'pricing pricing heron']) {
			const terms = [...new Set(tokenize(query))];
			const stats = statsOf(segs, terms);
			for (const k of [1, 5, 40]) {
				const { notes, read } = noted(segs, terms);
				const best = await notes.best(stats, k, read);
				assert.deepEqual(
					best?.map((c) => c.id),
					reference(segs, terms, stats, k),
					`${query} k=${k}`,
				);
			}
		}
	});

	it('keeps the noted chunks: nothing is read again', async () => {
		const segs = segments(10, 100, 3);
		const terms = ['kayak', 'heron'];
		const stats = statsOf(segs, terms);
		const { notes, reads, read } = noted(segs, terms);
		const best = await notes.best(stats, 40, read);
		assert.deepEqual(
			best?.map((c) => c.id),
			reference(segs, terms, stats, 40),
		);
		assert.deepEqual(reads, []);
	});

	it('past the bytes of chunks it may keep, reads again the segments of the best only', async () => {
		const segs = segments(10, 100, 3);
		const terms = ['kayak', 'heron'];
		const stats = statsOf(segs, terms);
		// Room for a few chunks only: the notes stay, the chunks are let go.
		setCandidateLimits({ chunkBytes: 2000 });
		const { notes, reads, read } = noted(segs, terms);
		const best = await notes.best(stats, 3, read);
		assert.deepEqual(
			best?.map((c) => c.id),
			reference(segs, terms, stats, 3),
		);
		// Each segment of the best read once (and those of ties with the third), never all ten.
		const holding = segs.filter((seg) => seg.docs.some((d) => best?.some((b) => b.id === d.id)));
		assert.ok(holding.every((seg) => reads.includes(seg.key)));
		assert.equal(new Set(reads).size, reads.length);
		assert.ok(reads.length < segs.length, `${reads.length} reads`);
	});

	it('reads again only the segments that hold the best (chunks not kept)', async () => {
		setCandidateLimits({ chunkBytes: 0 });
		const segs = segments(10, 100, 3);
		// One document per segment would do; the rare word sits in two segments only.
		segs[2] = build('seg-2', [...segs[2].docs.slice(1), chunk(9001, 'anchor anchor harbour')]);
		segs[7] = build('seg-7', [...segs[7].docs.slice(1), chunk(9002, 'anchor sail')]);
		const terms = ['anchor'];
		const { notes, reads, read } = noted(segs, terms);
		const best = await notes.best(statsOf(segs, terms), 2, read);
		assert.deepEqual(
			best?.map((c) => c.id),
			['c-9001', 'c-9002'],
		);
		assert.deepEqual(reads.sort(), ['seg-2', 'seg-7']);
	});

	it('gives up past its bytes (the caller reads every segment again), and holds nothing more', async () => {
		const segs = segments(4, 200);
		const terms = ['kayak', 'heron'];
		setCandidateLimits({ bytes: 20 * (12 + 4 * terms.length) });
		const { notes, reads, read } = noted(segs, terms);
		assert.equal(notes.full, true);
		assert.equal(await notes.best(statsOf(segs, terms), 5, read), undefined);
		assert.deepEqual(reads, []);
	});

	it('ties spread over many segments: each read once, two at a time, and only the chunks kept', async () => {
		setCandidateLimits({ chunkBytes: 0 });
		// The same text in each of 20 segments: all tie for the first place.
		const segs = Array.from({ length: 20 }, (_, s) =>
			build(`seg-${s}`, [chunk(s, 'heron kayak'), chunk(100 + s, 'river')]),
		);
		const terms = ['heron'];
		const stats = statsOf(segs, terms);
		const { notes, read: plain } = noted(segs, terms);
		const reads: string[] = [];
		let open = 0;
		let most = 0;
		const read = async (key: string) => {
			reads.push(key);
			most = Math.max(most, ++open);
			await new Promise((r) => setTimeout(r, 1));
			open--;
			return plain(key);
		};
		const best = await notes.best(stats, 1, read);
		assert.deepEqual(
			best?.map((c) => c.id),
			reference(segs, terms, stats, 1),
		);
		assert.equal(new Set(reads).size, 20);
		assert.equal(reads.length, 20);
		assert.ok(most <= 2, `${most} reads at once`);
	});

	it('a segment the search holds (tail, open logs) is used as it is, not read', async () => {
		const segs = segments(3, 50, 11);
		const terms = ['sail'];
		const notes = new Candidates(terms);
		for (const seg of segs) notes.add(seg, new Uint8Array(seg.docs.length).fill(1), true);
		const best = await notes.best(statsOf(segs, terms), 3, async () => {
			throw new Error('read');
		});
		assert.deepEqual(
			best?.map((c) => c.id),
			reference(segs, terms, statsOf(segs, terms), 3),
		);
	});

	it('documents out of scope are not noted', async () => {
		const segs = segments(2, 100, 5);
		const terms = ['kayak'];
		const notes = new Candidates(terms);
		// Only even documents in scope, and the statistics over those.
		const ok = (seg: LexicalSegment) => Uint8Array.from(seg.docs, (_, d) => (d % 2 === 0 ? 1 : 0));
		for (const seg of segs) notes.add(seg, ok(seg), true);
		const best = await notes.best(statsOf(segs, terms), 200, async () => segs[0]);
		assert.ok(best && best.length > 0);
		assert.ok(best.every((c) => segs.some((s) => s.docs.indexOf(c) % 2 === 0)));
	});
});

describe('a word index read one segment after another', () => {
	it('a segment gone between the statistics and the reading of the best (merged meanwhile): the search starts over, never answers without it', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('candidates-gone') });
		const index = new LexicalIndex(storage, 'test', 'kb/lexical/', 12, async () => [], {
			segmentChunks: 40,
		});
		const docs = Array.from({ length: 200 }, (_, i) =>
			chunk(i, i % 37 === 0 ? 'anchor harbour sail' : 'river kayak'),
		);
		await index.addOlder(docs);
		const expected = await (await lexicalView([index], {})).search('anchor', 5);
		assert.ok(expected.length > 0);
		const readSegment = index.readSegment.bind(index);
		// Chunks kept: the second read is for the messages beside the best; not kept, for the best.
		for (const limits of [{}, { chunkBytes: 0 }]) {
			const seen = new Map<string, number>();
			let gone = 0;
			index.readSegment = async (ref: ListedSegment) => {
				const n = (seen.get(ref.key) ?? 0) + 1;
				seen.set(ref.key, n);
				// The second read of a segment: the first time, it is gone.
				if (n === 2 && gone === 0) {
					gone++;
					return null;
				}
				return readSegment(ref);
			};
			const before = setCandidateLimits(limits);
			clearAllCaches();
			try {
				const got = await (await streamedView(index, {})).search('anchor', 5);
				assert.deepEqual(got, expected, JSON.stringify(limits));
			} finally {
				setCandidateLimits(before);
			}
			assert.equal(gone, 1, JSON.stringify(limits));
		}
	});

	it('reads each segment once for the statistics and the best (those of the best again), and answers as the whole index loaded', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('candidates') });
		const index = new LexicalIndex(storage, 'test', 'kb/lexical/', 12, async () => [], {
			segmentChunks: 40,
		});
		const rand = seededRandom(21);
		const docs = Array.from({ length: 600 }, (_, i) => {
			const n = 2 + Math.floor((rand() + 0.5) * 5);
			const text = Array.from(
				{ length: n },
				() => WORDS[Math.floor((rand() + 0.5) * WORDS.length)],
			).join(' ');
			return { ...chunk(i, text), session_id: `s-${Math.floor(i / 50)}`, seq: i % 50 };
		});
		await index.addOlder(docs);
		const reads: string[] = [];
		const readSegment = index.readSegment.bind(index);
		index.readSegment = (ref: ListedSegment) => {
			reads.push(ref.key);
			return readSegment(ref);
		};
		const whole = await lexicalView([index], {});
		const total = { noted: 0, again: 0, searches: 0 };
		for (const query of ['anchor', 'kayak heron', 'river sail harbour', 'paddle paddle canoe'])
			for (const k of [1, 5, 25]) {
				const answers: unknown[] = [];
				for (const limits of [{}, { bytes: 0 }, { chunkBytes: 0 }]) {
					const before = setCandidateLimits(limits);
					reads.length = 0;
					answers.push(await (await streamedView(index, {})).search(query, k));
					setCandidateLimits(before);
					const counts = new Map<string, number>();
					for (const key of reads) counts.set(key, (counts.get(key) ?? 0) + 1);
					assert.equal(counts.size, 15);
					if (Object.keys(limits).length === 0) total.noted += reads.length;
					else if ('bytes' in limits) {
						// Past the limits, every segment is read again for the best.
						assert.ok(
							[...counts.values()].every((n) => n >= 2),
							`${query} k=${k}`,
						);
						total.again += reads.length;
					}
				}
				total.searches++;
				assert.deepEqual(answers[0], await whole.search(query, k), `${query} k=${k}`);
				assert.deepEqual(answers[1], answers[0]);
				assert.deepEqual(answers[2], answers[0]);
			}
		// With the notes, the second pass over every segment is gone: about 15 reads fewer a search.
		assert.ok(
			total.again - total.noted >= total.searches * 15 * 0.5,
			`${total.noted} reads with notes, ${total.again} without, ${total.searches} searches`,
		);
	});
});
