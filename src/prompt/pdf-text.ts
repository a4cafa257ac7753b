// A PDF's text, with unpdf (Mozilla's pdf.js in a build that needs no worker, no canvas and no native
// code; the choice is explained in docs/files.md). The work is bounded so a turn stays fast: a file
// over MAX_PDF_BYTES is not parsed, and pages are read only until the text is long enough for the
// caller's limit, at most MAX_PDF_PAGES of them, within MAX_PDF_MS.
import { getDocumentProxy } from 'unpdf';

import { UnreadableFileError } from '../errors';

/** PDFs larger than this are not parsed (their text would be cut to a few thousand tokens anyway). */
export const MAX_PDF_BYTES = 20 * 1024 * 1024;
/** Most pages read of one PDF. */
export const MAX_PDF_PAGES = 200;
/** Time budget of one PDF's text: pages after it are left out (and the text says it was cut). */
export const MAX_PDF_MS = 10_000;

export interface PdfText {
	text: string;
	/** Pages in the document. */
	pages: number;
	/** Whether pages were left out (the character, page or time limit). */
	partial: boolean;
}

interface TextItem {
	str?: string;
	hasEOL?: boolean;
}

const mib = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1);

function reasonOf(error: unknown): string {
	const name = (error as Error)?.name;
	if (name === 'PasswordException') return 'it is password-protected';
	if (name === 'InvalidPDFException') return 'it is not a valid PDF (damaged or incomplete)';
	const message = String((error as Error)?.message ?? error).replace(/\.$/, '');
	return `the PDF could not be parsed (${message})`;
}

/**
 * The text of a PDF's pages, in order, a blank line between pages. Stops reading once `maxChars`
 * characters are in hand. A PDF that cannot be parsed is an UnreadableFileError with the reason.
 */
export async function pdfText(
	name: string,
	bytes: Uint8Array,
	maxChars: number,
	now: () => number = Date.now,
): Promise<PdfText> {
	if (bytes.byteLength > MAX_PDF_BYTES)
		throw new UnreadableFileError(
			name,
			`it is too large to read (${mib(bytes.byteLength)} MiB; at most ${mib(MAX_PDF_BYTES)} MiB)`,
		);
	const started = now();
	let doc;
	try {
		// A copy: pdf.js may take over the buffer it is given, and the caller still stores these bytes.
		doc = await getDocumentProxy(new Uint8Array(bytes), {
			verbosity: 0,
			isEvalSupported: false,
			disableFontFace: true,
			useSystemFonts: false,
		});
	} catch (error) {
		throw new UnreadableFileError(name, reasonOf(error), { cause: error });
	}
	try {
		const pages: string[] = [];
		let chars = 0;
		const last = Math.min(doc.numPages, MAX_PDF_PAGES);
		for (let p = 1; p <= last && chars < maxChars && now() - started < MAX_PDF_MS; p++) {
			const content = await (await doc.getPage(p)).getTextContent();
			const text = (content.items as TextItem[])
				.map((item) => (item.str ?? '') + (item.hasEOL ? '\n' : ''))
				.join('')
				.trim();
			pages.push(text);
			chars += text.length + 2;
		}
		return {
			text: pages.join('\n\n').trim(),
			pages: doc.numPages,
			partial: pages.length < doc.numPages,
		};
	} catch (error) {
		throw new UnreadableFileError(name, reasonOf(error), { cause: error });
	} finally {
		await doc.destroy().catch(() => undefined);
	}
}
