// Forget User: a user's secret planted in chat memory (two workflows, shared and node memory), a copied
// file, versioned data and two Memory Bases is gone from every stored byte afterwards, plain or
// encrypted; another user's memory stays; a run that stops midway is finished by the next one.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	ConversationMemory,
	EncryptedStorage,
	forgetUser,
	InvalidInputError,
	LocalDiskStorage,
	MemoryBase,
	NodeMemory,
	parseEncryptionKey,
	StorageError,
	VersionedData,
} from '../../../src';
import type { MemoryStorage } from '../../../src';
import { TestEmbedder } from '../../support/embeddings';
import { localFile } from '../../support/fixtures';
import { tempDir } from '../../support/storages';

const ALICE = 'Alice-Secret-4417';
const BOB = 'Bob-Secret-9902';

function allBytes(root: string): Buffer[] {
	return readdirSync(root, { recursive: true, encoding: 'utf8' })
		.map((f) => path.join(root, f))
		.filter((f) => statSync(f).isFile())
		.map((f) => readFileSync(f));
}
const holds = (root: string, secret: string) =>
	allBytes(root).some(
		(b) => b.includes(secret) || b.includes(Buffer.from(secret).toString('base64')),
	);

async function say(memory: ConversationMemory | NodeMemory, text: string, file = false) {
	await memory.addMessages({
		userContent: text,
		userFiles: file ? [localFile('note.txt', 'text/plain', Buffer.from(`file: ${text}`))] : [],
		assistantContent: `noted: ${text}`,
	});
	await memory.flush();
}

async function capture(
	storage: MemoryStorage,
	baseId: string,
	sessionId: string,
	userId: string,
	text: string,
) {
	const base = new MemoryBase({ storage, baseId, embedder: new TestEmbedder(), threshold: 1 });
	await base.capture({
		sessionId,
		runId: `${sessionId}-${randomBytes(4).toString('hex')}`,
		texts: [text],
		userId,
	});
	await base.sync({ sessionId });
	return base;
}

/** Alice in sessions a1 (workflows wfA and wfB, base wfA) and a2 (base other); Bob in b1. */
async function plant(storage: MemoryStorage) {
	await say(new ConversationMemory('wfA', 'a1', { storage }), `my code is ${ALICE}`, true);
	await say(new NodeMemory('wfA', 'a1', 'node-x', { storage }), `again ${ALICE}`);
	await say(new ConversationMemory('wfB', 'a1', { storage }), `in B ${ALICE}`);
	await new VersionedData({ storage, appId: 'wfA', conversationId: 'a1' }).saveVersion({
		data: { secret: ALICE },
		summary: 'set',
	});
	await capture(storage, 'wfA', 'a1', 'alice', `the code is ${ALICE}`);
	await capture(storage, 'other', 'a2', 'alice', `remember ${ALICE}`);
	await say(new ConversationMemory('wfA', 'b1', { storage }), `bob says ${BOB}`);
	await capture(storage, 'wfA', 'b1', 'bob', `bob's code is ${BOB}`);
}

async function bobIntact(storage: MemoryStorage) {
	const h = await new ConversationMemory('wfA', 'b1', { storage }).getHistoryPromptMessages({});
	assert.match(String(h.messages[0].content), new RegExp(BOB));
	const base = new MemoryBase({ storage, baseId: 'wfA', embedder: new TestEmbedder() });
	assert.match(JSON.stringify(await base.search('code', { allUsers: true })), new RegExp(BOB));
}

describe('Forget User', () => {
	for (const encrypted of [false, true])
		it(`deletes every byte of a user's memory, ${encrypted ? 'encrypted' : 'plain'}; others stay; a second run finds nothing`, async () => {
			const root = tempDir('forget');
			const disk = new LocalDiskStorage({ root });
			const storage = encrypted
				? new EncryptedStorage(disk, {
						current: parseEncryptionKey(randomBytes(32).toString('hex')),
					})
				: disk;
			await plant(storage);
			if (!encrypted) assert.ok(holds(root, ALICE), 'the secret was planted in clear');
			const r = await forgetUser(storage, { userId: 'alice' });
			assert.deepEqual(r.conversationIds, ['a1', 'a2']);
			assert.equal(r.workflows, 2);
			assert.ok(r.counts.chatMemory >= 3 && r.counts.files >= 1 && r.counts.versionedData >= 1);
			assert.ok(r.counts.memoryBase >= 2, JSON.stringify(r.counts));
			assert.ok(!holds(root, ALICE), 'no byte holds the secret');
			if (!encrypted) assert.ok(holds(root, BOB));
			await bobIntact(storage);
			const again = await forgetUser(storage, { userId: 'alice' });
			assert.deepEqual([again.conversationIds, again.deleted], [[], []]);
		});

	it('by conversation: one conversation in every workflow and base', async () => {
		const root = tempDir('forget');
		const storage = new LocalDiskStorage({ root });
		await plant(storage);
		const r = await forgetUser(storage, { conversationId: 'b1' });
		assert.deepEqual(r.conversationIds, ['b1']);
		assert.ok(!holds(root, BOB));
		assert.ok(holds(root, ALICE));
	});

	it('a run that stops midway is finished by the next run', async () => {
		const root = tempDir('forget');
		const disk = new LocalDiskStorage({ root });
		await plant(disk);
		let deletes = 0;
		const failing: MemoryStorage = Object.assign(Object.create(disk), {
			delete: async (key: string, options?: object) => {
				if (++deletes === 6) throw new StorageError('simulated crash while deleting', key);
				return disk.delete(key, options as never);
			},
		});
		await assert.rejects(forgetUser(failing, { userId: 'alice' }), StorageError);
		assert.ok(holds(root, ALICE), 'the crash left some of it');
		const r = await forgetUser(disk, { userId: 'alice' });
		assert.deepEqual(r.conversationIds, ['a1', 'a2']);
		assert.ok(!holds(root, ALICE));
		assert.deepEqual((await forgetUser(disk, { userId: 'alice' })).deleted, []);
	});

	it('refuses no target, and IDs of the wrong shape, by name', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('forget') });
		await assert.rejects(forgetUser(storage, {}), InvalidInputError);
		await assert.rejects(forgetUser(storage, { userId: '../x' }), /user_id/);
		await assert.rejects(forgetUser(storage, { conversationId: 7 as never }), /conversation_id/);
	});
});
