// A word-index segment altered behind the base's back (postings naming documents it does not hold,
// postings that are not pairs or not counts, lengths that are not counts, a chunk without its
// conversation): a search that reads it refuses with
// an error naming the object, never answers from part of it, and nothing rewrites or deletes it.
import assert from 'node:assert/strict';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, describe, it } from 'node:test';

import {
	clearAllCaches,
	CorruptDocumentError,
	MemoryBase,
	wideLexicalPrefix,
} from '../../../src/internal';
import { manyUsers } from '../../support/wide-base';

afterEach(() => clearAllCaches());

type Segment = {
	docs: Array<Record<string, unknown>>;
	lengths: number[];
	terms: Record<string, number[]>;
};

const TAMPERINGS: Array<[string, (seg: Segment) => void]> = [
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
	],
	[
		'a chunk without its conversation',
		(seg) => {
			delete seg.docs[0].session_id;
		},
	],
];

describe('a tampered word-index segment', () => {
	for (const [name, tamper] of TAMPERINGS)
		it(`(${name}): the search of every conversation names it; nothing rewrites it`, async () => {
			const { base, storage } = await manyUsers({ users: 6, turns: 6 });
			await base.sync();
			const keys = (await storage.inner.list(wideLexicalPrefix('kb')))
				.map((o) => o.key)
				.filter((k) => k.includes('/segments/'));
			assert.ok(keys.length > 0);
			const key = keys[0];
			const got = (await storage.get(key))!;
			const seg = JSON.parse(gunzipSync(got.body).toString('utf8')) as Segment;
			tamper(seg);
			const bad = gzipSync(Buffer.from(JSON.stringify(seg)));
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
		it(`replaced by a valid segment that is not the one listed (${name}): the search names it`, async () => {
			const { base, storage } = await manyUsers({ users: 6, turns: 6 });
			await base.sync();
			const key = (await storage.inner.list(wideLexicalPrefix('kb')))
				.map((o) => o.key)
				.find((k) => k.includes('/segments/'))!;
			const seg = JSON.parse(
				gunzipSync((await storage.get(key))!.body).toString('utf8'),
			) as Segment;
			change(seg);
			await storage.put(key, gzipSync(Buffer.from(JSON.stringify(seg))));
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
		const seg = JSON.parse(gunzipSync((await storage.get(key))!.body).toString('utf8')) as Segment;
		seg.docs[0].text = `${String(seg.docs[0].text)} and a sentence nobody captured`;
		await storage.put(key, gzipSync(Buffer.from(JSON.stringify(seg))));
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
