// What a whole-base operation lists (every conversation, every partition, the base-wide index's
// segments) it reads page by page, keeping only what it derives: no folder of the base is listed whole,
// so what it holds does not grow with the listing (a base of 100,000 users lists millions of keys).
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import { clearAllCaches, forgetUser } from '../../../src/internal';
import { LISTED_SESSIONS, SyncTally } from '../../../src/knowledge/sync';
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

	it('counts every conversation and lists the first thousand', () => {
		const tally = new SyncTally('b');
		for (let n = 0; n < LISTED_SESSIONS + 5; n++) tally.add(one(n));
		const r = tally.done;
		assert.equal(r.sessions.length, LISTED_SESSIONS);
		assert.deepEqual([r.sessions[0].sessionId, r.sessions.at(-1)?.sessionId], ['s-0', 's-999']);
		assert.deepEqual([r.conversations, r.messages, r.chunks], [1005, 2010, 1005]);
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
