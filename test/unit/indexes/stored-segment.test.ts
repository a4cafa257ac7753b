// Word-index segments in blocks (stored-segment.ts): the same chunks and postings as the whole form,
// a chunk read decodes only its block, and every altered part is an error naming the key when it is
// first asked for (never an empty or partial answer).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	build,
	decode,
	docAt,
	docsOf,
	encode,
	encodeWhole,
	sessionsIn,
} from '../../../src/indexes/lexical/segment';
import { goneChunk } from '../../../src/indexes/chunks/chunk';
import { CorruptDocumentError } from '../../../src/internal';
import type { IndexedChunk } from '../../../src/internal';
import { closeSegment, openSegment, wordChunk } from '../../support/stored-segments';

const chunk = (i: number, session?: string): IndexedChunk => wordChunk(i, session);

const docs = (n: number) => Array.from({ length: n }, (_, i) => chunk(i));
const corrupt = (key: string) => (e: unknown) =>
	e instanceof CorruptDocumentError && e.message.includes(key);

describe('word-index segments in blocks', () => {
	it('hold what the whole form holds: chunks, lengths, postings; gone documents counted', () => {
		const list = docs(200);
		list[70] = goneChunk();
		const seg = build('k', list);
		for (const body of [encode(seg), encodeWhole(seg)]) {
			const back = decode('k', body);
			assert.deepEqual(back.docs, seg.docs);
			assert.deepEqual([...back.lengths], [...seg.lengths]);
			assert.deepEqual(
				[...back.postings].map(([t, l]) => [t, [...l]]).sort(),
				[...seg.postings].map(([t, l]) => [t, [...l]]).sort(),
			);
			assert.equal(back.gone, 1);
			assert.deepEqual(docAt(back, 130), list[130]);
			assert.deepEqual(
				docsOf(back, new Set(['chat-2', 'chat-6'])),
				list.filter((d) => d.session_id === 'chat-2' || d.session_id === 'chat-6'),
			);
			assert.deepEqual(
				[...sessionsIn(back)].sort(),
				[...new Set(list.filter((_, i) => i !== 70).map((d) => d.session_id))].sort(),
			);
		}
	});

	it('a chunk read decodes its block only: an altered block elsewhere is not read, and is named when it is', () => {
		const body = encode(build('k', docs(200)));
		const s = openSegment(body);
		s.blocks[2][5].text = 42 as unknown as string;
		const back = decode('k', closeSegment(s));
		assert.equal(docAt(back, 10).id, 'c-10');
		assert.equal(docAt(back, 199).id, 'c-199');
		assert.throws(() => docAt(back, 130), corrupt('k'));
		assert.throws(() => back.docs, corrupt('k'));
		// Asked again, it fails again: a damaged part is never taken as empty.
		assert.throws(() => docAt(back, 129), corrupt('k'));
	});

	const alterations: Array<
		[string, (s: ReturnType<typeof openSegment>) => void, 'read' | 'docs' | 'postings']
	> = [
		['a block of the wrong size', (s) => s.blocks[0].pop(), 'docs'],
		[
			'a chunk moved to another conversation',
			(s) => (s.blocks[1][0].session_id = 'chat-99'),
			'docs',
		],
		['a chunk of another message number', (s) => (s.blocks[1][3].seq = 999), 'docs'],
		['a gone document brought back', (s) => (s.table[s.header.count + 3] = 0xffffffff), 'docs'],
		['a conversation the header does not list', (s) => (s.table[s.header.count] = 77), 'read'],
		[
			'postings naming a document it does not hold',
			(s) => (s.postings.terms.pricing = [500, 1]),
			'postings',
		],
		['postings that are not pairs', (s) => (s.postings.terms.pricing = [0]), 'postings'],
		['a block too few', (s) => s.blocks.pop(), 'read'],
		['a count that is not whole', (s) => (s.header.count = 1.5), 'read'],
	];
	for (const [name, alter, when] of alterations)
		it(`${name}: an error naming the segment when ${when === 'read' ? 'it is read' : `its ${when} are`}`, () => {
			const s = openSegment(encode(build('seg-key', docs(200))));
			alter(s);
			const body = closeSegment(s);
			if (when === 'read') return assert.throws(() => decode('seg-key', body), corrupt('seg-key'));
			const back = decode('seg-key', body);
			assert.throws(() => (when === 'docs' ? back.docs : back.postings), corrupt('seg-key'));
		});

	it('bytes cut short, or past what its parts say: an error naming the segment', () => {
		const body = encode(build('k', docs(100)));
		for (const bad of [
			body.subarray(0, body.length - 1),
			Buffer.concat([body, Buffer.from([0])]),
			body.subarray(0, 10),
		])
			assert.throws(() => decode('k', bad), corrupt('k'));
		const s = openSegment(body);
		const good = closeSegment(s);
		// A part's bytes damaged in place (same size): named when that part is asked for.
		const at = good.length - 20;
		const flipped = Buffer.from(good);
		flipped[at] ^= 0xff;
		const back = decode('k', flipped);
		assert.throws(() => back.docs, corrupt('k'));
	});
});
