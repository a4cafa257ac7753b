// A Status of the whole base checks a page of its conversations (each against its own partitions) and
// gives the base-wide index's coverage: its requests stay put as the base grows, the sessions folder
// is never listed whole, pages walk every conversation once, and a lost partition shows on its page.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';

import {
	clearAllCaches,
	InvalidIdError,
	InvalidInputError,
	lexicalPartFolder,
	memoryBaseSessionsPrefix,
	sortFolders,
	STATUS_PAGE_MAX,
	userPart,
} from '../../../src/internal';
import { manyUsers } from '../../support/wide-base';

afterEach(() => clearAllCaches());

describe('Status of a whole base, a page at a time', () => {
	it('pages walk every conversation once, in folder order; their figures add up to the whole base’s', async () => {
		const { base } = await manyUsers({ users: 7, turns: 2 });
		await base.sync();
		const whole = await base.status();
		assert.equal(whole.nextAfter, null, 'one page holds them all');
		assert.equal(whole.sessions.length, 14);
		const ids = whole.sessions.map((s) => s.sessionId);
		assert.deepEqual(ids, sortFolders(await base.sessions()));
		const seen: string[] = [];
		let vectors = 0;
		let chunks = 0;
		let after: string | undefined;
		do {
			const page = await base.status({ after, limit: 4 });
			assert.ok(page.sessions.length <= 4 && page.sessions.length > 0);
			seen.push(...page.sessions.map((s) => s.sessionId));
			assert.ok(seen.length <= ids.length, 'no conversation twice');
			assert.equal(page.mismatch, false, page.mismatchReason ?? '');
			assert.deepEqual(page.wide, whole.wide, 'the base-wide coverage on every page');
			// One user's two conversations are on one page here (chat-u-0, chat-u-1 sort together).
			vectors += page.index?.vectors ?? 0;
			chunks += page.lexical?.chunks ?? 0;
			after = page.nextAfter ?? undefined;
		} while (after !== undefined);
		assert.deepEqual(seen, ids);
		assert.equal(vectors, whole.index?.vectors);
		assert.equal(chunks, whole.lexical?.chunks);
		assert.equal(whole.index?.vectors, whole.wide?.vectors, 'every chunk in the base-wide index');
		const last = await base.status({ after: ids[ids.length - 1] });
		assert.deepEqual([last.sessions, last.nextAfter], [[], null]);
	});

	it('requests stay put from 8 to 48 users, and the sessions folder is never listed whole', async () => {
		const measure = async (users: number) => {
			const { base, storage, baseId } = await manyUsers({ users, turns: 2 });
			await base.sync();
			const sessions = memoryBaseSessionsPrefix(baseId);
			const counts: number[] = [];
			for (const after of [undefined, 'chat-3-1']) {
				clearAllCaches();
				storage.take();
				storage.peak = 0;
				const page = await base.status({ after, limit: 6 });
				assert.equal(page.sessions.length, 6);
				const { requests } = storage.take();
				assert.ok(storage.peak <= 16, `${storage.peak} requests at once`);
				counts.push(requests);
				await base.status({ after, limit: 6 });
				assert.ok(
					!storage.listed.some((p) => sessions.startsWith(p) || p.startsWith(sessions)),
					`listed whole: ${storage.listed.join(', ')}`,
				);
			}
			return Math.max(...counts);
		};
		const small = await measure(8);
		const large = await measure(48);
		assert.ok(large <= small * 1.2, `requests: ${small} → ${large}`);
	});

	it('a lost partition shows on the page of its conversations, as a mismatch naming them', async () => {
		const { base, root } = await manyUsers({ users: 6, turns: 2 });
		await base.sync();
		const folder = lexicalPartFolder('kb', { part: userPart('user-5') });
		rmSync(path.join(root, ...folder.split('/')), { recursive: true });
		clearAllCaches();
		const first = await base.status({ limit: 4 });
		assert.deepEqual(
			first.sessions.map((s) => s.sessionId),
			['chat-0-0', 'chat-0-1', 'chat-1-0', 'chat-1-1'],
		);
		assert.equal(first.mismatch, false, 'user-5 is not on this page');
		const theirs = await base.status({ after: 'chat-4-1', limit: 4 });
		assert.deepEqual(
			theirs.sessions.map((s) => [s.sessionId, s.mismatch]),
			[
				['chat-5-0', true],
				['chat-5-1', true],
			],
		);
		assert.equal(theirs.mismatch, true);
		assert.match(theirs.mismatchReason ?? '', /the lexical index is missing/);
		assert.equal((await base.status()).mismatch, true, 'the whole base on one page');
	});

	it('refuses a page size out of range and an After that is not an ID', async () => {
		const { base } = await manyUsers({ users: 2, turns: 1 });
		for (const limit of [0, -1, 2.5, STATUS_PAGE_MAX + 1, Number.NaN])
			await assert.rejects(base.status({ limit }), InvalidInputError, String(limit));
		for (const after of ['../x', '', 'a/b', 3 as unknown as string])
			await assert.rejects(base.status({ after }), InvalidIdError, String(after));
		assert.equal((await base.status({ limit: STATUS_PAGE_MAX })).sessions.length, 2);
	});
});
