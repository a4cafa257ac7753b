// Flat capture: a capture writes a bounded log whatever is pending (older messages go to write-once
// blocks first), returns the IDs it stored and keeps the caller's role and metadata, which search
// returns; a sync merges processed blocks; whole-conversation delete, export and import include captures.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	captureLogKey,
	clearDocumentCache,
	ConversationExistsError,
	ConversationMemory,
	deleteConversationMemory,
	exportConversation,
	importConversation,
	InvalidExportError,
	InvalidInputError,
	LocalDiskStorage,
	MemoryBase,
	SEAL_AT,
} from '../../../src/internal';
import type { MemoryStorage, SessionLog } from '../../../src/internal';
import { TestEmbedder } from '../../support/embeddings';
import { InstrumentedStorage, tempDir } from '../../support/storages';

function setup(threshold = 1_000_000) {
	const root = tempDir('capture');
	const storage = new InstrumentedStorage(new LocalDiskStorage({ root }));
	const embedder = new TestEmbedder();
	const base = new MemoryBase({ storage, baseId: 'wf', embedder, threshold });
	return { root, storage, embedder, base };
}

async function logOf(
	storage: MemoryStorage,
	sessionId: string,
	baseId = 'wf',
): Promise<SessionLog> {
	const got = await storage.get(captureLogKey(baseId, sessionId));
	assert.ok(got);
	return JSON.parse(Buffer.from(got.body).toString('utf8')) as SessionLog;
}

const sealedFiles = (root: string, sessionId: string) => {
	try {
		return readdirSync(path.join(root, 'memory_base/wf/sessions', sessionId, 'sealed'));
	} catch {
		return [];
	}
};

describe('flat capture', () => {
	it('a capture writes at most SEAL_AT messages of log, whatever is pending: the rest goes to blocks', async () => {
		const { base, storage, root } = setup();
		const written: number[] = [];
		const put = storage.put.bind(storage);
		storage.put = async (key, body, options) => {
			if (key.endsWith('/log.json')) written.push(body.byteLength);
			return put(key, body, options);
		};
		for (let i = 0; i < 10 * SEAL_AT; i++)
			await base.capture({ sessionId: 's', runId: `r${i}`, texts: [`note ${i}`] });
		const log = await logOf(storage, 's');
		assert.ok(log.messages.length <= SEAL_AT);
		assert.equal(log.next_seq - 1, 10 * SEAL_AT);
		assert.equal(log.cursor, 0, 'all pending');
		assert.equal(log.sealed.length, sealedFiles(root, 's').length);
		assert.ok(log.sealed.length >= 9);
		// The log write stays bounded: the largest of the last SEAL_AT writes is about as large as the
		// largest after two blocks (only a block reference per SEAL_AT messages is added).
		const early = Math.max(...written.slice(2 * SEAL_AT, 3 * SEAL_AT));
		const late = Math.max(...written.slice(-SEAL_AT));
		assert.ok(late < 1.3 * early, `${late} bytes at the end vs ${early} after two blocks`);
		// Every pending message is still there, in order, across blocks and log.
		const exported = (await base.exportSession('s')) ?? [];
		assert.deepEqual(
			exported.map((m) => m.text),
			Array.from({ length: 10 * SEAL_AT }, (_, i) => `note ${i}`),
		);
	});

	it('returns the IDs it stored; keeps role and metadata, which search returns', async () => {
		const { base } = setup(2);
		const r = await base.capture({
			sessionId: 'alice',
			runId: 'exec-1',
			texts: ['plain output'],
			messages: [
				{ text: 'My order number is 4471', role: 'user', metadata: { messageId: 'm-1:user' } },
				{ text: '   ', role: 'assistant' },
			],
		});
		assert.equal(r.captured, 2);
		assert.equal(r.ids.length, 2);
		assert.equal(r.sync?.messages, 2, 'threshold 2 reached');
		const [hit] = await base.search('order number 4471', { k: 1, sessionId: 'alice' });
		assert.equal(hit.text, 'My order number is 4471');
		assert.equal(hit.role, 'user');
		assert.deepEqual(hit.metadata, { messageId: 'm-1:user' });
		assert.equal(hit.messageId, r.ids[1]);
		const again = await base.capture({
			sessionId: 'alice',
			runId: 'exec-1',
			texts: ['plain output'],
			messages: [
				{ text: 'My order number is 4471', role: 'user', metadata: { messageId: 'm-1:user' } },
			],
		});
		assert.deepEqual([again.captured, again.ids], [0, []], 'a retried run stores nothing');
	});

	it('refuses bad messages and metadata before writing anything', async () => {
		const { base, storage } = setup();
		const bad = [
			{ texts: [1] },
			{ messages: 'x' },
			{ messages: [{ text: 5 }] },
			{ messages: [{ text: 'x', role: 7 }] },
			{ messages: [{ text: 'x', metadata: [] }] },
			{ messages: [{ text: 'x', metadata: { big: 'y'.repeat(5000) } }] },
		];
		for (const b of bad)
			await assert.rejects(
				base.capture({ sessionId: 's', runId: 'r', ...(b as object) }),
				InvalidInputError,
				JSON.stringify(b).slice(0, 60),
			);
		assert.equal(storage.calls.put, 0);
	});

	it('a sync merges the processed blocks and inline messages into one block', async () => {
		const { base, storage, root } = setup();
		for (let i = 0; i < 3 * SEAL_AT + 5; i++)
			await base.capture({ sessionId: 's', runId: `r${i}`, texts: [`fact ${i}`] });
		assert.equal((await logOf(storage, 's')).sealed.length, 3);
		const synced = await base.sync({ sessionId: 's' });
		assert.equal(synced.messages, 3 * SEAL_AT + 5);
		const log = await logOf(storage, 's');
		assert.deepEqual([log.sealed.length, log.messages.length, log.cursor], [1, 0, 3 * SEAL_AT + 5]);
		assert.deepEqual(
			sealedFiles(root, 's'),
			[path.basename(log.sealed[0].key)],
			'replaced blocks deleted',
		);
		assert.equal((await base.exportSession('s'))?.length, 3 * SEAL_AT + 5);
	});

	it('a reader holding a log read before a merge finds the merged block (one re-read), never an error', async () => {
		const { base, storage } = setup();
		for (let i = 0; i < 2 * SEAL_AT + 3; i++)
			await base.capture({ sessionId: 's', runId: `r${i}`, texts: [`fact ${i}`] });
		clearDocumentCache(); // the blocks are read from storage, not this process's copies
		// Export reads the log, then the blocks: let a sync merge them in between.
		const get = storage.get.bind(storage) as MemoryStorage['get'];
		let merged = false;
		storage.get = (async (key: string, options?: object) => {
			if (key.includes('/sealed/') && !merged) {
				merged = true;
				await base.sync({ sessionId: 's' });
			}
			return get(key, options ?? {});
		}) as MemoryStorage['get'];
		const all = await base.exportSession('s');
		assert.ok(merged);
		assert.equal(all?.length, 2 * SEAL_AT + 3);
	});
});

describe('whole conversations include their Memory Base captures', () => {
	async function conversation(storage: MemoryStorage) {
		const memory = new ConversationMemory('wf', 'c', {
			storage,
			tokenCounter: { encoding: 'utf8-bytes', count: (t) => Buffer.byteLength(t) },
		});
		await memory.addMessages({ userContent: 'My order is 4471', assistantContent: 'Noted' });
		await memory.flush();
		const base = new MemoryBase({ storage, baseId: 'wf', embedder: new TestEmbedder() });
		await base.capture({
			sessionId: 'c',
			runId: 'r1',
			messages: [{ text: 'My order is 4471', role: 'user', metadata: { messageId: 'x' } }],
		});
		const other = new MemoryBase({ storage, baseId: 'shared', embedder: new TestEmbedder() });
		await other.capture({ sessionId: 'c', runId: 'r1', texts: ['kept in a shared base'] });
		return { base, other };
	}

	it('delete: chat memory and the captures in the workflow’s base (and named bases) go; nothing of it stays', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('whole') });
		const { base, other } = await conversation(storage);
		const deleted = await deleteConversationMemory(storage, 'wf', 'c');
		assert.ok(deleted.some((k) => k === captureLogKey('wf', 'c')));
		assert.equal(await base.captured('c'), 0);
		assert.equal(await other.captured('c'), 1, 'a base not named is left alone');
		await deleteConversationMemory(storage, 'wf', 'c', { memoryBaseIds: ['shared'] });
		assert.equal(await other.captured('c'), 0);
		const left = (await storage.list(''))
			.map((o) => o.key)
			.filter((k) => k.includes('/c/') || k.includes('/c.'));
		assert.deepEqual(left, []);
	});

	it('export carries the captures (role, metadata, IDs); import restores them, pending; overwrite replaces', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('whole') });
		const { base } = await conversation(storage);
		const value = await exportConversation(storage, 'wf', 'c');
		assert.equal(value.memoryBase?.length, 1);
		assert.equal(value.memoryBase?.[0].messages[0].role, 'user');
		const target = new LocalDiskStorage({ root: tempDir('whole-target') });
		const result = await importConversation(target, 'wf', value);
		assert.equal(result.captures, 1);
		const restored = new MemoryBase({
			storage: target,
			baseId: 'wf',
			embedder: new TestEmbedder(),
		});
		const [original] = (await base.exportSession('c')) ?? [];
		const [copy] = (await restored.exportSession('c')) ?? [];
		assert.deepEqual(copy, original);
		assert.equal((await restored.status({ sessionId: 'c' })).sessions[0].pending, 1);
		await assert.rejects(importConversation(target, 'wf', value), ConversationExistsError);
		await importConversation(target, 'wf', value, { overwrite: true });
		assert.equal(await restored.captured('c'), 1);
		const broken = structuredClone(value);
		(broken.memoryBase as Array<{ messages: Array<{ seq: number }> }>)[0].messages[0].seq = 7;
		await assert.rejects(
			importConversation(new LocalDiskStorage({ root: tempDir('whole-x') }), 'wf', broken),
			(e: unknown) =>
				e instanceof InvalidExportError && e.path.startsWith('memoryBase[0].messages'),
		);
	});

	it('a conversation without captures exports as before (no memoryBase field)', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('whole') });
		const memory = new ConversationMemory('wf', 'plain', {
			storage,
			tokenCounter: { encoding: 'utf8-bytes', count: (t) => Buffer.byteLength(t) },
		});
		await memory.addMessages({ userContent: 'hi', assistantContent: 'hello' });
		await memory.flush();
		const value = await exportConversation(storage, 'wf', 'plain');
		assert.deepEqual(Object.keys(value), [
			'format',
			'version',
			'conversationId',
			'memory',
			'versionedData',
		]);
	});
});
