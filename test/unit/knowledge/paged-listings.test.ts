// What a whole-base operation lists (every conversation, every partition, the base-wide index's
// segments) it reads page by page, keeping only what it derives: no folder of the base is listed whole,
// so what it holds does not grow with the listing (a base of 100,000 users lists millions of keys).
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import { clearAllCaches, forgetUser } from '../../../src/internal';
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
