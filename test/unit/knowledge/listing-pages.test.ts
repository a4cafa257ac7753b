// List Captured Messages of every conversation, or of one user, a page at a time: what a page reads
// follows the page (and its offset), never the size of the base; the pages walk every message once.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import { clearAllCaches, memoryBaseSessionsPrefix, sortFolders } from '../../../src/internal';
import type { MemoryBase } from '../../../src/internal';
import { manyUsers } from '../../support/wide-base';

afterEach(() => clearAllCaches());

/** Every conversation's messages, one conversation at a time, in folder order. */
async function everyMessage(base: MemoryBase): Promise<string[]> {
	const out: string[] = [];
	for (const s of sortFolders(await base.sessions())) {
		const page = await base.listMessages({ sessionId: s, limit: 10_000 });
		out.push(...page.messages.map((m) => `${s} ${m.seq} ${m.text}`));
	}
	return out;
}

describe('List Captured Messages, a page at a time', () => {
	it('every conversation: pages of any size walk every message once, in order; no total', async () => {
		const { base } = await manyUsers({ users: 5, turns: 3 });
		const expected = await everyMessage(base);
		assert.equal(expected.length, 30);
		for (const limit of [1, 3, 4, 6, 7, 100]) {
			const seen: string[] = [];
			let offset: number | null = 0;
			while (offset !== null) {
				const page = await base.listMessages({ allUsers: true, offset, limit });
				assert.equal(page.total, null);
				assert.ok(page.messages.length <= limit);
				seen.push(...page.messages.map((m) => `${m.session_id} ${m.seq} ${m.text}`));
				assert.ok(seen.length <= expected.length, 'no message twice');
				if (page.nextOffset !== null) assert.equal(page.nextOffset, offset + limit);
				offset = page.nextOffset;
			}
			assert.deepEqual(seen, expected, `pages of ${limit}`);
		}
		const past = await base.listMessages({ allUsers: true, offset: 30, limit: 5 });
		assert.deepEqual([past.messages, past.nextOffset], [[], null]);
	});

	it('what a page reads does not grow with the base (8 → 48 users), and the sessions folder is never listed whole', async () => {
		const measure = async (users: number) => {
			const { base, storage, baseId } = await manyUsers({ users, turns: 2 });
			const sessions = memoryBaseSessionsPrefix(baseId);
			const counts: number[] = [];
			for (const query of [
				{ allUsers: true as const, offset: 0, limit: 5 },
				{ allUsers: true as const, offset: 9, limit: 5 },
				{ userId: 'user-3', offset: 0, limit: 5 },
			]) {
				clearAllCaches();
				storage.take();
				const page = await base.listMessages(query);
				assert.equal(page.messages.length, query.userId ? 4 : 5);
				assert.ok(
					!storage.listed.some((p) => sessions.startsWith(p) || p.startsWith(sessions)),
					`listed whole: ${storage.listed.join(', ')}`,
				);
				counts.push(storage.take().requests);
			}
			return counts;
		};
		const small = await measure(8);
		const large = await measure(48);
		small.forEach((n, i) => assert.ok(large[i] <= n * 1.2, `requests: ${n} → ${large[i]}`));
	});

	it('one user: only their messages, across their conversations, with their total', async () => {
		const { base } = await manyUsers({ users: 6, turns: 3 });
		const page = await base.listMessages({ userId: 'user-4', limit: 4 });
		assert.equal(page.total, 6);
		assert.equal(page.nextOffset, 4);
		assert.ok(page.messages.every((m) => m.user_id === 'user-4'));
		const rest = await base.listMessages({ userId: 'user-4', offset: 4, limit: 4 });
		assert.deepEqual(
			[...page.messages, ...rest.messages].map((m) => `${m.session_id} ${m.seq}`),
			['chat-4-0 1', 'chat-4-0 2', 'chat-4-0 3', 'chat-4-0 4', 'chat-4-1 1', 'chat-4-1 2'],
		);
		assert.equal(rest.nextOffset, null);
		assert.equal((await base.listMessages({ userId: 'nobody' })).total, 0);
	});
});
