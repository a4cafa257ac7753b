// What the Forget User tests plant: Alice's secret in chat memory (two workflows, shared and node
// memory), a copied file, versioned data and two Memory Bases; Bob's in his own conversation.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';

import { ConversationMemory, MemoryBase, NodeMemory, VersionedData } from '../../src/internal';
import type { MemoryStorage } from '../../src/internal';
import { TestEmbedder } from './embeddings';
import { localFile } from './fixtures';
import { expanded } from './stored-segments';

export const ALICE = 'Alice-Secret-4417';
export const BOB = 'Bob-Secret-9902';

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
	const runId = `${sessionId}-${randomBytes(4).toString('hex')}`;
	await base.capture({ sessionId, runId, texts: [text], userId });
	await base.sync({ sessionId });
}

/** Alice in sessions a1 (workflows wfA and wfB, base wfA) and a2 (base other); Bob in b1. */
export async function plant(storage: MemoryStorage): Promise<void> {
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

/** Bob's chat still reads, and his capture is still found. */
export async function bobIntact(storage: MemoryStorage): Promise<void> {
	const h = await new ConversationMemory('wfA', 'b1', { storage }).getHistoryPromptMessages({});
	assert.match(String(h.messages[0].content), new RegExp(BOB));
	const base = new MemoryBase({ storage, baseId: 'wfA', embedder: new TestEmbedder() });
	assert.match(JSON.stringify(await base.search('code', { allUsers: true })), new RegExp(BOB));
}

/** Whether any stored object (read raw, as the bucket owner would) holds the secret. */
/**
 * Every object under `prefix` as it is read through `storage` (decrypted when it is an encrypting
 * one), gzipped objects unzipped: what a byte scan must look into.
 */
export async function storedObjects(storage: MemoryStorage, prefix: string): Promise<Buffer[]> {
	const out: Buffer[] = [];
	for (const o of await storage.list(prefix)) {
		const got = await storage.get(o.key);
		if (!got) continue;
		const body = Buffer.from(got.body);
		out.push(expanded(body));
	}
	return out;
}

export async function storageHolds(raw: MemoryStorage, secret: string): Promise<boolean> {
	const needles = [secret, Buffer.from(secret).toString('base64')];
	for (const o of await raw.list('')) {
		const got = await raw.get(o.key);
		if (got && needles.some((n) => expanded(got.body).includes(n))) return true;
	}
	return false;
}
