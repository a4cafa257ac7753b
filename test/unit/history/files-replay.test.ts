// Files remembered: a turn's text files and PDFs are stored with their text (read once, counted once at
// append) and replayed as exactly the parts the model got in their own turn; PDFs go back as file parts
// when asked; a model's images follow its answer; budgets count the file text; blobs that cannot be read
// back are reported, never replayed as nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	ASSISTANT_FILES_LEAD,
	inputFileParts,
	MESSAGE_FRAMING_TOKENS,
	PDF_PAGE_TOKEN_ESTIMATE,
	readFiles,
	TiktokenCounter,
	TokenBufferMemory,
	tokenizerStats,
} from '../../../src/internal';
import type {
	FileInput,
	LocalDiskStorage,
	MemoryOptions,
	StoredMessage,
} from '../../../src/internal';
import { fixture, NOTES_PDF_TEXT } from '../../support/fixtures';
import { memorySetup } from '../../support/storages';

const counter = new TiktokenCounter('o200k_base'); // gpt-4o-mini's encoding, as memory uses
const upload = (): FileInput[] => [
	{
		transferMethod: 'local_file',
		data: fixture('notes.pdf'),
		mimeType: 'application/pdf',
		name: 'notes.pdf',
	},
	{
		transferMethod: 'local_file',
		data: fixture('notes.txt'),
		mimeType: 'text/plain',
		name: 'notes.txt',
	},
	{
		transferMethod: 'local_file',
		data: fixture('cities.csv'),
		mimeType: 'text/csv',
		name: 'cities.csv',
	},
];

async function storedMessages(disk: LocalDiskStorage, key: string): Promise<StoredMessage[]> {
	const got = await disk.get(key);
	return got ? (JSON.parse(Buffer.from(got.body).toString()).messages as StoredMessage[]) : [];
}

async function turn(memory: TokenBufferMemory, user: string, answer: string, extra = {}) {
	await memory.addMessages({ userContent: user, assistantContent: answer, ...extra });
	await memory.flush();
}

describe('files remembered with their text', () => {
	it('replays text files and PDFs as the same parts the model got in their turn', async () => {
		const { disk, options } = memorySetup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		const read = await readFiles(upload(), counter);
		const sent = inputFileParts(read);
		await turn(m, 'summarise these', 'done', { userFiles: read });
		const [user] = await storedMessages(disk, m.key);
		assert.deepEqual(
			user.files.map((f) => [f.name, f.text, f.pages]),
			[
				['notes.pdf', NOTES_PDF_TEXT, 1],
				['notes.txt', fixture('notes.txt').toString(), undefined],
				['cities.csv', fixture('cities.csv').toString(), undefined],
			],
		);
		const h = await new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages();
		assert.deepEqual(h.messages[0].content, [...sent, { type: 'text', text: 'summarise these' }]);
	});

	it('a file not read before is read when its turn is added; its cost includes its text, counted once', async () => {
		const { disk, options } = memorySetup({ files: { maxTokensPerFile: 20 } });
		const m = new TokenBufferMemory('wf', 'conv', options);
		const long: FileInput = {
			transferMethod: 'local_file',
			data: Buffer.from('alpha beta gamma delta '.repeat(200)),
			mimeType: 'text/markdown',
			name: 'long.md',
		};
		await turn(m, 'q', 'a', { userFiles: [long] });
		const [user] = await storedMessages(disk, m.key);
		assert.equal(user.files[0].text_truncated, true);
		const [part] = inputFileParts(await readFiles([long], counter, { maxTokensPerFile: 20 }));
		assert.ok(part.type === 'text' && part.text.includes('[truncated:'));
		assert.equal(user.token_count, counter.count('q') + counter.count(part.text));
		const calls = tokenizerStats.calls;
		const h = await new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages();
		assert.equal(tokenizerStats.calls, calls, 'replay never re-tokenizes');
		assert.deepEqual(h.messages[0].content, [part, { type: 'text', text: 'q' }]);
	});

	it('the budget counts file text: a turn whose file does not fit is dropped whole', async () => {
		const { options } = memorySetup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'with file', 'ok', { userFiles: upload() });
		await turn(m, 'plain', 'ok');
		const roomy = await m.getHistoryPromptMessages({ maxTokenLimit: 2000 });
		assert.equal(roomy.turns, 2);
		const fileText = inputFileParts(await readFiles(upload(), counter)).map((p) =>
			p.type === 'text' ? counter.count(p.text) : 0,
		);
		const texts = ['with file', 'ok', 'plain', 'ok'].map((t) => counter.count(t));
		assert.equal(
			roomy.tokens,
			[...fileText, ...texts].reduce((a, b) => a + b) + 4 * MESSAGE_FRAMING_TOKENS,
		);
		const tight = await m.getHistoryPromptMessages({ maxTokenLimit: roomy.tokens - 1 });
		assert.deepEqual([tight.turns, tight.droppedTurns], [1, 1]);
		assert.equal(tight.messages[0].content, 'plain');
	});

	it('as file parts: the stored PDF goes back as a file block, counted per page', async () => {
		const { disk, options } = memorySetup({ files: { pdfAndAudio: 'file' } });
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'read it', 'ok', { userFiles: upload().slice(0, 1) });
		const [user] = await storedMessages(disk, m.key);
		assert.equal(user.token_count, counter.count('read it') + PDF_PAGE_TOKEN_ESTIMATE);
		const h = await m.getHistoryPromptMessages();
		assert.deepEqual(h.messages[0].content, [
			{
				type: 'file',
				source_type: 'base64',
				mime_type: 'application/pdf',
				data: fixture('notes.pdf').toString('base64'),
				metadata: { filename: 'notes.pdf' },
			},
			{ type: 'text', text: 'read it' },
		]);
		// The same memory read as text: the stored text, no blob read.
		const asText = await new TokenBufferMemory('wf', 'conv', {
			...options,
			files: { pdfAndAudio: 'text' },
		} as MemoryOptions).getHistoryPromptMessages();
		assert.match(JSON.stringify(asText.messages[0].content), /blue whale project/);
	});

	it('a PDF whose stored copy cannot be read back is reported and replayed as its stored text', async () => {
		const { disk, storage, options } = memorySetup({ files: { pdfAndAudio: 'file' } });
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'read it', 'ok', { userFiles: upload().slice(0, 2) });
		const [user] = await storedMessages(disk, m.key);
		storage.failGetFor = new RegExp(user.files[0].key as string);
		const h = await new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages();
		assert.deepEqual(
			h.skippedFiles.map((s) => [s.name, s.reason]),
			[['notes.pdf', `could not be read: simulated outage reading "${user.files[0].key}"`]],
		);
		const parts = h.messages[0].content as Array<{ type: string; text?: string }>;
		assert.deepEqual(
			parts.map((p) => p.type),
			['text', 'text', 'text'],
		);
		assert.match(
			parts[0].text ?? '',
			/^\[file: notes\.pdf \(application\/pdf\)\]\nQuarterly notes/,
		);
	});
});

describe('files a model returned', () => {
	const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 7]);
	const image: FileInput = {
		transferMethod: 'tool_file',
		data: png,
		mimeType: 'image/png',
		name: 'image-1.png',
	};

	it('are stored content-addressed with the answer and replayed after it, from the user role', async () => {
		const { disk, options } = memorySetup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'draw a cat', 'Here is a cat.', { assistantFiles: [image] });
		await turn(m, 'another', 'Here is another.', { assistantFiles: [image] });
		const files = await disk.list('memory_files/wf/conv/');
		assert.equal(files.length, 1, 'one copy of the same bytes');
		const [, answer] = await storedMessages(disk, m.key);
		assert.deepEqual(
			{ ...answer.files[0] },
			{
				type: 'image',
				mime_type: 'image/png',
				name: 'image-1.png',
				belongs_to: 'assistant',
				transfer_method: 'tool_file',
				key: files[0].key,
				size: png.length,
			},
		);
		const h = await new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages({
			messageLimit: 1,
		});
		assert.deepEqual(h.messages, [
			{ role: 'user', content: 'another' },
			{ role: 'assistant', content: 'Here is another.\n[file: image-1.png (image/png)]' },
			{
				role: 'user',
				content: [
					{ type: 'text', text: ASSISTANT_FILES_LEAD },
					{
						type: 'image_url',
						image_url: { url: `data:image/png;base64,${png.toString('base64')}` },
					},
				],
			},
		]);
	});

	it('an answer that is only an image is kept, and a lost copy is reported', async () => {
		const { disk, options } = memorySetup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'draw', '', { assistantFiles: [image] });
		const [, answer] = await storedMessages(disk, m.key);
		await disk.delete(answer.files[0].key as string);
		const h = await new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages();
		assert.deepEqual(h.messages, [
			{ role: 'user', content: 'draw' },
			{ role: 'assistant', content: '[file: image-1.png (image/png)]' },
		]);
		assert.deepEqual(
			h.skippedFiles.map((s) => [s.name, s.reason]),
			[['image-1.png', 'file is no longer in storage']],
		);
	});
});
