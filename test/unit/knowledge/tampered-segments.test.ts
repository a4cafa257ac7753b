// A word-index segment altered behind the base's back (postings naming documents it does not hold,
// postings that are not pairs or not counts, lengths that are not counts, a chunk without its
// conversation, a block whose chunks are not those its table lists): a search that reads it refuses
// with an error naming the object, never answers from part of it, and nothing rewrites or deletes it.
// Both stored forms: in blocks (as segments are written now) and whole (gzipped JSON, as before).
import assert from 'node:assert/strict';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, describe, it } from 'node:test';

import { build, encode, encodeWhole } from '../../../src/indexes/lexical/segment';
import {
	clearAllCaches,
	CorruptDocumentError,
	MemoryBase,
	wideLexicalPrefix,
} from '../../../src/internal';
import type { IndexedChunk } from '../../../src/internal';
import { closeSegment, isBlocks, openSegment } from '../../support/stored-segments';
import { manyUsers } from '../../support/wide-base';

afterEach(() => clearAllCaches());

type Segment = {
	docs: Array<Record<string, unknown>>;
	lengths: number[];
	terms: Record<string, number[]>;
};

/**
 * A stored segment's chunks, lengths and postings, and the bytes of it as `form` stores them (whole:
 * gzipped JSON; blocks: its parts edited in place, the table's lengths and conversations as they are).
 */
function opened(body: Uint8Array, form: 'whole' | 'blocks'): { seg: Segment; store: () => Buffer } {
	if (!isBlocks(body)) {
		const seg = JSON.parse(gunzipSync(body).toString('utf8')) as Segment;
		return { seg, store: () => gzipSync(Buffer.from(JSON.stringify({ kind: 'lexical', ...seg }))) };
	}
	const s = openSegment(body);
	const n = s.header.count;
	const seg: Segment = {
		docs: s.blocks.flat(),
		lengths: s.table.slice(0, n),
		terms: s.postings.terms,
	};
	const whole = () => gzipSync(Buffer.from(JSON.stringify({ kind: 'lexical', ...seg })));
	const blocks = () => {
		s.postings.terms = seg.terms;
		s.blocks = Array.from({ length: Math.ceil(seg.docs.length / 64) }, (_, b) =>
			seg.docs.slice(64 * b, 64 * b + 64),
		);
		return closeSegment(s);
	};
	return { seg, store: form === 'whole' ? whole : blocks };
}

const TAMPERINGS: Array<[string, (seg: Segment) => void, ('whole' | 'blocks')[]?]> = [
	[
		'postings name a document it does not hold',
		(seg) => {
			const term = Object.keys(seg.terms)[0];
			seg.terms[term] = [...seg.terms[term], seg.docs.length + 3, 1];
		},
	],
	[
		'postings that are not pairs',
		(seg) => {
			const term = Object.keys(seg.terms)[0];
			seg.terms[term] = [...seg.terms[term], 0];
		},
	],
	[
		// Before it was checked, 2^32 wrapped round to 0 when copied into the segment's counts.
		'a term count too large for a segment',
		(seg) => {
			const term = Object.keys(seg.terms)[0];
			seg.terms[term] = [...seg.terms[term], 0, 2 ** 32];
		},
	],
	[
		'a posting that is not a number',
		(seg) => {
			const term = Object.keys(seg.terms)[0];
			seg.terms[term] = [...seg.terms[term], '0', 1] as unknown as number[];
		},
	],
	[
		'a document length that is not a whole number',
		(seg) => {
			seg.lengths[0] = 1.5;
		},
		// Segments in blocks keep lengths as 32-bit counts: a fraction cannot be stored there.
		['whole'],
	],
	[
		'a chunk that is not the one its table lists',
		(seg) => {
			seg.docs[0].seq = Number(seg.docs[0].seq) + 1;
		},
		['blocks'],
	],
	[
		'a chunk without its conversation',
		(seg) => {
			delete seg.docs[0].session_id;
		},
	],
];

describe('a tampered word-index segment', () => {
	for (const form of ['blocks', 'whole'] as const)
		for (const [name, tamper] of TAMPERINGS.filter(([, , f]) => !f || f.includes(form)))
			it(`(${name}, ${form}): the search of every conversation names it; nothing rewrites it`, async () => {
				const { base, storage } = await manyUsers({ users: 6, turns: 6 });
				await base.sync();
				const keys = (await storage.inner.list(wideLexicalPrefix('kb')))
					.map((o) => o.key)
					.filter((k) => k.includes('/segments/'));
				assert.ok(keys.length > 0);
				const key = keys[0];
				const got = (await storage.get(key))!;
				assert.ok(isBlocks(got.body), 'segments are written in blocks');
				const { seg, store } = opened(got.body, form);
				tamper(seg);
				const bad = store();
				await storage.put(key, bad);
				clearAllCaches();
				for (const mode of ['lexical', 'hybrid'] as const)
					await assert.rejects(
						base.search('pricing plan answer', { allUsers: true, k: 5, mode }),
						(e: unknown) => e instanceof CorruptDocumentError && e.message.includes(key),
					);
				// The model failing as well: one error, and no rejection left unhandled.
				const down = async (): Promise<never> => {
					throw new Error('model down');
				};
				const failing = new MemoryBase({
					storage,
					baseId: 'kb',
					embedder: { embedQuery: down, embedDocuments: down },
				});
				await assert.rejects(failing.search('pricing plan', { allUsers: true, k: 5 }));
				await new Promise((resolve) => setTimeout(resolve, 20));
				// More captures and a sync: each may be refused (a merge cannot read the segment), but none
				// rewrites or deletes it.
				const refused = (e: unknown) => assert.ok(e instanceof CorruptDocumentError, String(e));
				for (let t = 0; t < 6; t++)
					await base
						.capture({
							sessionId: `late-${t}`,
							userId: 'user-1',
							runId: `late-${t}`,
							texts: [`late pricing note ${t}`],
						})
						.catch(refused);
				await base.sync().catch(refused);
				const after = await storage.get(key);
				assert.ok(after, 'the segment was deleted');
				assert.deepEqual(Buffer.from(after.body), bad);
			});

	for (const [name, change] of [
		[
			'a chunk fewer',
			(seg: Segment) => {
				const last = seg.docs.length - 1;
				seg.docs.pop();
				seg.lengths.pop();
				for (const term of Object.keys(seg.terms)) {
					const pairs = seg.terms[term];
					const kept: number[] = [];
					for (let i = 0; i < pairs.length; i += 2)
						if (pairs[i] !== last) kept.push(pairs[i], pairs[i + 1]);
					if (kept.length > 0) seg.terms[term] = kept;
					else delete seg.terms[term];
				}
			},
		],
		[
			'a text edited',
			(seg: Segment) => {
				seg.docs[0].text = `${String(seg.docs[0].text)} and a sentence nobody captured`;
			},
		],
	] as const)
		for (const form of ['blocks', 'whole'] as const)
			it(`replaced by a valid segment that is not the one listed (${name}, ${form}): the search names it`, async () => {
				const { base, storage } = await manyUsers({ users: 6, turns: 6 });
				await base.sync();
				const key = (await storage.inner.list(wideLexicalPrefix('kb')))
					.map((o) => o.key)
					.find((k) => k.includes('/segments/'))!;
				const { seg } = opened((await storage.get(key))!.body, 'whole');
				change(seg);
				const docs = seg.docs as unknown as IndexedChunk[];
				await storage.put(
					key,
					form === 'blocks' ? encode(build(key, docs)) : encodeWhole(build(key, docs)),
				);
				clearAllCaches();
				for (const mode of ['lexical', 'hybrid'] as const)
					await assert.rejects(
						base.search('pricing plan answer', { allUsers: true, k: 5, mode }),
						(e: unknown) =>
							e instanceof CorruptDocumentError &&
							e.message.includes(key) &&
							e.message.includes('its manifest lists'),
					);
			});

	it('replaced after this process cached it: this process answers from the copy it checked, a new one refuses', async () => {
		const { base, storage } = await manyUsers({ users: 6, turns: 6 });
		await base.sync();
		clearAllCaches();
		const query = 'pricing plan answer';
		const before = await base.search(query, { allUsers: true, k: 5, mode: 'lexical' });
		assert.ok(before.length > 0);
		const key = (await storage.inner.list(wideLexicalPrefix('kb')))
			.map((o) => o.key)
			.find((k) => k.includes('/segments/'))!;
		const { seg, store } = opened((await storage.get(key))!.body, 'blocks');
		seg.docs[0].text = `${String(seg.docs[0].text)} and a sentence nobody captured`;
		await storage.put(key, store());
		// Write-once segments: the copy read and checked before is still the one the manifest lists.
		const again = await base.search(query, { allUsers: true, k: 5, mode: 'lexical' });
		assert.deepEqual(
			again.map((h) => [h.sessionId, h.seq, h.text]),
			before.map((h) => [h.sessionId, h.seq, h.text]),
		);
		// A process without that copy (caches empty) reads the replacement and refuses it by name.
		clearAllCaches();
		await assert.rejects(
			base.search(query, { allUsers: true, k: 5, mode: 'lexical' }),
			(e: unknown) => e instanceof CorruptDocumentError && e.message.includes(key),
		);
	});
});
