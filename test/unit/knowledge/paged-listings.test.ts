// What a whole-base operation lists (every conversation, every partition, the base-wide index's
// segments) it reads page by page, keeping only what it derives: no folder of the base is listed whole,
// so what it holds does not grow with the listing (a base of 100,000 users lists millions of keys).
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import { clearAllCaches, forgetUser } from '../../../src/internal';
import { fnv1a32 } from '../../../src/common/hash';
import { FirstOf } from '../../../src/common/first-of';
import { LISTED_SESSIONS, SyncTally } from '../../../src/knowledge/sync';
import { compareFolders, sortFolders } from '../../../src/store/storage';
import { seeded } from '../../../src/common/seeded';
import type { SessionSyncResult } from '../../../src/knowledge/types';
import { manyUsers } from '../../support/wide-base';

afterEach(() => clearAllCaches());

/** The folders (keys ending in "/", or the top) listed whole since the last take. */
const foldersListedWhole = (listed: readonly string[]) =>
	listed.filter((prefix) => prefix === '' || prefix.endsWith('/'));

describe('whole-base operations list page by page', () => {
	it('sync, searches, Status, Forget User, Regenerate and Delete list no folder whole', async () => {
		const { base, storage } = await manyUsers({ users: 6, turns: 4 });
		const steps: Array<[string, () => Promise<unknown>]> = [
			['sync', () => base.sync()],
			['search of every conversation', () => base.search('heron', { allUsers: true, k: 5 })],
			['search of one user', () => base.search('heron', { userId: 'user-2', k: 5 })],
			['status', () => base.status()],
			['forget user', () => forgetUser(storage, { userId: 'user-3' })],
			['status after', () => base.status()],
			['regenerate', () => base.regenerate()],
			['sessions', () => base.sessions()],
			['delete', () => base.delete()],
		];
		const pagedAny = new Set<string>();
		for (const [name, run] of steps) {
			storage.take();
			await run();
			assert.deepEqual(foldersListedWhole(storage.listed), [], `${name} listed these whole`);
			for (const p of storage.paged) pagedAny.add(p);
		}
		// The operations do list those folders, through pages.
		for (const folder of ['/sessions/', '/parts/', '/wide/'])
			assert.ok(
				[...pagedAny].some((p) => p.includes(folder)),
				`a folder under ${folder} was listed by pages: ${[...pagedAny].join(', ')}`,
			);
		assert.deepEqual(await storage.inner.list(''), [], 'Delete left nothing');
	});
});

describe('a whole-base result', () => {
	const one = (n: number): SessionSyncResult => ({
		sessionId: `s-${n}`,
		messages: 2,
		chunks: 1,
		from: 0,
		cursor: 2,
		totalProcessed: 2,
		lastSyncAt: null,
		pending: 0,
	});

	it('counts every conversation and lists the first thousand in folder order, met in any order', () => {
		const ids = Array.from({ length: LISTED_SESSIONS + 5 }, (_, n) => `s-${n}`);
		// The order S3 lists the folders in ("s-1000/" before "s-101/"), and a walk's own order.
		const inFolderOrder = sortFolders(ids);
		const shuffled = [...ids].sort((a, b) => fnv1a32(a) - fnv1a32(b));
		for (const walk of [ids, shuffled, [...ids].reverse()]) {
			const tally = new SyncTally('b');
			for (const id of walk) tally.add(one(Number(id.slice(2))));
			const r = tally.done;
			assert.deepEqual(
				r.sessions.map((s) => s.sessionId),
				inFolderOrder.slice(0, LISTED_SESSIONS),
			);
			assert.deepEqual([r.conversations, r.messages, r.chunks], [1005, 2010, 1005]);
		}
	});

	it('orders folders as S3 lists their keys: the UTF-8 bytes of "name/"', () => {
		const bytesOrder = (a: string, b: string) =>
			Buffer.compare(Buffer.from(`${a}/`, 'utf8'), Buffer.from(`${b}/`, 'utf8'));
		const alphabet = [
			'a',
			'b',
			'-',
			'.',
			' ',
			'0',
			'~',
			'é',
			'\u007f',
			'中',
			'\uffff',
			'\ue000',
			'😀',
			'𝄞',
		];
		const rand = seeded(7);
		const word = () =>
			Array.from(
				{ length: 1 + Math.floor(rand() * 4) },
				() => alphabet[Math.floor(rand() * alphabet.length)],
			).join('');
		for (let i = 0; i < 5000; i++) {
			const a = word();
			const b = rand() < 0.3 ? a + word() : word();
			assert.equal(Math.sign(compareFolders(a, b)), Math.sign(bytesOrder(a, b)), `${a} / ${b}`);
			assert.equal(Math.sign(compareFolders(b, a)), Math.sign(bytesOrder(b, a)), `${b} / ${a}`);
		}
		assert.equal(compareFolders('x', 'x'), 0);
	});

	it('keeps the first n of many in order, holding 2n at most', () => {
		const first = new FirstOf<number>(3, (a, b) => a - b);
		assert.deepEqual(first.sorted(), []);
		for (const n of [9, 4, 7, 1, 8, 3, 3.5, 2, 6, 0.5, 5]) first.add(n);
		assert.deepEqual(first.sorted(), [0.5, 1, 2]);
		first.add(0);
		first.add(1.5);
		assert.deepEqual(first.sorted(), [0, 0.5, 1]);
		assert.throws(() => new FirstOf<number>(0, (a, b) => a - b), RangeError);
	});

	it('sync and Regenerate of a whole base count each conversation once', async () => {
		const { base } = await manyUsers({ users: 5, turns: 3 });
		const synced = await base.sync();
		const regenerated = await base.regenerate();
		for (const r of [synced, regenerated]) {
			assert.equal(r.conversations, r.sessions.length);
			assert.equal(new Set(r.sessions.map((s) => s.sessionId)).size, r.sessions.length);
			assert.deepEqual(r.sessions.map((s) => s.sessionId).sort(), (await base.sessions()).sort());
		}
		assert.ok(regenerated.messages > 0 && regenerated.messages >= synced.messages);
	});
});
