// The files in test/fixtures (a real PDF with text, a damaged one, a text file, a CSV) and a local file
// input made of bytes, for the tests of files on their way to the model.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

import type { FileInput } from '../../src/internal';

export const fixture = (name: string): Buffer =>
	readFileSync(path.join(__dirname, '../fixtures', name));

export type LocalFile = Extract<FileInput, { data: Uint8Array }>;

export const localFile = (name: string, mimeType: string, data: Uint8Array): LocalFile => ({
	transferMethod: 'local_file',
	data,
	mimeType,
	name,
});

/** The text pdf.js reads from test/fixtures/notes.pdf. */
export const NOTES_PDF_TEXT =
	'Quarterly notes: the blue whale project ships in May.\nBudget: 42,000 euros, approved by Dana.';
