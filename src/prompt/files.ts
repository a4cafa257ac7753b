import { writtenFile } from '../store/schema';
import type { StoredFile, WrittenFile } from '../store/schema';
import type { FileInput } from '../store/blobs';
import { fileTypeOf } from '../store/blobs';
import type { MemoryStorage } from '../store/storage';
import type { TokenCounter } from '../tokens/tokens';
import type { ContentPart, ImageDetail } from './types';

/** A stored file that could not be turned back into model content. */
export interface SkippedFile {
	messageId: string;
	name: string;
	reason: string;
}

/** Rough cost of one image in a prompt (a 1024×1024 high-detail image for OpenAI models). */
export const IMAGE_TOKEN_ESTIMATE = 765;

/** What a non-image file looks like to the model: a short text note. */
export function filePlaceholder(file: { name: string; mime_type: string }): string {
	return `[file: ${file.name} (${file.mime_type})]`;
}

/** An image the model can be shown (a reference of Dify's format may leave its MIME type out). */
function isImage(file: StoredFile | WrittenFile): boolean {
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

/** Tokens a message with these files will cost, counted once when it is appended. */
export function messageTokenCount(
	counter: TokenCounter,
	content: string,
	files: readonly WrittenFile[],
): number {
	let n = content.length > 0 ? counter.count(content) : 0;
	for (const f of files) n += isImage(f) ? IMAGE_TOKEN_ESTIMATE : counter.count(filePlaceholder(f));
	return n;
}

function imagePart(url: string, detail?: ImageDetail): ContentPart {
	return { type: 'image_url', image_url: detail ? { url, detail } : { url } };
}

const dataUrl = (mimeType: string, bytes: Uint8Array) =>
	`data:${mimeType};base64,${Buffer.from(bytes).toString('base64')}`;

/** Content parts for files the caller has in hand (the message being sent now), as history shows them. */
export function inputFileParts(files: readonly FileInput[], detail?: ImageDetail): ContentPart[] {
	return files.map((f) => {
		const isImg =
			(f.type ?? fileTypeOf(f.mimeType)) === 'image' &&
			f.mimeType.toLowerCase().startsWith('image/');
		if (!isImg)
			return { type: 'text', text: filePlaceholder({ name: f.name, mime_type: f.mimeType }) };
		return imagePart(
			f.transferMethod === 'remote_url' ? f.url : dataUrl(f.mimeType, f.data),
			detail,
		);
	});
}

/**
 * Rebuilds a message's files into content parts: images as data URLs (or their remote URL),
 * other files as a text note, references of Dify's memory document format as referencePart says. A
 * file that cannot be rebuilt is skipped and reported, never thrown.
 */
export async function rebuildFiles(
	storage: MemoryStorage,
	messageId: string,
	files: readonly StoredFile[],
	detail?: ImageDetail,
): Promise<{ parts: ContentPart[]; skipped: SkippedFile[] }> {
	const image = (url: string) => imagePart(url, detail);
	const parts: ContentPart[] = [];
	const skipped: SkippedFile[] = [];
	for (const stored of files) {
		const file = writtenFile(stored);
		if (!file) {
			parts.push(referencePart(stored, detail));
		} else if (!isImage(file)) {
			parts.push({ type: 'text', text: filePlaceholder(file) });
		} else if (file.transfer_method === 'remote_url') {
			parts.push(image(file.url as string));
		} else {
			try {
				const got = await storage.get(file.key as string);
				if (!got) {
					skipped.push({ messageId, name: file.name, reason: 'file is no longer in storage' });
					continue;
				}
				parts.push(image(dataUrl(file.mime_type, got.body)));
			} catch (error) {
				skipped.push({
					messageId,
					name: file.name,
					reason: `could not be read: ${(error as Error).message}`,
				});
			}
		}
	}
	return { parts, skipped };
}
