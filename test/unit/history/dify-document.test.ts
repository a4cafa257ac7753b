// Dify's memory document format, as its design document's example has it (test/fixtures/seed-document.json,
// copied verbatim): files referenced by upload_file_id, tool_file_id or url instead of our `key`. The
// reader accepts such a document, history replays its files (by URL, or as a note), a new turn can be
// appended to it, and what is written stays in this package's own form.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	ConversationMemory,
	CorruptDocumentError,
	decodeDocument,
	MESSAGE_FRAMING_TOKENS,
	NodeMemory,
} from '../../../src/internal';
import type { MemoryStorage, StoredFile } from '../../../src/internal';
import { assertAppendable } from '../../../src/store/schema';
import { tempDisk } from '../../support/storages';

const FIXTURE = path.resolve(__dirname, '../../fixtures/seed-document.json');
const BYTES = readFileSync(FIXTURE);
const SEED = JSON.parse(BYTES.toString('utf8'));
const counter = { encoding: 'utf8-bytes', count: (t: string) => Buffer.byteLength(t) };

/** The fixture stored, unchanged, where a memory of conversation "conv" of app "app" keeps it. */
async function storedSeed(storage: MemoryStorage = tempDisk()) {
	const memory = new ConversationMemory('app', 'conv', { storage, tokenCounter: counter });
	await storage.put(memory.key, BYTES);
	return { storage, memory };
}

const withFiles = (files: unknown[]) => ({
	version: 1,
	messages: [{ ...SEED.messages[0], files }, SEED.messages[1]],
});

describe("Dify's memory document format (its design document's example, verbatim)", () => {
	it('reads: the document validates and is kept as it is, file references included', () => {
		const doc = decodeDocument('conversation_memory/app/conv.json', BYTES);
		assert.deepEqual(doc, SEED);
		assert.equal(doc.messages[0].files[0].upload_file_id, 'file-uuid-123');
	});

	it('replays through ConversationMemory: a file known by upload_file_id only becomes a note', async () => {
		const { memory } = await storedSeed();
		const history = await memory.getHistoryPromptMessages();
		assert.deepEqual(history.messages, [
			{
				role: 'user',
				content: [
					{
						type: 'text',
						text: '[file (image), not available here: upload_file_id file-uuid-123]',
					},
					{ type: 'text', text: 'Analyze this image' },
				],
			},
			{ role: 'assistant', content: 'This is a landscape image...' },
		]);
		// 65 tokens of the two messages as stored, and the framing each message is sent with.
		const framed = 65 + 2 * MESSAGE_FRAMING_TOKENS;
		assert.deepEqual([history.turns, history.tokens, history.skippedFiles], [1, framed, []]);
	});

	it('a new turn is appended to it; the stored messages stay as they were', async () => {
		const { storage, memory } = await storedSeed();
		await memory.addMessages({
			messageId: 'msg-003',
			userContent: 'Is it a mountain?',
			assistantContent: 'Yes, with a lake.',
		});
		assert.equal((await memory.flush()).written, true);
		const raw = await storage.get(memory.key);
		const doc = decodeDocument(memory.key, raw!.body);
		assert.deepEqual(doc.messages.slice(0, 2), SEED.messages);
		assert.deepEqual(
			doc.messages.slice(2).map((m) => [m.message_id, m.parent_message_id, m.role, m.content]),
			[
				['msg-003:user', 'msg-002', 'user', 'Is it a mountain?'],
				['msg-003', 'msg-003:user', 'assistant', 'Yes, with a lake.'],
			],
		);
		const again = new ConversationMemory('app', 'conv', { storage, tokenCounter: counter });
		const history = await again.getHistoryPromptMessages();
		assert.equal(history.messages.length, 4);
		assert.equal(history.turns, 2);
	});

	it('the same document works as node memory at the key Dify names (node_memory/app/conv/node.json)', async () => {
		const storage = tempDisk();
		const memory = new NodeMemory('app', 'conv', 'node', { storage, tokenCounter: counter });
		assert.equal(memory.key, 'node_memory/app/conv/node.json');
		await storage.put(memory.key, BYTES);
		assert.equal((await memory.getHistoryPromptMessages()).messages.length, 2);
	});

	it('replays files with a URL by it: an image as image_url, another file as a note with the URL', async () => {
		const files = [
			{
				type: 'image',
				transfer_method: 'remote_url',
				url: 'https://example.com/lake.png',
				belongs_to: 'user',
			},
			{
				type: 'document',
				transfer_method: 'remote_url',
				upload_file_id: null,
				tool_file_id: null,
				url: 'https://example.com/docs/report.pdf?sig=1',
				belongs_to: 'user',
			},
			{
				type: 'document',
				transfer_method: 'tool_file',
				tool_file_id: 'tf-9',
				name: 'out.csv',
				mime_type: 'text/csv',
				belongs_to: 'assistant',
			},
		];
		const storage = tempDisk();
		const memory = new ConversationMemory('app', 'conv', { storage, tokenCounter: counter });
		await storage.put(memory.key, Buffer.from(JSON.stringify(withFiles(files))));
		const [user] = (await memory.getHistoryPromptMessages({ imageDetail: 'low' })).messages;
		assert.deepEqual(user.content, [
			{ type: 'image_url', image_url: { url: 'https://example.com/lake.png', detail: 'low' } },
			{
				type: 'text',
				text: '[file: report.pdf (document) https://example.com/docs/report.pdf?sig=1]',
			},
			{ type: 'text', text: '[file: out.csv (text/csv), not available here: tool_file_id tf-9]' },
			{ type: 'text', text: 'Analyze this image' },
		]);
	});

	it('still refuses a file nothing locates, and one of ours without its MIME type, name or size', () => {
		const refused = (files: unknown[], detail: RegExp) =>
			assert.throws(
				() => decodeDocument('k.json', Buffer.from(JSON.stringify(withFiles(files)))),
				(e: unknown) => e instanceof CorruptDocumentError && detail.test(e.message),
			);
		const base = { type: 'image', transfer_method: 'local_file', belongs_to: 'user' };
		refused([base], /need "key" \(or, in Dify's memory document format, "upload_file_id"/);
		refused([{ ...base, upload_file_id: null }], /need "key"/);
		refused(
			[{ ...base, key: 'k', name: 'x', size: 1 }],
			/files\.0\.mime_type: files with "key" need "mime_type"/,
		);
	});

	it('writing stays in our format: a new message may not carry a file reference', () => {
		const message = { ...SEED.messages[0], message_id: 'msg-009' };
		assert.throws(
			() => assertAppendable('k.json', () => false, [message]),
			/refusing to write message "msg-009": files\.0\.mime_type: /,
		);
		const ours: StoredFile = {
			type: 'image',
			transfer_method: 'local_file',
			key: 'memory_files/app/conv/abc',
			mime_type: 'image/png',
			name: 'x.png',
			size: 3,
			belongs_to: 'user',
		};
		assertAppendable('k.json', () => false, [{ ...message, files: [ours] }]);
	});
});
