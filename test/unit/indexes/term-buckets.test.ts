// The stored form of a timed tier's word buckets: each term's rows in blocks compressed one by one,
// decoded as a search walks them. Rows must come back exactly (values near 2^32, capture seconds that
// go back), every damage must be an error naming the bucket (never fewer rows), a damaged block must not
// inflate past its size, and buckets written whole before must still be read.
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { deflateRawSync, gzipSync, inflateRawSync } from 'node:zlib';

import { BLOCK_ROWS, decodeRows, encodeRows } from '../../../src/indexes/lexical/binary-rows';
import {
	allRows,
	chained,
	joinRows,
	mapped,
	RowCursor,
	without,
} from '../../../src/indexes/lexical/postings';
import type { Rows } from '../../../src/indexes/lexical/postings';
import { LexicalIndex } from '../../../src/indexes/lexical/lexical-index';
import { streamedView } from '../../../src/indexes/lexical/stream';
import {
	bucketKey,
	bucketOf,
	decodeBucket,
	encodeBucket,
	ROW,
	TIMED_ROW,
} from '../../../src/indexes/lexical/tiers';
import type { TermTier } from '../../../src/indexes/lexical/tiers';
import {
	clearAllCaches,
	CorruptDocumentError,
	LocalDiskStorage,
	settleTiers,
	TIER_SEGMENTS,
	tiersOf,
} from '../../../src/internal';
import { seededRandom } from '../../support/embeddings';
import { tempDir } from '../../support/storages';
import { expanded } from '../../support/stored-segments';
import { assertExact, chunk, docs, indexOn, QUERIES, storedText } from '../../support/term-tiers';

const fail = (detail: string): never => {
	throw new CorruptDocumentError('k/terms-0.trm', detail);
};

/** `n` rows of five values in (segment, document) order, times going up and back, some near 2^32. */
function rowsOf(n: number, seed: number): Uint32Array {
	const rand = seededRandom(seed);
	const out = new Uint32Array(n * TIMED_ROW);
	let seg = 0;
	let doc = 0;
	for (let i = 0; i < n; i++) {
		if (rand() > 0.3) {
			seg++;
			doc = 0;
		}
		doc += 1 + Math.floor((rand() + 0.5) * 40);
		const time = i % 7 === 3 ? 2 ** 32 - 1 - i : 1_700_000_000 + Math.floor((rand() + 0.5) * 9e6);
		out.set([seg, doc, 1 + (i % 3), 2 ** 31 + i, time], i * TIMED_ROW);
	}
	return out;
}

/** A bucket written whole, as before blocks: gzip("LLMTRM01" | header | padding | u32 rows). */
function writtenWhole(bucket: Map<string, Uint32Array>): Buffer {
	const terms = [...bucket.keys()];
	const header = Buffer.from(
		JSON.stringify({ terms, counts: terms.map((t) => bucket.get(t)!.length) }),
	);
	const lead = Buffer.alloc(12 + header.length + ((4 - ((12 + header.length) % 4)) % 4));
	lead.write('LLMTRM01', 0, 'latin1');
	lead.writeUInt32LE(header.length, 8);
	header.copy(lead, 12);
	const rows = terms.map((t) => Buffer.from(bucket.get(t)!.buffer));
	return gzipSync(Buffer.concat([lead, ...rows]));
}

/** The header and blocks of a blocked bucket, to damage one part of it. */
function partsOf(bytes: Buffer) {
	const length = bytes.readUInt32LE(8);
	const header = JSON.parse(inflateRawSync(bytes.subarray(12, 12 + length)).toString());
	return { header, length, blocks: bytes.subarray(12 + length) };
}

/** Where block `i` of a term is in a blocked bucket (negative: from the end), as [start, start + 2]. */
function blockOf(bytes: Buffer, term: string, i: number): [number, number] {
	const { header, length } = partsOf(bytes);
	let at = 12 + length + header.short;
	for (let t = 0; t < header.terms.length; t++) {
		const sizes: number[] = header.sizes[t];
		const n = i < 0 ? sizes.length + i : i;
		if (header.terms[t] === term) {
			at += sizes.slice(0, n).reduce((a, b) => a + b, 0);
			return [at, at + 2];
		}
		at += sizes.reduce((a, b) => a + b, 0);
	}
	throw new Error(`no ${term}`);
}

function withHeader(header: unknown, blocks: Buffer): Buffer {
	const text = deflateRawSync(Buffer.from(JSON.stringify(header)));
	const lead = Buffer.alloc(12);
	lead.write('LLMTRM02', 0, 'latin1');
	lead.writeUInt32LE(text.length, 8);
	return Buffer.concat([lead, text, blocks]);
}

/**
 * A word index with "cmnx" in 2 of 3 of its chunks, its tiers settled: the word's rows in the largest
 * tier fill two blocks and part of a third. `wordBucket` reads that bucket as stored now.
 */
async function commonWordIndex(name: string, seed: number) {
	const storage = new LocalDiskStorage({ root: tempDir(name) });
	const index = indexOn(storage);
	const all = docs(BLOCK_ROWS * 3 + 600, seed).map((d, i) =>
		i % 3 === 2 ? d : { ...d, text: `${d.text} cmnx` },
	);
	await index.addOlder(all);
	await settleTiers(index);
	const wordBucket = async () => {
		const { usable } = tiersOf((await index.readManifest(true)).doc);
		const biggest = usable.reduce((a, b) => (a.tier.segments > b.tier.segments ? a : b)).tier;
		const b = bucketOf('cmnx', biggest.buckets);
		const key = bucketKey(index.segmentsPrefix, biggest, b);
		const stored = (await storage.get(key))!.body;
		return { key, stored, postings: decodeBucket(key, stored, biggest, b).get('cmnx')! };
	};
	return { storage, index, wordBucket };
}

const tier: TermTier = {
	id: 'b'.repeat(18),
	segments: 2 ** 16,
	n: 10,
	total: 10,
	buckets: 1,
	postings: 10,
	sessionBuckets: 1,
	sessionRows: 1,
	bytes: 0,
	timed: true,
};

beforeEach(() => clearAllCaches());

describe('blocked word buckets', () => {
	it('rows come back exactly, a block at a time, across every block boundary', () => {
		const bucket = new Map<string, Uint32Array>([
			['one', rowsOf(1, 1)],
			['full', rowsOf(3, 2)],
			['over', rowsOf(4, 3)],
			['many', rowsOf(200, 4)],
		]);
		const read = decodeRows(encodeRows(bucket, TIMED_ROW, 3), fail, TIMED_ROW);
		assert.deepEqual([...read.keys()], [...bucket.keys()]);
		for (const [term, rows] of bucket) {
			const postings = read.get(term)!;
			// Lists of a block or less are decoded with the bucket; longer ones block by block.
			const long = rows.length > 3 * TIMED_ROW;
			assert.equal(postings.held, !long, term);
			assert.equal(postings.length, rows.length);
			const blocks = [...postings.blocks()];
			assert.equal(blocks.length, long ? Math.ceil(rows.length / TIMED_ROW / 3) : 1, term);
			assert.ok(blocks.every((b) => b.length <= 3 * TIMED_ROW && b.length % TIMED_ROW === 0));
			assert.deepEqual(allRows(postings), rows, term);
			// A walk row by row gives the same rows in the same order.
			const walk = new RowCursor(postings, TIMED_ROW);
			const seen: number[] = [];
			for (; !walk.done; walk.advance())
				for (let j = 0; j < TIMED_ROW; j++) seen.push(walk.value(j));
			assert.deepEqual(seen, [...rows], term);
		}
	});

	it('a common word takes less room than its rows gzipped whole', () => {
		const rows = rowsOf(50_000, 9);
		const blocked = encodeRows(new Map([['w', rows]]), TIMED_ROW).length;
		const whole = writtenWhole(new Map([['w', rows]])).length;
		assert.ok(blocked < whole, `${blocked} bytes blocked, ${whole} whole`);
		assert.equal(BLOCK_ROWS, 4096);
	});

	it('a byte scan of a stored bucket sees its words (the Forget tests scan for them)', () => {
		const body = encodeRows(
			new Map([
				['zebraword', rowsOf(3, 11)],
				['s-chat-42', rowsOf(9, 12)],
			]),
			TIMED_ROW,
			4,
		);
		assert.ok(!body.includes('zebraword'), 'the header is stored deflated');
		const seen = expanded(body).toString('latin1');
		assert.ok(seen.includes('zebraword') && seen.includes('s-chat-42'));
	});

	it('buckets written whole before blocks are still read, row for row', () => {
		const bucket = new Map([['w0x', rowsOf(5, 5)]]);
		const read = decodeBucket('k', writtenWhole(bucket), tier, 0);
		assert.equal(read.get('w0x')!.held, true);
		assert.deepEqual(allRows(read.get('w0x')!), bucket.get('w0x'));
	});

	it('a damaged header is an error when the bucket is read; a damaged block when a walk reaches it', () => {
		const good = encodeRows(
			new Map([
				['w', rowsOf(10, 6)],
				['v', rowsOf(2, 7)],
			]),
			TIMED_ROW,
			4,
		);
		const { header, blocks } = partsOf(good);
		const damaged: Array<[string, Buffer]> = [
			['cut short', good.subarray(0, good.length - 1)],
			['a byte after', Buffer.concat([good, Buffer.from([0])])],
			[
				'a block size lost',
				withHeader({ ...header, sizes: [header.sizes[0].slice(1), header.sizes[1]] }, blocks),
			],
			[
				'half a row',
				withHeader({ ...header, counts: [header.counts[0] - 1, header.counts[1]] }, blocks),
			],
			['a term twice', withHeader({ ...header, terms: ['w', 'w'] }, blocks)],
			[
				'header not JSON',
				Buffer.concat([
					good.subarray(0, 12),
					Buffer.from('x'.repeat(good.readUInt32LE(8))),
					blocks,
				]),
			],
		];
		for (const [what, bytes] of damaged)
			assert.throws(
				() => decodeRows(bytes, fail, TIMED_ROW),
				(e: Error) => e instanceof CorruptDocumentError && e.message.includes('k/terms-0.trm'),
				what,
			);
		// A bucket of rows of another width than its tier's (five values a word row): refused, never
		// its rows decoded at the wrong width.
		const four = encodeRows(new Map([['w', rowsOf(10, 6).subarray(0, 40)]]), ROW, 4);
		assert.throws(() => decodeRows(four, fail, TIMED_ROW), /rows of 4 values, 5 expected/);
		assert.equal(allRows(decodeRows(four, fail, ROW).get('w')!).length, 40);
		// The last block of "w" damaged: the first blocks still walk, the damaged one is an error.
		const bad = Buffer.from(good);
		bad.fill(0xff, ...blockOf(good, 'w', -1));
		const w = decodeRows(bad, fail, TIMED_ROW).get('w')!;
		const walk = w.blocks()[Symbol.iterator]();
		assert.equal(walk.next().value!.length, 4 * TIMED_ROW);
		walk.next();
		assert.throws(() => walk.next(), CorruptDocumentError);
		assert.deepEqual(allRows(decodeRows(bad, fail, TIMED_ROW).get('v')!), rowsOf(2, 7));
	});

	it('a block that inflates past its rows is an error, not a larger allocation', () => {
		const short = deflateRawSync(Buffer.alloc(0));
		// Two blocks of one row each, holding a megabyte each once inflated.
		const bomb = deflateRawSync(Buffer.alloc(2 ** 20));
		const header = { terms: ['w'], counts: [2 * TIMED_ROW], width: TIMED_ROW, block: 1 };
		const bytes = withHeader(
			{ ...header, short: short.length, sizes: [[bomb.length, bomb.length]] },
			Buffer.concat([short, bomb, bomb]),
		);
		const w = decodeRows(bytes, fail, TIMED_ROW).get('w')!;
		const damaged = (e: Error) =>
			e instanceof CorruptDocumentError && /damaged|bytes/.test(e.message);
		assert.throws(() => allRows(w), damaged);
		// The short lists' part too, when the bucket is read.
		const shortBomb = withHeader(
			{ ...header, counts: [TIMED_ROW], block: 4, short: bomb.length, sizes: [[]] },
			bomb,
		);
		assert.throws(() => decodeRows(shortBomb, fail, TIMED_ROW), damaged);
	});

	it('a row naming a segment the tier does not hold is an error: for a long list when walked, a short one when read', () => {
		const rows = rowsOf(BLOCK_ROWS + 10, 10);
		// A segment the second block names, and every one after it, is not in the tier.
		const small = { ...tier, segments: rows[(BLOCK_ROWS + 5) * TIMED_ROW] };
		const term = 'w0x';
		const b = bucketOf(term, small.buckets);
		const key = 'k/terms-0.trm';
		const read = decodeBucket(key, encodeBucket(new Map([[term, rows]]), small, b), small, b);
		const walk = read.get(term)!.blocks()[Symbol.iterator]();
		assert.equal(walk.next().value!.length, BLOCK_ROWS * TIMED_ROW);
		assert.throws(() => walk.next(), /segment it does not hold/);
		const short = rows
			.subarray(0, 6 * TIMED_ROW)
			.map((v, i) => (i % TIMED_ROW === 0 ? small.segments + v : v));
		assert.throws(
			() => decodeBucket(key, encodeBucket(new Map([[term, short]]), small, b), small, b),
			/segment it does not hold/,
		);
		// Whole buckets are checked when read, as before.
		assert.throws(
			() => decodeBucket('k', writtenWhole(new Map([[term, rows]])), small, b),
			/segment it does not hold/,
		);
	});

	it('a word in more documents than a block holds: searches answer as every segment loaded; a damaged block of it is an error', async () => {
		const { storage, index, wordBucket } = await commonWordIndex('blocked-common', 17);
		const { key, stored, postings } = await wordBucket();
		assert.ok(postings.length / TIMED_ROW > BLOCK_ROWS, `${postings.length / TIMED_ROW} rows`);
		await assertExact(index, ['cmnx', 'cmnx w0x', 'w5x cmnx w9x', 'cmnx cmnx w30x']);
		// Its last block damaged: the search that walks it says so, naming the bucket.
		const bad = Buffer.from(stored);
		bad.fill(0xff, ...blockOf(bad, 'cmnx', -1));
		await storage.put(key, bad);
		clearAllCaches();
		await assert.rejects(
			async () => (await streamedView(index, {})).search('cmnx', 5),
			(e: unknown) =>
				e instanceof CorruptDocumentError && String((e as Error).message).includes(key),
		);
	});

	it('a common word’s list rewritten without some rows, or moved and joined (a Forget, a merge), is made a block at a time and stored as if made whole', () => {
		const rows = rowsOf(3 * 7 + 2, 21);
		const encode = (r: Rows) => encodeRows(new Map([['w', r]]), TIMED_ROW, 3);
		const stored = decodeRows(encode(rows), fail, TIMED_ROW).get('w')!;
		assert.equal(stored.held, false);
		const drop = (r: Uint32Array, i: number) => r[i + 1] % 3 === 0;
		const kept = without(stored, TIMED_ROW, drop);
		assert.equal(kept.held, false, 'left in its blocks, made as written');
		const keptRows: number[] = [];
		for (let i = 0; i < rows.length; i += TIMED_ROW)
			if (!drop(rows, i)) keptRows.push(...rows.subarray(i, i + TIMED_ROW));
		assert.ok(keptRows.length > 0 && keptRows.length < rows.length);
		assert.deepEqual(allRows(kept), Uint32Array.from(keptRows));
		assert.deepEqual(encode(kept), encode(Uint32Array.from(keptRows)), 'full blocks, as if whole');
		const shift = (r: Uint32Array) => r.map((v, i) => (i % TIMED_ROW === 0 ? v + 5 : v));
		const joined = chained(kept, mapped(stored, rows.length, shift));
		assert.equal(joined.held, false);
		const whole = joinRows([Uint32Array.from(keptRows), shift(rows)]);
		assert.deepEqual(encode(joined), encode(whole));
		assert.throws(
			() => encode(mapped(stored, rows.length + TIMED_ROW, (r) => r)),
			/values walked, \d+ expected/,
			'a list that gives fewer rows than it says is never written',
		);
	});

	it('a Forget of documents holding a common word: its list is rewritten in blocks, and searches answer as every segment', async () => {
		const { storage, index, wordBucket } = await commonWordIndex('blocked-forget', 23);
		const rowsOfWord = async () => (await wordBucket()).postings;
		const before = await rowsOfWord();
		assert.equal(before.held, false, 'in blocks');
		assert.ok((await storedText(storage)).includes('c-95"'), 'a chunk of s-3, stored');
		// Two conversations of 30 chunks each, 20 of them with the word: one early, one late.
		for (const s of ['s-3', 's-300']) assert.equal(await index.forgetSession(s), 30);
		clearAllCaches();
		const after = await rowsOfWord();
		assert.equal(after.held, false);
		assert.equal((before.length - after.length) / TIMED_ROW, 40, 'the 40 forgotten rows, no more');
		await assertExact(index, ['cmnx', 'cmnx w0x', 'w5x cmnx w9x']);
		assert.ok(!(await storedText(storage)).includes('c-95"'), 'the forgotten chunks are gone');
	});

	it('tiers built now keep their conversations in the binary form; tiers built before (JSON) are still read', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('binary-sessions') });
		const index = indexOn(storage);
		await index.addOlder(docs(1200, 6));
		await settleTiers(index);
		const { usable } = tiersOf((await index.readManifest(true)).doc);
		assert.ok(usable.length > 0 && usable.every((t) => t.tier.binarySessions === true));
		for (const { tier: t } of usable)
			for (let b = t.buckets; b < t.buckets + t.sessionBuckets; b++) {
				const key = bucketKey(index.segmentsPrefix, t, b);
				const body = (await storage.get(key))!.body;
				assert.equal(Buffer.from(body).subarray(0, 8).toString('latin1'), 'LLMTRM02');
				// Read as a tier whose conversations are JSON: an error, never rows misread.
				const json = { ...t, binarySessions: false };
				assert.throws(() => decodeBucket(key, body, json, b), CorruptDocumentError);
				// Written again as before.
				await storage.put(key, encodeBucket(decodeBucket(key, body, t, b), json, b));
			}
		await index.update((cur) => ({
			...cur.doc,
			terms: cur.doc.terms?.map(({ binarySessions: _, ...t }) => t),
		}));
		clearAllCaches();
		await assertExact(index);
		// Tiers built since merge with them: every tier then keeps its conversations in the binary form.
		const before = new Set(usable.map((t) => t.tier.id));
		await index.add(docs(40 * TIER_SEGMENTS * 4, 7, 5000));
		await settleTiers(index);
		const after = tiersOf((await index.readManifest(true)).doc).usable;
		assert.ok(after.every((t) => !before.has(t.tier.id) && t.tier.binarySessions === true));
		await assertExact(index);
	});

	it('a tier of more conversations than a bucket holds splits them over buckets: searches, a Forget and merges keep them', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('session-buckets') });
		// Buckets of 16 conversation rows (a test's size; SESSION_BUCKET_ROWS otherwise).
		const options = { segmentChunks: 40, tiers: true, sessionBucketRows: 16 };
		const index = new LexicalIndex(storage, 'test', 'kb/lexical/', 12, async () => [], options);
		const all = docs(3000, 23);
		for (let i = 0; i < 600; i += 40) all[i] = chunk(i, 'quokkaword w0x', 'secret-talk');
		await index.addOlder(all);
		await settleTiers(index);
		const split = () =>
			index
				.readManifest(true)
				.then((m) => tiersOf(m.doc).usable.filter((t) => t.tier.sessionBuckets > 1));
		assert.ok((await split()).length > 0, 'a tier with its conversations over several buckets');
		await assertExact(index, [...QUERIES, 'quokkaword']);
		assert.equal(await index.forgetSession('secret-talk'), 15);
		await assertExact(index, [...QUERIES, 'quokkaword']);
		assert.doesNotMatch(await storedText(storage), /quokkaword|secret-talk/);
		// Merged with tiers built since (more rows: more buckets), nothing comes back.
		await index.addOlder(docs(2400, 29, 9000));
		await settleTiers(index);
		assert.ok((await split()).some((t) => t.tier.sessionBuckets >= 8));
		await assertExact(index, [...QUERIES, 'quokkaword']);
		assert.doesNotMatch(await storedText(storage), /quokkaword|secret-talk/);
	});
});
