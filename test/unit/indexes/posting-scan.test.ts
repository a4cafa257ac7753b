// One term's postings read from a word segment's stored postings without parsing the rest
// (posting-scan.ts, segment.ts: postingOf): the same lists JSON.parse gives for every term and for terms
// it lacks, whatever the terms hold; anything not in the plain form left to the full parse; a damaged
// list an error naming the segment when that term is asked for; the documents of messages found from
// the table (docsWhere) as a filter of every document finds them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { goneChunk } from '../../../src/indexes/chunks/chunk';
import { scanPostings } from '../../../src/indexes/lexical/posting-scan';
import {
	build,
	decode,
	docsWhere,
	encode,
	encodeWhole,
	postingOf,
} from '../../../src/indexes/lexical/segment';
import { CorruptDocumentError } from '../../../src/internal';
import type { IndexedChunk } from '../../../src/internal';
import { closeSegment, openSegment, wordChunk } from '../../support/stored-segments';

const json = (terms: Record<string, number[]>) => Buffer.from(JSON.stringify({ terms }), 'utf8');

/** Terms a scan for another term could be fooled by: quotes, escapes, commas and brackets inside keys. */
const HOSTILE: Record<string, number[]> = {
	b: [1, 2],
	'x,"b': [3, 4],
	'x\\"b': [5, 6],
	'{"b': [7, 8],
	'b":[': [9, 10],
	'"b"': [11, 12],
	terms: [13, 14],
	__proto__: [15, 16],
	'': [17, 18],
	straße: [19, 20],
	日本語: [21, 22],
	'😀': [23, 24],
	'a\nb': [25, 26],
	'\u2028': [27, 28],
	empty: [],
	big: [4_294_967_295, 1],
};

describe('one term read from stored postings', () => {
	it('gives what JSON.parse gives for every term, and nothing for terms it lacks', () => {
		// __proto__ as an own key, as JSON.parse makes it.
		const terms = JSON.parse(JSON.stringify(HOSTILE).replace('"__proto_x"', '')) as Record<
			string,
			number[]
		>;
		Object.defineProperty(terms, '__proto__', { value: [15, 16], enumerable: true });
		const body = json(terms);
		const parsed = JSON.parse(body.toString('utf8')).terms as Record<string, number[]>;
		assert.ok(Object.keys(parsed).length >= Object.keys(HOSTILE).length - 1);
		for (const term of Object.keys(parsed))
			assert.deepEqual(scanPostings(body, term), parsed[term], term);
		for (const absent of ['c', 'x', '"', ',', 'B', 'bb', 'strasse', '\\'])
			assert.equal(scanPostings(body, absent), undefined, absent);
	});

	it('leaves the full parse to decide anything not in the plain form', () => {
		const plain = (list: string) =>
			Buffer.from(`{"terms":{"a":[1,1],"b":${list},"c":[2,2]}}`, 'utf8');
		for (const list of [
			'[1, 2]',
			'[-1,2]',
			'[1.5,2]',
			'[1e2,2]',
			'[01,2]',
			'[4294967296,1]',
			'[1,2',
			'[1,"2"]',
			'[1,,2]',
		])
			assert.equal(scanPostings(plain(list), 'b'), null, list);
		assert.deepEqual(scanPostings(plain('[0,7]'), 'b'), [0, 7]);
		// A repeated key: JSON.parse keeps the last copy, so the scan does not answer.
		const twice = Buffer.from('{"terms":{"b":[1,1],"b":[2,2]}}', 'utf8');
		assert.equal(scanPostings(twice, 'b'), null);
		for (const other of ['{"words":{"b":[1,1]}}', ' {"terms":{"b":[1,1]}}', '[]'])
			assert.equal(scanPostings(Buffer.from(other, 'utf8'), 'b'), null, other);
	});
});

const chunk = (i: number): IndexedChunk => wordChunk(i, undefined, ' "quoted" straße 日本');
const docs = (n: number) => Array.from({ length: n }, (_, i) => chunk(i));
const corrupt = (key: string) => (e: unknown) =>
	e instanceof CorruptDocumentError && e.message.includes(key);
const plainLists = (m: Map<string, Uint32Array>) => [...m].map(([t, l]) => [t, [...l]]);

describe('a term of a lazily read word segment', () => {
	it('is the list the whole postings hold, for each term, before and after they are parsed whole', () => {
		const list = docs(300);
		list[40] = goneChunk();
		const seg = build('k', list);
		const terms = [...seg.postings.keys(), 'absent', 'pric'];
		for (const body of [encode(seg), encodeWhole(seg)]) {
			const lazy = decode('k', body);
			for (const t of terms) assert.deepEqual(postingOf(lazy, t), seg.postings.get(t), t);
			// Parsed whole afterwards: the same lists.
			assert.deepEqual(plainLists(lazy.postings).sort(), plainLists(seg.postings).sort());
			for (const t of terms) assert.deepEqual(postingOf(lazy, t), seg.postings.get(t), t);
		}
	});

	it('a damaged list is an error naming the segment when its term is asked for, every time', () => {
		for (const [name, bad] of [
			['a document it does not hold', [900, 1]],
			['not pairs', [0]],
			['fractions (left to the full parse)', [0.5, 1]],
		] as const) {
			const s = openSegment(encode(build('seg-key', docs(200))));
			assert.ok(s.postings.terms.pric);
			s.postings.terms.pric = [...bad];
			const back = decode('seg-key', closeSegment(s));
			assert.throws(() => postingOf(back, 'pric'), corrupt('seg-key'), name);
			assert.throws(() => postingOf(back, 'pric'), corrupt('seg-key'), name);
			assert.ok(postingOf(back, 'weather'));
		}
	});

	it('a damaged list of another term does not stop this one, and is named when asked for', () => {
		const s = openSegment(encode(build('seg-key', docs(200))));
		s.postings.terms.weather = [0];
		const back = decode('seg-key', closeSegment(s));
		const want = build('x', docs(200)).postings.get('pric');
		assert.ok(want && want.length > 0);
		assert.deepEqual(postingOf(back, 'pric'), want);
		assert.throws(() => postingOf(back, 'weather'), corrupt('seg-key'));
		assert.throws(() => back.postings, corrupt('seg-key'));
	});

	it('postings altered in their stored bytes (same size) are named, never read as none', () => {
		const s = openSegment(encode(build('k', docs(100))));
		const good = closeSegment(s);
		const lead = decode('k', good);
		assert.ok(postingOf(lead, 'pric'));
		// The postings part follows the table: flip a byte inside it.
		const at = good.indexOf(Buffer.from([0x1f, 0x8b]), 16) + 30;
		const flipped = Buffer.from(good);
		flipped[at] ^= 0xff;
		const back = decode('k', flipped);
		assert.throws(() => postingOf(back, 'pric'), corrupt('k'));
		assert.throws(() => postingOf(back, 'absent'), corrupt('k'));
	});
});

describe('the documents of messages, from the table', () => {
	it('are those a filter of every document finds, gone documents never, lazily read or not', () => {
		const list = docs(300);
		list[33] = goneChunk();
		list[70] = goneChunk();
		const seg = build('k', list);
		const test = (session: string, seq: number) =>
			(session === 'chat-1' && seq >= 0 && seq <= 5) || (session === 'chat-2' && seq === 6);
		const want = list
			.map((d, i) => [i, d] as [number, IndexedChunk])
			.filter(([i, d]) => i !== 33 && i !== 70 && test(d.session_id, d.seq));
		assert.ok(want.length >= 4);
		for (const body of [encode(seg), encodeWhole(seg)])
			assert.deepEqual(docsWhere(decode('k', body), test), want);
		assert.deepEqual(docsWhere(seg, test), want);
		assert.deepEqual(
			docsWhere(seg, () => false),
			[],
		);
	});
});
