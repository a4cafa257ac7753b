// Reading files for the model: which files are read as text, the per-file token cap (counted with the
// real tokenizer), PDFs read with unpdf (real pdf.js, real files from test/fixtures and test/support/pdf.ts),
// and bad input (corrupt, scanned, too large, binary) as a note with its reason, never a thrown error.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	capTokens,
	decodeText,
	fileKind,
	isReadable,
	MAX_PDF_BYTES,
	pdfText,
	readFiles,
	TiktokenCounter,
	UnreadableFileError,
} from '../../../src/internal';
import type { FileInput } from '../../../src/internal';
import { fixture, localFile, NOTES_PDF_TEXT } from '../../support/fixtures';
import { minimalPdf } from '../../support/pdf';

const counter = new TiktokenCounter('o200k_base');
const readOne = async (file: FileInput, maxTokensPerFile?: number) => {
	const [read] = await readFiles([file], counter, { maxTokensPerFile });
	return read.transferMethod === 'remote_url' ? undefined : read.read;
};

describe('which files are read', () => {
	it('text types, structured text, PDFs by type; generic types by extension; the rest is other', () => {
		const kinds = [
			['text/plain', 'a.txt'],
			['text/markdown', 'a.md'],
			['text/csv', 'a.csv'],
			['application/csv', 'a.csv'],
			['application/json', 'a.json'],
			['application/vnd.api+json', 'a'],
			['application/xml', 'a.xml'],
			['application/x-yaml', 'a.yaml'],
			['application/octet-stream', 'notes.md'],
			['', 'data.yml'],
			['application/pdf', 'a.pdf'],
			['application/octet-stream', 'scan.PDF'],
			['image/png', 'a.png'],
			['audio/mpeg', 'a.mp3'],
			['application/zip', 'a.zip'],
			['application/octet-stream', 'a.bin'],
			['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'a.docx'],
		].map(([mime, name]) => fileKind(mime, name));
		assert.deepEqual(kinds, [
			'text',
			'text',
			'text',
			'text',
			'text',
			'text',
			'text',
			'text',
			'text',
			'text',
			'pdf',
			'pdf',
			'image',
			'audio',
			'other',
			'other',
			'other',
		]);
	});

	it('audio is readable only as a file part, and only WAV or MP3', () => {
		assert.equal(isReadable('audio/wav', 'a.wav', 'text'), false);
		assert.equal(isReadable('audio/wav', 'a.wav', 'file'), true);
		assert.equal(isReadable('audio/mpeg', 'a.mp3', 'file'), true);
		assert.equal(isReadable('audio/ogg', 'a.ogg', 'file'), false);
		assert.equal(isReadable('application/zip', 'a.zip', 'file'), false);
	});
});

describe('text and the per-file token cap', () => {
	it('decodes UTF-8 without its byte-order mark; binary data under a text type is not text', () => {
		assert.equal(decodeText(Buffer.from('\uFEFFhé llo'), 100), 'hé llo');
		assert.equal(decodeText(Buffer.from([0x61, 0x00, 0x62]), 100), undefined);
		// Cut inside a two-byte character: the broken character is dropped, not shown as U+FFFD.
		assert.equal(decodeText(Buffer.from('aaaé'), 1), 'aaa');
	});

	it('keeps text within the cap whole; cuts longer text at most at the cap, close to it, at a break', () => {
		const short = 'A short note.';
		assert.deepEqual(capTokens(short, counter, 100), { text: short, truncated: false });
		const long = Array.from(
			{ length: 400 },
			(_, i) => `Line ${i}: the quick brown fox jumps.`,
		).join('\n');
		const cut = capTokens(long, counter, 150);
		assert.equal(cut.truncated, true);
		const n = counter.count(cut.text);
		assert.ok(n <= 150, `${n} tokens`);
		assert.ok(n >= 130, `${n} tokens: the cut should use most of the cap`);
		assert.ok(long.startsWith(cut.text) && long[cut.text.length] === '\n', 'cut at a line break');
	});

	it('never splits a surrogate pair', () => {
		const emoji = '😀'.repeat(500);
		const cut = capTokens(emoji, counter, 40);
		assert.equal(cut.truncated, true);
		assert.ok(!/[\uD800-\uDBFF]$/.test(cut.text), 'no lone high surrogate at the end');
		assert.ok(counter.count(cut.text) <= 40);
	});

	it('reads text files and CSVs whole when they fit, and marks a cut one as truncated', async () => {
		assert.deepEqual(await readOne(localFile('notes.txt', 'text/plain', fixture('notes.txt'))), {
			text: fixture('notes.txt').toString(),
		});
		assert.deepEqual(await readOne(localFile('cities.csv', 'text/csv', fixture('cities.csv'))), {
			text: fixture('cities.csv').toString(),
		});
		const big = Buffer.from('word '.repeat(50_000));
		const read = await readOne(localFile('big.md', 'text/markdown', big), 300);
		assert.equal(read?.truncated, true);
		assert.ok(counter.count(read?.text ?? '') <= 300);
	});

	it('a huge text file is read from its start only: the work is bounded by the cap', async () => {
		const huge = Buffer.alloc(64 * 1024 * 1024, 'abc def ');
		const started = performance.now();
		const read = await readOne(localFile('huge.log', 'text/plain', huge), 2000);
		const ms = performance.now() - started;
		assert.equal(read?.truncated, true);
		assert.ok(ms < 3000, `${ms.toFixed(0)} ms`);
	});

	it('leaves images, other files, remote files and files read before as they are', async () => {
		const files: FileInput[] = [
			localFile('a.png', 'image/png', Buffer.from([1, 2, 3])),
			localFile('a.zip', 'application/zip', Buffer.from([1, 2, 3])),
			{
				transferMethod: 'remote_url',
				url: 'https://x.test/a.txt',
				mimeType: 'text/plain',
				name: 'a',
			},
			{ ...localFile('a.txt', 'text/plain', Buffer.from('new')), read: { text: 'old' } },
		];
		assert.deepEqual(await readFiles(files, counter), files);
	});
});

describe('PDFs', () => {
	it('reads the text of a real PDF (test/fixtures/notes.pdf) with its page count', async () => {
		const read = await readOne(localFile('notes.pdf', 'application/pdf', fixture('notes.pdf')));
		assert.deepEqual(read, {
			text: NOTES_PDF_TEXT,
			pages: 1,
		});
	});

	it('pages in order, a blank line between them; the bytes handed in stay intact', async () => {
		const bytes = minimalPdf([['first page'], ['second (page)']]);
		const copy = Buffer.from(bytes);
		const read = await pdfText('two.pdf', bytes, 10_000);
		assert.deepEqual(read, { text: 'first page\n\nsecond (page)', pages: 2, partial: false });
		assert.deepEqual(Buffer.from(bytes), copy);
	});

	it('stops reading pages once the text is long enough for the cap', async () => {
		const line = 'Every page of this report repeats the same long sentence about nothing at all.';
		const pages = Array.from({ length: 120 }, (_, p) => [`Page ${p + 1}`, line, line, line]);
		const pdf = minimalPdf(pages);
		const started = performance.now();
		const read = await readOne(localFile('long.pdf', 'application/pdf', pdf), 100);
		const ms = performance.now() - started;
		assert.equal(read?.pages, 120);
		assert.equal(read?.truncated, true);
		assert.match(read?.text ?? '', /^Page 1\n/);
		assert.doesNotMatch(read?.text ?? '', /Page 30\n/);
		assert.ok(counter.count(read?.text ?? '') <= 100);
		assert.ok(ms < 5000, `${ms.toFixed(0)} ms`);
	});

	it('a corrupt PDF is a note with the reason, never an error of the turn', async () => {
		assert.deepEqual(
			await readOne(localFile('corrupt.pdf', 'application/pdf', fixture('corrupt.pdf'))),
			{
				error: 'text could not be extracted: it is not a valid PDF (damaged or incomplete)',
			},
		);
		await assert.rejects(
			pdfText('x.pdf', Buffer.from('not a pdf'), 100),
			(e: unknown) => e instanceof UnreadableFileError && e.fileName === 'x.pdf',
		);
	});

	it('a PDF without text (a scan) and one over the size limit say so', async () => {
		const scanned = await readOne(localFile('scan.pdf', 'application/pdf', minimalPdf([[]])));
		assert.deepEqual(scanned, {
			error: 'text could not be extracted: it has no text (a scanned PDF holds only images)',
		});
		const started = performance.now();
		const huge = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(MAX_PDF_BYTES)]);
		const tooLarge = await readOne(localFile('huge.pdf', 'application/pdf', huge));
		assert.match(tooLarge?.error ?? '', /too large to read \(20\.0 MiB; at most 20\.0 MiB\)/);
		assert.ok(performance.now() - started < 1000, 'refused without parsing');
	});
});
