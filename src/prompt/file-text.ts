// Reading files for the model, once, when their turn arrives: a text file's text or a PDF's, cut to the
// per-file token limit with the memory's own token counter. The result travels with the file
// (FileInput.read) into the prompt of that turn and into storage, so later turns replay the same text.
import { UnreadableFileError } from '../errors';
import type { FileInput, FileText } from '../store/blobs';
import type { TokenCounter } from '../tokens/tokens';
import { DEFAULT_MAX_TOKENS_PER_FILE, fileKind } from './file-kinds';
import type { FileOptions } from './file-kinds';
import { pdfText } from './pdf-text';

/**
 * Characters read per allowed token, at most. Real text averages 3 to 5 characters per token, so this
 * only bounds the work on huge files: text beyond it is cut even if it would have fit.
 */
const CHARS_PER_TOKEN_BOUND = 16;

/** UTF-8 text of the first bytes of a file (without a byte-order mark); undefined when it is not text. */
export function decodeText(bytes: Uint8Array, maxChars: number): string | undefined {
	// UTF-8 takes at most 4 bytes per character: decoding 4 × maxChars bytes is enough.
	const head = bytes.subarray(0, Math.min(bytes.byteLength, maxChars * 4));
	const text = new TextDecoder('utf-8').decode(head).replace(/^\uFEFF/, '');
	if (text.includes('\u0000')) return undefined; // a NUL: binary data under a text type
	// A cut in the middle of a character decodes as U+FFFD at the end: drop it.
	return head.byteLength < bytes.byteLength ? text.replace(/\uFFFD+$/, '') : text;
}

/** The end of a cut: not inside a surrogate pair, and at a line or word break when one is near. */
function cleanCut(text: string, at: number): number {
	let cut = at;
	if (cut > 0 && cut < text.length && /[\uD800-\uDBFF]/.test(text[cut - 1])) cut--;
	const window = text.slice(Math.max(0, cut - 200), cut);
	const newline = window.lastIndexOf('\n');
	if (newline >= 0) return cut - window.length + newline;
	const space = window.lastIndexOf(' ');
	return space >= 0 ? cut - window.length + space : cut;
}

/**
 * The longest start of `text` that counts at most `maxTokens` tokens (cut at a clean break). Counts a
 * prefix of at most CHARS_PER_TOKEN_BOUND × maxTokens characters, then narrows the cut by bisection.
 */
export function capTokens(
	text: string,
	counter: TokenCounter,
	maxTokens: number,
): { text: string; truncated: boolean } {
	let hi = Math.min(text.length, maxTokens * CHARS_PER_TOKEN_BOUND);
	const n = hi > 0 ? counter.count(text.slice(0, hi)) : 0;
	if (n <= maxTokens) return { text: text.slice(0, hi), truncated: hi < text.length };
	// count(lo) ≤ maxTokens < count(hi); the first guess assumes an even spread of tokens.
	let lo = 0;
	let mid = Math.floor((hi * maxTokens) / n);
	while (hi - lo > 8) {
		if (counter.count(text.slice(0, mid)) <= maxTokens) lo = mid;
		else hi = mid;
		mid = Math.floor((lo + hi) / 2);
	}
	return { text: text.slice(0, cleanCut(text, lo)).trimEnd(), truncated: true };
}

async function readText(
	file: Extract<FileInput, { data: Uint8Array }>,
	counter: TokenCounter,
	maxTokens: number,
): Promise<FileText> {
	const maxChars = maxTokens * CHARS_PER_TOKEN_BOUND;
	const kind = fileKind(file.mimeType, file.name);
	let text: string;
	let pages: number | undefined;
	let partial = false;
	if (kind === 'pdf') {
		const pdf = await pdfText(file.name, file.data, maxChars);
		({ text, pages, partial } = pdf);
		if (!text.trim())
			throw new UnreadableFileError(file.name, 'it has no text (a scanned PDF holds only images)');
	} else {
		const decoded = decodeText(file.data, maxChars);
		if (decoded === undefined) throw new UnreadableFileError(file.name, 'it is not text');
		text = decoded;
		partial = file.data.byteLength > maxChars * 4; // decodeText read only the start
	}
	const capped = capTokens(text, counter, maxTokens);
	return {
		text: capped.text,
		...(capped.truncated || partial ? { truncated: true } : {}),
		...(pages !== undefined ? { pages } : {}),
	};
}

/**
 * The files with their text read: text files and PDFs get `read` (their text, cut to the per-file
 * limit, or the reason none could be read); other files, remote files and files read before are
 * returned as they are. Never throws: the reason a file could not be read goes into `read.error`.
 */
export async function readFiles(
	files: readonly FileInput[],
	counter: TokenCounter,
	options: FileOptions = {},
): Promise<FileInput[]> {
	const maxTokens = options.maxTokensPerFile ?? DEFAULT_MAX_TOKENS_PER_FILE;
	const out: FileInput[] = [];
	for (const file of files) {
		const kind = fileKind(file.mimeType, file.name);
		if (file.transferMethod === 'remote_url' || file.read || (kind !== 'text' && kind !== 'pdf')) {
			out.push(file);
			continue;
		}
		let read: FileText;
		try {
			read = await readText(file, counter, maxTokens);
		} catch (error) {
			// Whatever went wrong, the turn goes on: the model is told the text is missing, and why.
			const reason =
				error instanceof UnreadableFileError ? error.reason : String((error as Error)?.message);
			read = { error: `text could not be extracted: ${reason}` };
		}
		out.push({ ...file, read });
	}
	return out;
}
