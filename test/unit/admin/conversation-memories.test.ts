// Every memory of one conversation at once, as the LLM Memory Manager's "All of This Conversation"
// reads and clears it: the shared memory and each node's, from one listing; whether the conversation
// exists at all; and the nodes that keep memory in a workflow.
import assert from 'node:assert/strict';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	clearConversationMemories,
	CorruptDocumentError,
	InvalidIdError,
	listConversationMemories,
	listNodesWithMemory,
	MessageNotFoundError,
	readConversationMemories,
	readMessages,
	sealedPrefix,
	VersionedData,
} from '../../../src/internal';
import type { LocalDiskStorage, MemoryStorage } from '../../../src/internal';
import { InstrumentedStorage, tempDisk } from '../../support/storages';
import { contents, turns } from './support';

/** c1: shared memory (2 turns), node-b (1 turn), node-a (10 turns, sealed); c10 and wf2 beside it. */
async function conversation(disk: MemoryStorage) {
	await turns(disk, 2);
	await turns(disk, 1, 'c1', 'node-b');
	await turns(disk, 10, 'c1', 'node-a');
	await turns(disk, 1, 'c10', 'node-a');
	await turns(disk, 1, 'c10');
}

const summary = (memories: Array<{ memory: string; nodeId?: string; key: string }>) =>
	memories.map((m) => [m.memory, m.nodeId ?? null, m.key]);

const C1 = [
	['conversation', null, 'conversation_memory/wf/c1.json'],
	['node', 'node-a', 'node_memory/wf/c1/node-a.json'],
	['node', 'node-b', 'node_memory/wf/c1/node-b.json'],
];

function age(disk: LocalDiskStorage, key: string, minutesAgo: number) {
	const t = new Date(Date.now() - minutesAgo * 60_000);
	utimesSync(path.join(disk.root, ...key.split('/')), t, t);
}

describe('listConversationMemories', () => {
	it('the shared memory first, then each node’s by ID, from one listing; nothing is read', async () => {
		const disk = tempDisk();
		await conversation(disk);
		const counted = new InstrumentedStorage(disk);
		const listed = await listConversationMemories(counted, 'wf', 'c1');
		assert.equal(listed.exists, true);
		assert.deepEqual(summary(listed.memories), C1);
		assert.deepEqual(listed.memories[1].address, {
			appId: 'wf',
			conversationId: 'c1',
			keyPrefix: undefined,
			nodeId: 'node-a',
		});
		assert.ok(listed.memories.every((m) => m.size > 0 && m.messages === undefined));
		assert.equal(counted.calls.get, 0, 'a listing only');
		const counts = await listConversationMemories(disk, 'wf', 'c1', { counts: true });
		assert.deepEqual(
			counts.memories.map((m) => m.messages),
			[4, 20, 2],
		);
	});

	it('a conversation with nothing stored does not exist; one with only versioned data does', async () => {
		const disk = tempDisk();
		await conversation(disk);
		assert.deepEqual(await listConversationMemories(disk, 'wf', 'nobody'), {
			exists: false,
			memories: [],
		});
		await new VersionedData({ storage: disk, appId: 'wf', conversationId: 'data' }).saveVersion({
			data: { a: 1 },
			summary: 'Initial data',
		});
		assert.deepEqual(await listConversationMemories(disk, 'wf', 'data'), {
			exists: true,
			memories: [],
		});
		assert.deepEqual(
			summary((await listConversationMemories(disk, 'wf', 'c10')).memories),
			[
				['conversation', null, 'conversation_memory/wf/c10.json'],
				['node', 'node-a', 'node_memory/wf/c10/node-a.json'],
			],
			'c1 and c10 stay apart',
		);
		await assert.rejects(listConversationMemories(disk, 'wf', '../c1'), InvalidIdError);
	});

	it('keeps to its key prefix', async () => {
		const disk = tempDisk();
		await turns(disk, 1);
		assert.equal(
			(await listConversationMemories(disk, 'wf', 'c1', { keyPrefix: 't/' })).exists,
			false,
		);
	});
});

describe('readConversationMemories', () => {
	it('reads the same page of every memory, each named by its scope and node', async () => {
		const disk = tempDisk();
		await conversation(disk);
		const all = await readConversationMemories(disk, 'wf', 'c1');
		assert.equal(all.exists, true);
		assert.deepEqual(
			all.memories.map((m) => [m.memory, m.nodeId ?? null, m.total, contents(m).length]),
			[
				['conversation', null, 4, 4],
				['node', 'node-a', 20, 20],
				['node', 'node-b', 2, 2],
			],
		);
		assert.deepEqual(contents(all.memories[2]), ['q0', 'a0']);
		assert.equal(all.memories[1].key, 'node_memory/wf/c1/node-a.json');
		const newest = await readConversationMemories(disk, 'wf', 'c1', {
			limit: 2,
			newestFirst: true,
		});
		assert.deepEqual(newest.memories.map(contents), [
			['a1', 'q1'],
			['a9', 'q9'],
			['a0', 'q0'],
		]);
		assert.deepEqual(
			newest.memories.map((m) => m.nextOffset),
			[2, 2, null],
		);
		const node = await readMessages(disk, { appId: 'wf', conversationId: 'c1', nodeId: 'node-a' });
		assert.deepEqual(contents(all.memories[1]), contents(node), 'as readMessages reads one');
	});

	it('a thread: only the memories holding its last message; none holding it is an error', async () => {
		const disk = tempDisk();
		await conversation(disk);
		const thread = await readConversationMemories(disk, 'wf', 'c1', { threadOf: 't5' });
		assert.deepEqual(
			thread.memories.map((m) => [m.nodeId, contents(m).length]),
			[['node-a', 12]],
		);
		const both = await readConversationMemories(disk, 'wf', 'c1', { threadOf: 't0' });
		assert.equal(both.memories.length, 3, 't0 is in every memory');
		await assert.rejects(
			readConversationMemories(disk, 'wf', 'c1', { threadOf: 'nope' }),
			(e: Error) =>
				e instanceof MessageNotFoundError &&
				e.message ===
					'Message ID "nope" was not found in memory "conversation_memory/wf/c1.json, node_memory/wf/c1/node-a.json, node_memory/wf/c1/node-b.json"',
		);
		await assert.rejects(
			readConversationMemories(disk, 'wf', 'nobody', { threadOf: 't0' }),
			/Message ID "t0" was not found in memory "conversation_memory\/wf\/nobody.json"/,
		);
		await assert.rejects(
			readConversationMemories(disk, 'wf', 'c1', { threadOf: 'a/b' }),
			InvalidIdError,
		);
	});

	it('no memory is an empty list; an unreadable memory is an error, never left out', async () => {
		const disk = tempDisk();
		assert.deepEqual(await readConversationMemories(disk, 'wf', 'nobody'), {
			exists: false,
			memories: [],
		});
		await turns(disk, 1, 'c1', 'node-a');
		const file = path.join(disk.root, 'conversation_memory/wf/c1.json');
		mkdirSync(path.dirname(file), { recursive: true });
		writeFileSync(file, '{"version":1');
		await assert.rejects(readConversationMemories(disk, 'wf', 'c1'), CorruptDocumentError);
	});
});

describe('clearConversationMemories', () => {
	it('deletes every memory of the conversation with its sealed segments; the rest stays', async () => {
		const disk = tempDisk();
		await conversation(disk);
		await disk.put('memory_files/wf/c1/abc', new Uint8Array([1]));
		const nodeA = 'node_memory/wf/c1/node-a.json';
		assert.ok((await disk.list(sealedPrefix(nodeA))).length > 0, 'node-a is sealed');
		const { exists, cleared } = await clearConversationMemories(disk, 'wf', 'c1');
		assert.equal(exists, true);
		assert.deepEqual(
			cleared.map((c) => [c.memory, c.nodeId ?? null, c.key]),
			C1,
		);
		assert.ok(cleared.every((c) => c.existed));
		assert.deepEqual(await disk.list(sealedPrefix(nodeA)), []);
		const after = await listConversationMemories(disk, 'wf', 'c1');
		assert.deepEqual(after, { exists: true, memories: [] }, 'the copied file stays');
		assert.equal((await readConversationMemories(disk, 'wf', 'c10')).memories.length, 2);
		assert.deepEqual(await clearConversationMemories(disk, 'wf', 'c1'), {
			exists: true,
			cleared: [],
		});
		assert.deepEqual(await clearConversationMemories(disk, 'wf', 'nobody'), {
			exists: false,
			cleared: [],
		});
	});
});

describe('listNodesWithMemory', () => {
	it('each node with Node-mode memory in a workflow, over its conversations, newest first', async () => {
		const disk = tempDisk();
		await conversation(disk);
		await turns(disk, 1, 'c2', 'node-c');
		age(disk, 'node_memory/wf/c1/node-a.json', 30);
		age(disk, 'node_memory/wf/c10/node-a.json', 20);
		age(disk, 'node_memory/wf/c1/node-b.json', 40);
		const nodes = await listNodesWithMemory(disk, 'wf');
		assert.deepEqual(
			nodes.map((n) => [n.nodeId, n.conversations]),
			[
				['node-c', 1],
				['node-a', 2],
				['node-b', 1],
			],
		);
		assert.ok(nodes[1].lastModified > nodes[2].lastModified);
		assert.deepEqual(await listNodesWithMemory(disk, 'other'), []);
		await assert.rejects(listNodesWithMemory(disk, ''), InvalidIdError);
	});
});
