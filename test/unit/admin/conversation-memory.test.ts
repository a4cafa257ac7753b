// Reading, clearing and listing memory the way the LLM Memory Manager does: the same keys as the nodes,
// pages that read only the sealed segments they cover, threads, and errors instead of empty pages.
import assert from 'node:assert/strict';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	clearMemory,
	ConversationMemory,
	CorruptDocumentError,
	InvalidIdError,
	InvalidOptionError,
	listConversations,
	memoryKeyOf,
	MessageNotFoundError,
	NodeMemory,
	readMessages,
	sealedPrefix,
} from '../../../src/internal';
import type { LocalDiskStorage } from '../../../src/internal';
import { InstrumentedStorage, tempDisk } from '../../support/storages';
import { MeteredStorage } from '../../support/wide-base';
import { contents, options, turns } from './support';

const positions = (page: { messages: Array<{ position: number }> }) =>
	page.messages.map((m) => m.position);

function age(disk: LocalDiskStorage, key: string, minutesAgo: number) {
	const t = new Date(Date.now() - minutesAgo * 60_000);
	utimesSync(path.join(disk.root, ...key.split('/')), t, t);
}

describe('memoryKeyOf', () => {
	it('addresses the very documents ConversationMemory and NodeMemory use', () => {
		const storage = tempDisk();
		assert.equal(
			memoryKeyOf({ appId: 'wf', conversationId: 'c1' }),
			new ConversationMemory('wf', 'c1', { storage }).key,
		);
		assert.equal(
			memoryKeyOf({ appId: 'wf', conversationId: 'c1', nodeId: 'n1', keyPrefix: 't' }),
			new NodeMemory('wf', 'c1', 'n1', { storage, keyPrefix: 't' }).key,
		);
		assert.throws(() => memoryKeyOf({ appId: 'wf', conversationId: '../x' }), InvalidIdError);
	});
});

describe('readMessages', () => {
	it('pages through every stored message in storage order, sealed segments included', async () => {
		const disk = tempDisk();
		const m = await turns(disk, 10);
		const key = memoryKeyOf({ appId: 'wf', conversationId: 'c1' });
		assert.ok((await disk.list(sealedPrefix(key))).length > 0, 'the conversation is sealed');
		const all = (await m.messages()).map((x) => x.content);
		const address = { appId: 'wf', conversationId: 'c1' };
		const whole = await readMessages(disk, address);
		assert.deepEqual(contents(whole), all);
		assert.equal(whole.total, 20);
		assert.equal(whole.exists, true);
		assert.equal(whole.nextOffset, null);

		const pages: string[] = [];
		let offset: number | null = 0;
		while (offset !== null) {
			const page = await readMessages(disk, address, { offset, limit: 3 });
			assert.deepEqual(
				positions(page),
				[offset, offset + 1, offset + 2].filter((p) => p < 20),
			);
			pages.push(...contents(page));
			offset = page.nextOffset;
		}
		assert.deepEqual(pages, all);

		const newest = await readMessages(disk, address, { limit: 4, newestFirst: true });
		assert.deepEqual(contents(newest), ['a9', 'q9', 'a8', 'q8']);
		assert.deepEqual(positions(newest), [19, 18, 17, 16]);
		assert.equal(newest.nextOffset, 4);
		const oldest = await readMessages(disk, address, { offset: 18, limit: 4, newestFirst: true });
		assert.deepEqual(contents(oldest), ['q0', 'a0'].reverse());
		assert.equal(oldest.nextOffset, null);
		assert.deepEqual(contents(await readMessages(disk, address, { offset: 25 })), []);
	});

	it('a page in the middle loads only the segments that hold it', async () => {
		const disk = tempDisk();
		await turns(disk, 20);
		const counted = new InstrumentedStorage(disk);
		const page = await readMessages(
			counted,
			{ appId: 'wf', conversationId: 'c1' },
			{ offset: 2, limit: 2 },
		);
		assert.deepEqual(contents(page), ['q1', 'a1']);
		const all = new InstrumentedStorage(disk);
		await readMessages(all, { appId: 'wf', conversationId: 'c1' });
		assert.ok(
			counted.calls.get < all.calls.get,
			`a page read ${counted.calls.get} objects, the whole conversation ${all.calls.get}`,
		);
	});

	it('node mode reads one node’s own document', async () => {
		const disk = tempDisk();
		await turns(disk, 2, 'c1', 'node-a');
		await turns(disk, 1, 'c1', 'node-b');
		await turns(disk, 1);
		const page = await readMessages(disk, { appId: 'wf', conversationId: 'c1', nodeId: 'node-b' });
		assert.deepEqual(contents(page), ['q0', 'a0']);
		assert.equal(page.key, 'node_memory/wf/c1/node-b.json');
	});

	it('threadOf: the thread ending at a message, root first, across a regenerated branch', async () => {
		const disk = tempDisk();
		const m = await turns(disk, 6);
		await m.addMessages({
			messageId: 'r',
			parentMessageId: 't1',
			userContent: 'q2 again',
			assistantContent: 'a2 again',
		});
		await m.flush();
		const address = { appId: 'wf', conversationId: 'c1' };
		const thread = await readMessages(disk, address, { threadOf: 'r' });
		assert.deepEqual(contents(thread), ['q0', 'a0', 'q1', 'a1', 'q2 again', 'a2 again']);
		assert.deepEqual(positions(thread), [0, 1, 2, 3, 4, 5]);
		assert.equal(thread.total, 6);
		const last = await readMessages(disk, address, { threadOf: 'r', newestFirst: true, limit: 2 });
		assert.deepEqual(contents(last), ['a2 again', 'q2 again']);
		assert.equal(last.nextOffset, 2);
		assert.deepEqual(contents(await readMessages(disk, address, { threadOf: 't5', offset: 10 })), [
			'q5',
			'a5',
		]);
		await assert.rejects(readMessages(disk, address, { threadOf: 'nope' }), MessageNotFoundError);
		await assert.rejects(
			readMessages(disk, { appId: 'wf', conversationId: 'empty' }, { threadOf: 't0' }),
			/Message ID "t0" was not found in memory "conversation_memory\/wf\/empty.json"/,
		);
	});

	it('a missing memory is an empty page; an unreadable one is an error, never empty', async () => {
		const disk = tempDisk();
		const empty = await readMessages(disk, { appId: 'wf', conversationId: 'none' });
		assert.deepEqual(empty, {
			key: 'conversation_memory/wf/none.json',
			exists: false,
			total: 0,
			messages: [],
			nextOffset: null,
		});
		const file = path.join(disk.root, 'conversation_memory/wf/broken.json');
		mkdirSync(path.dirname(file), { recursive: true });
		writeFileSync(file, '{"version":1,"messages":[{"oops":true}]}');
		await assert.rejects(
			readMessages(disk, { appId: 'wf', conversationId: 'broken' }),
			CorruptDocumentError,
		);
	});

	it('refuses unusable offsets, limits and IDs by name', async () => {
		const disk = tempDisk();
		const address = { appId: 'wf', conversationId: 'c1' };
		for (const bad of [{ offset: -1 }, { offset: 1.5 }, { limit: 0 }, { limit: Number.NaN }])
			await assert.rejects(readMessages(disk, address, bad), InvalidOptionError);
		await assert.rejects(readMessages(disk, address, { threadOf: 'a/b' }), InvalidIdError);
		await assert.rejects(
			readMessages(disk, { appId: 'wf', conversationId: 'c1', nodeId: '..' }),
			InvalidIdError,
		);
	});
});

describe('clearMemory', () => {
	it('deletes one node’s memory with its sealed segments; the conversation’s other memories stay', async () => {
		const disk = tempDisk();
		await turns(disk, 10, 'c1', 'node-a');
		await turns(disk, 1, 'c1', 'node-b');
		await turns(disk, 1);
		const address = { appId: 'wf', conversationId: 'c1', nodeId: 'node-a' };
		const key = memoryKeyOf(address);
		assert.ok((await disk.list(sealedPrefix(key))).length > 0);
		assert.deepEqual(await clearMemory(disk, address), { key, existed: true });
		assert.equal(await disk.get(key), null);
		assert.deepEqual(await disk.list(sealedPrefix(key)), []);
		assert.equal((await readMessages(disk, { ...address, nodeId: 'node-b' })).total, 2);
		assert.equal((await readMessages(disk, { appId: 'wf', conversationId: 'c1' })).total, 2);
		assert.deepEqual(await clearMemory(disk, address), { key, existed: false });
	});

	it('conversation mode clears the shared document only', async () => {
		const disk = tempDisk();
		await turns(disk, 1);
		await turns(disk, 1, 'c1', 'node-a');
		const cleared = await clearMemory(disk, { appId: 'wf', conversationId: 'c1' });
		assert.deepEqual(cleared, { key: 'conversation_memory/wf/c1.json', existed: true });
		assert.equal(
			(await readMessages(disk, { appId: 'wf', conversationId: 'c1', nodeId: 'node-a' })).total,
			2,
		);
	});
});

describe('listConversations', () => {
	it('one summary per conversation, the most recently written first, paged', async () => {
		const disk = tempDisk();
		await turns(disk, 1, 'old');
		await turns(disk, 1, 'mid', 'node-b');
		await turns(disk, 1, 'mid', 'node-a');
		await turns(disk, 1, 'new');
		const other = new ConversationMemory('other-wf', 'x', options(disk));
		await other.addMessages({ userContent: 'q', assistantContent: 'a' });
		await other.flush();
		age(disk, 'conversation_memory/wf/old.json', 30);
		age(disk, 'node_memory/wf/mid/node-a.json', 20);
		age(disk, 'node_memory/wf/mid/node-b.json', 20);
		age(disk, 'conversation_memory/wf/new.json', 10);
		const all = await listConversations(disk, 'wf');
		assert.equal(all.total, 3);
		assert.equal(all.nextOffset, null);
		assert.deepEqual(
			all.conversations.map((c) => [c.conversationId, c.conversationMemory, c.nodeIds, c.files]),
			[
				['new', true, [], 0],
				['mid', false, ['node-a', 'node-b'], 0],
				['old', true, [], 0],
			],
		);
		assert.ok(all.conversations.every((c) => c.objects >= 1 && c.bytes > 0));
		const first = await listConversations(disk, 'wf', { limit: 2 });
		assert.deepEqual(
			first.conversations.map((c) => c.conversationId),
			['new', 'mid'],
		);
		assert.equal(first.nextOffset, 2);
		const second = await listConversations(disk, 'wf', { limit: 2, offset: 2 });
		assert.deepEqual(
			second.conversations.map((c) => c.conversationId),
			['old'],
		);
		assert.equal(second.nextOffset, null);
		assert.deepEqual((await listConversations(disk, 'nothing-here')).conversations, []);
		await assert.rejects(listConversations(disk, ''), InvalidIdError);
		// The workflow's folders are read page by page, none listed whole.
		const metered = new MeteredStorage(disk);
		assert.deepEqual(await listConversations(metered, 'wf'), all);
		assert.deepEqual(metered.listed, []);
		assert.ok(metered.paged.includes('conversation_memory/wf/'), metered.paged.join(', '));
	});
});
