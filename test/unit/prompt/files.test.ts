// Files as model content in the turn they arrive: text with a header (and a truncation line), notes,
// PDFs and audio as LangChain data blocks when sent as file parts, and what each costs in the budget.
// Also the files found in content parts (a model's reply, a message handed to memory).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	contentFiles,
	IMAGE_TOKEN_ESTIMATE,
	inputFileParts,
	messageTokenCount,
	parseDataUrl,
	PDF_PAGE_TOKEN_ESTIMATE,
	readFiles,
	TiktokenCounter,
} from '../../../src/internal';
import type { WrittenFile } from '../../../src/internal';
import { fixture, localFile, NOTES_PDF_TEXT } from '../../support/fixtures';

const counter = new TiktokenCounter('o200k_base');
const b64 = (data: Uint8Array) => Buffer.from(data).toString('base64');

describe('files in the turn they arrive', () => {
	it('text files and PDFs reach the model as their text under a header; others as a note', async () => {
		const files = await readFiles(
			[
				localFile('notes.txt', 'text/plain', fixture('notes.txt')),
				localFile('notes.pdf', 'application/pdf', fixture('notes.pdf')),
				localFile('corrupt.pdf', 'application/pdf', fixture('corrupt.pdf')),
				localFile('a.zip', 'application/zip', Buffer.from('PK')),
				localFile('talk.wav', 'audio/wav', Buffer.from('RIFF')),
			],
			counter,
		);
		assert.deepEqual(inputFileParts(files), [
			{ type: 'text', text: `[file: notes.txt (text/plain)]\n${fixture('notes.txt')}` },
			{
				type: 'text',
				text: `[file: notes.pdf (application/pdf)]\n${NOTES_PDF_TEXT}`,
			},
			{
				type: 'text',
				text: '[file: corrupt.pdf (application/pdf): text could not be extracted: it is not a valid PDF (damaged or incomplete)]',
			},
			{ type: 'text', text: '[file: a.zip (application/zip)]' },
			{ type: 'text', text: '[file: talk.wav (audio/wav)]' },
		]);
	});

	it('truncated text says so', async () => {
		const [file] = await readFiles(
			[localFile('long.txt', 'text/plain', Buffer.from('word '.repeat(5000)))],
			counter,
			{ maxTokensPerFile: 50 },
		);
		const [part] = inputFileParts([file]);
		assert.ok(part.type === 'text');
		assert.match(
			part.text,
			/\n\[truncated: only the start of long\.txt is included; the rest is longer than the per-file token limit\]$/,
		);
	});

	it('as file parts: the PDF itself and WAV/MP3 audio, as LangChain data blocks; other audio stays a note', async () => {
		const pdf = fixture('notes.pdf');
		const wav = Buffer.from('RIFF....WAVEfmt ');
		const files = await readFiles(
			[
				localFile('notes.pdf', 'application/pdf', pdf),
				localFile('talk.wav', 'audio/x-wav', wav),
				localFile('song.mp3', 'audio/mpeg', wav),
				localFile('memo.ogg', 'audio/ogg', wav),
				localFile('notes.txt', 'text/plain', fixture('notes.txt')),
			],
			counter,
		);
		assert.deepEqual(inputFileParts(files, { pdfAndAudio: 'file' }), [
			{
				type: 'file',
				source_type: 'base64',
				mime_type: 'application/pdf',
				data: b64(pdf),
				metadata: { filename: 'notes.pdf' },
			},
			{ type: 'audio', source_type: 'base64', mime_type: 'audio/wav', data: b64(wav) },
			{ type: 'audio', source_type: 'base64', mime_type: 'audio/mp3', data: b64(wav) },
			{ type: 'text', text: '[file: memo.ogg (audio/ogg)]' },
			{ type: 'text', text: `[file: notes.txt (text/plain)]\n${fixture('notes.txt')}` },
		]);
	});
});

describe('what files cost in the budget, counted once at append', () => {
	const stored = (f: Partial<WrittenFile>): WrittenFile => ({
		type: 'document',
		transfer_method: 'local_file',
		key: 'k',
		mime_type: 'text/plain',
		name: 'a.txt',
		size: 10,
		belongs_to: 'user',
		...f,
	});

	it('a text file costs the tokens of exactly what the model gets', () => {
		const file = stored({ text: 'The launch word is PERIWINKLE.', text_truncated: true });
		const [part] = inputFileParts([
			{
				...localFile('a.txt', 'text/plain', Buffer.from('')),
				read: { text: file.text, truncated: true },
			},
		]);
		assert.ok(part.type === 'text');
		assert.equal(
			messageTokenCount(counter, 'question', [file]),
			counter.count('question') + counter.count(part.text),
		);
	});

	it('images at their estimate; a PDF file part per page; notes and errors as their text', () => {
		const pdf = stored({ mime_type: 'application/pdf', name: 'r.pdf', text: 'x', pages: 3 });
		const image = stored({ type: 'image', mime_type: 'image/png', name: 'p.png' });
		assert.equal(messageTokenCount(counter, '', [image]), IMAGE_TOKEN_ESTIMATE);
		assert.equal(messageTokenCount(counter, '', [pdf], 'file'), 3 * PDF_PAGE_TOKEN_ESTIMATE);
		assert.equal(
			messageTokenCount(counter, '', [pdf], 'text'),
			counter.count('[file: r.pdf (application/pdf)]\nx'),
		);
		const broken = stored({ mime_type: 'application/pdf', name: 'b.pdf', text_error: 'why' });
		assert.equal(
			messageTokenCount(counter, '', [broken]),
			counter.count('[file: b.pdf (application/pdf): why]'),
		);
		// Audio as a file part: estimated from its size (10 tokens per second of 128 kbit/s MP3).
		const mp3 = stored({ mime_type: 'audio/mpeg', name: 's.mp3', size: 160_000 });
		assert.equal(messageTokenCount(counter, '', [mp3], 'file'), 100);
		assert.equal(
			messageTokenCount(counter, '', [mp3], 'text'),
			counter.count('[file: s.mp3 (audio/mpeg)]'),
		);
	});
});

describe('files in content parts', () => {
	const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
	const dataUrl = `data:image/png;base64,${b64(png)}`;

	it('parses data URLs, base64 or percent-encoded', () => {
		assert.deepEqual(parseDataUrl(dataUrl), { mimeType: 'image/png', data: new Uint8Array(png) });
		assert.deepEqual(parseDataUrl('data:,a%20b'), {
			mimeType: 'text/plain',
			data: new Uint8Array(Buffer.from('a b')),
		});
		assert.equal(parseDataUrl('https://x.test/a.png'), undefined);
	});

	it('finds images in the shapes providers and LangChain use, links kept as links', () => {
		const files = contentFiles(
			[
				{ type: 'text', text: 'here you go' },
				{ type: 'image_url', image_url: { url: dataUrl } },
				{ type: 'image_url', image_url: dataUrl },
				{ type: 'image', url: dataUrl },
				{ type: 'image', source_type: 'base64', mime_type: 'image/png', data: b64(png) },
				{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(png) } },
				{ type: 'image_url', image_url: { url: 'https://img.test/cat.jpg' } },
				{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } },
			],
			'tool_file',
		);
		assert.equal(files.length, 6);
		for (const f of files.slice(0, 5))
			assert.deepEqual(f, {
				transferMethod: 'tool_file',
				data: new Uint8Array(png),
				mimeType: 'image/png',
				name: f.name,
			});
		assert.deepEqual(
			files.map((f) => f.name),
			['image-1.png', 'image-2.png', 'image-3.png', 'image-4.png', 'image-5.png', 'cat.jpg'],
		);
		assert.deepEqual(files[5], {
			transferMethod: 'remote_url',
			url: 'https://img.test/cat.jpg',
			mimeType: 'image/*',
			name: 'cat.jpg',
		});
	});

	it('finds PDF and audio blocks; string content and parts without files give none', () => {
		const pdf = fixture('notes.pdf');
		assert.deepEqual(
			contentFiles(
				[
					{
						type: 'file',
						source_type: 'base64',
						mime_type: 'application/pdf',
						data: b64(pdf),
						metadata: { filename: 'r.pdf' },
					},
					{ type: 'file', file: { file_data: `data:application/pdf;base64,${b64(pdf)}` } },
					{ type: 'input_audio', input_audio: { data: b64(png), format: 'mp3' } },
				],
				'local_file',
			).map((f) => [f.name, f.mimeType]),
			[
				['r.pdf', 'application/pdf'],
				['application-2.pdf', 'application/pdf'],
				['audio-3.mp3', 'audio/mp3'],
			],
		);
		assert.deepEqual(contentFiles('just text', 'local_file'), []);
		assert.deepEqual(contentFiles([{ type: 'text', text: 'x' }, null, 5], 'local_file'), []);
	});
});
