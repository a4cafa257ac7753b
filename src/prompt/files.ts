// Files as model content, in the turn they arrive and replayed from storage: images as image parts,
// text files and PDFs as their text (read once: file-text.ts), PDFs and audio as native file parts
// when asked, anything else as a short note. The table of treatments is in docs/files.md.
import type { FileInput } from '../store/blobs';
import { fileTypeOf } from '../store/blobs';
import { writtenFile } from '../store/schema';
import type { StoredFile, WrittenFile } from '../store/schema';
import type { MemoryStorage } from '../store/storage';
import type { TokenCounter } from '../tokens/tokens';
import { audioFormat, fileKind } from './file-kinds';
import type { PdfAndAudio } from './file-kinds';
import type { ContentPart, ImageDetail } from './types';

/** A stored file that could not be turned back into model content. */
export interface SkippedFile {
	messageId: string;
	name: string;
	reason: string;
}

/** Rough cost of one image in a prompt (a 1024×1024 high-detail image for OpenAI models). */
export const IMAGE_TOKEN_ESTIMATE = 765;
/** Rough cost of one PDF page sent as a file part: providers give the model its text and an image of it. */
export const PDF_PAGE_TOKEN_ESTIMATE = 1500;
/** Rough cost of audio sent as a file part: about 10 tokens per second (OpenAI's audio input). */
export const AUDIO_TOKENS_PER_SECOND = 10;
/** Bytes per second assumed to estimate a clip's length: 16 kHz 16-bit mono WAV, 128 kbit/s MP3. */
const AUDIO_BYTES_PER_SECOND = { wav: 32_000, mp3: 16_000 };

/** How the rendering options reach a file: the image detail, and how PDFs and audio are sent. */
export interface FilePartOptions {
	detail?: ImageDetail;
	pdfAndAudio?: PdfAndAudio;
}

/** A file as rendering sees it, whether stored or in the caller's hands. */
type FileView = Pick<
	WrittenFile,
	'name' | 'mime_type' | 'type' | 'size' | 'text' | 'text_truncated' | 'text_error' | 'pages'
> & { remote: boolean };

/** How one file is sent. */
type Plan = 'image' | 'text' | 'file' | 'audio' | 'note';

function inputView(f: FileInput): FileView {
	const read = f.transferMethod === 'remote_url' ? undefined : f.read;
	return {
		name: f.name,
		mime_type: f.mimeType,
		type: f.type ?? fileTypeOf(f.mimeType),
		size: f.transferMethod === 'remote_url' ? (f.size ?? 0) : f.data.byteLength,
		remote: f.transferMethod === 'remote_url',
		...(read?.text !== undefined ? { text: read.text } : {}),
		...(read?.truncated ? { text_truncated: true } : {}),
		...(read?.error !== undefined ? { text_error: read.error } : {}),
		...(read?.pages !== undefined ? { pages: read.pages } : {}),
	};
}

const storedView = (f: WrittenFile): FileView => ({
	...f,
	remote: f.transfer_method === 'remote_url',
});

function planOf(f: FileView, pdfAndAudio: PdfAndAudio = 'text'): Plan {
	const kind = fileKind(f.mime_type, f.name);
	if (kind === 'image') return f.type === 'image' ? 'image' : 'note';
	if (f.remote) return 'note'; // never fetched, so never read
	if (kind === 'pdf' && pdfAndAudio === 'file') return 'file';
	if (kind === 'audio' && pdfAndAudio === 'file' && audioFormat(f.mime_type)) return 'audio';
	if (f.text !== undefined || f.text_error !== undefined) return 'text';
	return 'note';
}

/** What a file the model cannot read looks like to it: a short text note. */
export function filePlaceholder(file: { name: string; mime_type: string }): string {
	return `[file: ${file.name} (${file.mime_type})]`;
}

/** A read file as the model gets it: a header, its text, and a line saying so when it was cut. */
function fileText(f: FileView): string {
	if (f.text_error !== undefined) return `[file: ${f.name} (${f.mime_type}): ${f.text_error}]`;
	if (f.text === undefined) return filePlaceholder(f);
	const cut = f.text_truncated
		? `\n[truncated: only the start of ${f.name} is included; the rest is longer than the per-file token limit]`
		: '';
	return `${filePlaceholder(f)}\n${f.text}${cut}`;
}

function audioTokens(f: FileView): number {
	const format = audioFormat(f.mime_type) ?? 'mp3';
	return Math.max(
		1,
		Math.ceil((f.size / AUDIO_BYTES_PER_SECOND[format]) * AUDIO_TOKENS_PER_SECOND),
	);
}

function fileTokens(counter: TokenCounter, f: FileView, pdfAndAudio?: PdfAndAudio): number {
	switch (planOf(f, pdfAndAudio)) {
		case 'image':
			return IMAGE_TOKEN_ESTIMATE;
		case 'file':
			return Math.max(1, f.pages ?? 1) * PDF_PAGE_TOKEN_ESTIMATE;
		case 'audio':
			return audioTokens(f);
		default:
			return counter.count(fileText(f));
	}
}

/**
 * Tokens a message with these files will cost, counted once when it is appended: its text, each
 * file's text or note counted exactly, images, PDF file parts and audio at the estimates above.
 */
export function messageTokenCount(
	counter: TokenCounter,
	content: string,
	files: readonly WrittenFile[],
	pdfAndAudio?: PdfAndAudio,
): number {
	let n = content.length > 0 ? counter.count(content) : 0;
	for (const f of files) n += fileTokens(counter, storedView(f), pdfAndAudio);
	return n;
}

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

function imagePart(url: string, detail?: ImageDetail): ContentPart {
	return { type: 'image_url', image_url: detail ? { url, detail } : { url } };
}

/** An image the model can be shown (a reference of Dify's format may leave its MIME type out). */
function isImage(file: StoredFile): boolean {
	return file.type === 'image' && (file.mime_type ?? 'image/').toLowerCase().startsWith('image/');
}

/**
 * A file of Dify's memory document format as the model sees it: an image by its URL, another file with a
 * URL as a note with it, and a file located by a Dify ID only (its bytes are not in this storage) as a
 * note saying so.
 */
function referencePart(file: StoredFile, detail?: ImageDetail): ContentPart {
	const url = file.url ?? undefined;
	if (url && isImage(file)) return imagePart(url, detail);
	const name = file.name ?? url?.split(/[?#]/)[0].split('/').filter(Boolean).pop();
	const label = `${name ? `file: ${name}` : 'file'} (${file.mime_type ?? file.type})`;
	if (url) return { type: 'text', text: `[${label} ${url}]` };
	const id =
		file.upload_file_id != null
			? `upload_file_id ${file.upload_file_id}`
			: `tool_file_id ${file.tool_file_id}`;
	return { type: 'text', text: `[${label}, not available here: ${id}]` };
}

/** The part of a file whose bytes are in hand (an image, a PDF or audio file part). */
function bytesPart(f: FileView, plan: Plan, bytes: Uint8Array, detail?: ImageDetail): ContentPart {
	if (plan === 'image') return imagePart(`data:${f.mime_type};base64,${base64(bytes)}`, detail);
	if (plan === 'file')
		return {
			type: 'file',
			source_type: 'base64',
			mime_type: 'application/pdf',
			data: base64(bytes),
			metadata: { filename: f.name },
		};
	// LangChain's OpenAI converter takes audio/wav and audio/mp3 only: the type is named that way.
	return {
		type: 'audio',
		source_type: 'base64',
		mime_type: `audio/${audioFormat(f.mime_type)}`,
		data: base64(bytes),
	};
}

/** Content parts for files the caller has in hand (the message being sent now), as history shows them. */
export function inputFileParts(
	files: readonly FileInput[],
	options: FilePartOptions = {},
): ContentPart[] {
	return files.map((f) => {
		const view = inputView(f);
		const plan = planOf(view, options.pdfAndAudio);
		if (plan === 'text' || plan === 'note') return { type: 'text', text: fileText(view) };
		if (f.transferMethod === 'remote_url') return imagePart(f.url, options.detail);
		return bytesPart(view, plan, f.data, options.detail);
	});
}

/**
 * Rebuilds a message's files into content parts, as inputFileParts gives them; images, PDF file parts
 * and audio are read back from storage, references of Dify's memory document format as referencePart
 * says. A file that cannot be read back is skipped and reported, never thrown: a PDF then falls back
 * to its stored text, other files are left out.
 */
export async function rebuildFiles(
	storage: MemoryStorage,
	messageId: string,
	files: readonly StoredFile[],
	options: FilePartOptions = {},
): Promise<{ parts: ContentPart[]; skipped: SkippedFile[] }> {
	const parts: ContentPart[] = [];
	const skipped: SkippedFile[] = [];
	for (const stored of files) {
		const file = writtenFile(stored);
		if (!file) {
			parts.push(referencePart(stored, options.detail));
			continue;
		}
		const view = storedView(file);
		const plan = planOf(view, options.pdfAndAudio);
		if (plan === 'text' || plan === 'note') {
			parts.push({ type: 'text', text: fileText(view) });
			continue;
		}
		if (file.transfer_method === 'remote_url') {
			parts.push(imagePart(file.url as string, options.detail));
			continue;
		}
		let reason: string;
		try {
			const got = await storage.get(file.key as string);
			if (got) {
				parts.push(bytesPart(view, plan, got.body, options.detail));
				continue;
			}
			reason = 'file is no longer in storage';
		} catch (error) {
			reason = `could not be read: ${(error as Error).message}`;
		}
		skipped.push({ messageId, name: file.name, reason });
		if (plan === 'file') parts.push({ type: 'text', text: fileText(view) });
	}
	return { parts, skipped };
}
