// Export and import of one conversation's memory: every document (sealed segments folded in) and the
// files they reference, app-independent and deterministic; an import checks the whole export first.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	ConversationExistsError,
	ConversationMemory,
	CorruptDocumentError,
	exportConversationMemory,
	importConversationMemory,
	InvalidExportError,
	listConversationKeys,
	MEMORY_EXPORT_FORMAT,
	missingFilesOf,
	NodeMemory,
	NoMemoryStoredError,
	parseConversationMemoryExport,
	readMessages,
	sealedPrefix,
} from '../../../src/internal';
import type { ConversationMemoryExport, MemoryOptions, MemoryStorage } from '../../../src/internal';
import { tempDisk } from '../../support/storages';
import { SMALL } from '../store/support';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const PNG_SHA = createHash('sha256').update(PNG).digest('hex');
const counter = { encoding: 'utf8-bytes', count: (t: string) => Buffer.byteLength(t) };
const options = (storage: MemoryStorage): MemoryOptions => ({
	storage,
	tokenCounter: counter,
	log: SMALL,
});

/** A conversation with shared memory (long enough to be sealed, with an image) and two nodes' memories. */
async function conversation(storage: MemoryStorage, appId = 'wf-a', conversationId = 'c1') {
	const shared = new ConversationMemory(appId, conversationId, options(storage));
	for (let i = 0; i < 8; i++) {
		await shared.addMessages({
			userContent: `q${i}`,
			assistantContent: `a${i}`,
			...(i === 0
				? {
						userFiles: [
							{
								transferMethod: 'local_file' as const,
								data: PNG,
								mimeType: 'image/png',
								name: 'shot.png',
							},
						],
					}
				: {}),
		});
		await shared.flush();
	}
	for (const node of ['node-b', 'node-a']) {
		const m = new NodeMemory(appId, conversationId, node, options(storage));
		await m.addMessages({ userContent: `hi ${node}`, assistantContent: `hello from ${node}` });
		await m.flush();
	}
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

describe('exportConversationMemory', () => {
	it('exports every document whole (sealed ones folded in), nodes by ID, files by name, keys relative', async () => {
		const disk = tempDisk();
		await conversation(disk);
		assert.ok((await disk.list(sealedPrefix('conversation_memory/wf-a/c1.json'))).length > 0);
		const e = await exportConversationMemory(disk, 'wf-a', 'c1');
		assert.equal(e.format, MEMORY_EXPORT_FORMAT);
		assert.equal(e.version, 1);
		assert.equal(e.conversationId, 'c1');
		assert.equal(e.conversation?.version, 1);
		assert.equal(e.conversation?.messages.length, 16);
		assert.deepEqual(
			e.nodes.map((n) => [n.nodeId, n.memory.messages.length]),
			[
				['node-a', 2],
				['node-b', 2],
			],
		);
		assert.equal(e.conversation?.messages[0].files[0].key, PNG_SHA);
		assert.deepEqual(e.files, [{ name: PNG_SHA, data: PNG.toString('base64') }]);
		assert.deepEqual(missingFilesOf(e), []);
		assert.doesNotMatch(json(e), /wf-a/, 'nothing in the export names the workflow it came from');
		assert.equal(
			json(await exportConversationMemory(disk, 'wf-a', 'c1')),
			json(e),
			'deterministic',
		);
	});

	it('a conversation without memory is an error; a file that is gone is left out and reported', async () => {
		const disk = tempDisk();
		await assert.rejects(exportConversationMemory(disk, 'wf-a', 'none'), NoMemoryStoredError);
		await conversation(disk);
		await disk.delete(`memory_files/wf-a/c1/${PNG_SHA}`);
		const e = await exportConversationMemory(disk, 'wf-a', 'c1');
		assert.deepEqual(e.files, []);
		assert.deepEqual(missingFilesOf(e), [PNG_SHA]);
	});

	it('an unreadable document is an error naming it', async () => {
		const disk = tempDisk();
		await conversation(disk);
		writeFileSync(path.join(disk.root, 'node_memory/wf-a/c1/node-a.json'), 'not json');
		await assert.rejects(
			exportConversationMemory(disk, 'wf-a', 'c1'),
			(e: unknown) => e instanceof CorruptDocumentError && /node-a\.json/.test(e.message),
		);
	});
});

describe('importConversationMemory', () => {
	it('round trip into another workflow: same export bytes, same history, files rebased', async () => {
		const disk = tempDisk();
		await conversation(disk);
		const exported = json(await exportConversationMemory(disk, 'wf-a', 'c1'));
		const result = await importConversationMemory(disk, 'wf-b', Buffer.from(exported), {
			log: SMALL,
		});
		assert.deepEqual(result, {
			conversationId: 'c1',
			documents: [
				'conversation_memory/wf-b/c1.json',
				'node_memory/wf-b/c1/node-a.json',
				'node_memory/wf-b/c1/node-b.json',
			],
			messages: 20,
			files: 1,
			missingFiles: [],
			replaced: [],
		});
		assert.equal(json(await exportConversationMemory(disk, 'wf-b', 'c1')), exported);
		const history = await new ConversationMemory(
			'wf-b',
			'c1',
			options(disk),
		).getHistoryPromptMessages({
			messageLimit: 100,
			maxTokenLimit: 100_000,
		});
		assert.deepEqual(history.skippedFiles, []);
		assert.deepEqual((history.messages[0].content as Array<{ type: string }>)[0], {
			type: 'image_url',
			image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` },
		});
		const stored = (await readMessages(disk, { appId: 'wf-b', conversationId: 'c1' })).messages;
		assert.equal(stored[0].message.files[0].key, `memory_files/wf-b/c1/${PNG_SHA}`);
		assert.ok(
			(await disk.list(sealedPrefix('conversation_memory/wf-b/c1.json'))).length > 0,
			'a long conversation is stored sealed, as it was',
		);
	});

	it('into another conversation ID, from the parsed object', async () => {
		const disk = tempDisk();
		await conversation(disk);
		const e = await exportConversationMemory(disk, 'wf-a', 'c1');
		const r = await importConversationMemory(disk, 'wf-a', e, { conversationId: 'c2' });
		assert.equal(r.conversationId, 'c2');
		assert.equal((await readMessages(disk, { appId: 'wf-a', conversationId: 'c2' })).total, 16);
	});

	it('refuses a conversation that has memory, writing nothing; Overwrite replaces all of it', async () => {
		const disk = tempDisk();
		await conversation(disk);
		const e = await exportConversationMemory(disk, 'wf-a', 'c1');
		const target = new NodeMemory('wf-b', 'c1', 'node-z', options(disk));
		await target.addMessages({ userContent: 'mine', assistantContent: 'yours' });
		await target.flush();
		const before = (await listConversationKeys(disk, 'wf-b', 'c1')).map((o) => o.key);
		await assert.rejects(
			importConversationMemory(disk, 'wf-b', e),
			(error: unknown) =>
				error instanceof ConversationExistsError &&
				error.keys.join() === 'node_memory/wf-b/c1/node-z.json',
		);
		assert.deepEqual(
			(await listConversationKeys(disk, 'wf-b', 'c1')).map((o) => o.key),
			before,
			'nothing written',
		);
		const r = await importConversationMemory(disk, 'wf-b', e, { overwrite: true });
		assert.deepEqual(r.replaced, ['node_memory/wf-b/c1/node-z.json']);
		assert.equal(
			(await readMessages(disk, { appId: 'wf-b', conversationId: 'c1', nodeId: 'node-z' })).exists,
			false,
		);
		assert.equal(
			json(await exportConversationMemory(disk, 'wf-b', 'c1')),
			json(e),
			'the conversation is the export, nothing else',
		);
	});

	it('checks the whole export before writing anything', async () => {
		const disk = tempDisk();
		await conversation(disk);
		const good = await exportConversationMemory(disk, 'wf-a', 'c1');
		const variant = (change: (e: any) => void) => {
			const e = structuredClone(good) as any;
			change(e);
			return e;
		};
		const cases: Array<[string, unknown, RegExp]> = [
			['not JSON', '{"format"', /at \(root\): not JSON/],
			['an array', [], /at \(root\): must be an exported conversation memory, got an array/],
			['another format', variant((e) => (e.format = 'other')), /at format: must be/],
			['a newer version', variant((e) => (e.version = 2)), /at version: must be 1/],
			[
				'a bad conversation ID',
				variant((e) => (e.conversationId = 'a/b')),
				/at conversationId: .*"\/"/,
			],
			[
				'a message failing the schema',
				variant((e) => delete e.nodes[1].memory.messages[1].role),
				/at nodes\[1\]\.memory: schema check failed at messages\.1\.role/,
			],
			[
				'duplicate message IDs',
				variant(
					(e) => (e.conversation.messages[3].message_id = e.conversation.messages[2].message_id),
				),
				/at conversation: schema check failed .*duplicate message_id/,
			],
			[
				'a node twice',
				variant((e) => e.nodes.push(structuredClone(e.nodes[0]))),
				/at nodes\[2\]\.nodeId: "node-a" appears twice/,
			],
			[
				'a file key that is a path (another conversation’s file)',
				variant(
					(e) => (e.conversation.messages[0].files[0].key = `memory_files/other/c9/${PNG_SHA}`),
				),
				/at conversation\.messages\[0\]\.files\[0\]\.key: must be the name of an exported file/,
			],
			[
				'file bytes that are not base64',
				variant((e) => (e.files[0].data = 'not base64!')),
				/at files\[0\]\.data: must be the file’s bytes in base64/,
			],
			[
				'file bytes that do not match their name',
				variant((e) => (e.files[0].data = Buffer.from('other').toString('base64'))),
				/at files\[0\]\.data: its SHA-256 is not its name/,
			],
			[
				'no documents',
				variant((e) => {
					e.conversation = null;
					e.nodes = [];
				}),
				/holds no memory/,
			],
		];
		for (const [what, value, message] of cases) {
			await assert.rejects(
				importConversationMemory(disk, 'wf-new', value),
				(error: unknown) => error instanceof InvalidExportError && message.test(error.message),
				what,
			);
			assert.throws(() => parseConversationMemoryExport(value), InvalidExportError, what);
		}
		const written = await Promise.all(
			['conversation_memory/wf-new/', 'node_memory/wf-new/', 'memory_files/wf-new/'].map((p) =>
				disk.list(p),
			),
		);
		assert.deepEqual(written.flat(), [], 'nothing was written for any of them');
		assert.deepEqual(parseConversationMemoryExport(json(good)), good as ConversationMemoryExport);
	});

	it('a file an export did not carry stays missing (reported), as in the source', async () => {
		const disk = tempDisk();
		await conversation(disk);
		await disk.delete(`memory_files/wf-a/c1/${PNG_SHA}`);
		const r = await importConversationMemory(
			disk,
			'wf-b',
			await exportConversationMemory(disk, 'wf-a', 'c1'),
		);
		assert.deepEqual(r.missingFiles, [PNG_SHA]);
		assert.equal(r.files, 0);
		mkdirSync(path.join(disk.root, 'memory_files/wf-b/c1'), { recursive: true });
		const history = await new ConversationMemory(
			'wf-b',
			'c1',
			options(disk),
		).getHistoryPromptMessages({
			messageLimit: 100,
			maxTokenLimit: 100_000,
		});
		assert.equal(history.skippedFiles.length, 1);
	});
});
