import { createHash } from 'node:crypto';

import type { StoredFile } from './document';
import { ConflictError } from './errors';
import type { ContentPart, ImageDetail } from './prompt-types';
import type { MemoryStorage } from './storage/storage';
import type { TokenCounter } from './tokens';

export type FileType = StoredFile['type'];

/** A file attached to a turn, as the caller has it. */
export type FileInput =
	| {
			transferMethod: 'local_file' | 'tool_file';
			data: Uint8Array;
			mimeType: string;
			name: string;
			type?: FileType;
	  }
	| { transferMethod: 'remote_url'; url: string; mimeType: string; name: string; size?: number; type?: FileType };

/** A stored file that could not be turned back into model content. */
export interface SkippedFile {
	messageId: string;
	name: string;
	reason: string;
}

/** Rough cost of one image in a prompt (a 1024×1024 high-detail image for OpenAI models). */
export const IMAGE_TOKEN_ESTIMATE = 765;

export function fileTypeOf(mimeType: string): FileType {
	const top = mimeType.split('/')[0].toLowerCase();
	if (top === 'image' || top === 'audio' || top === 'video') return top;
	if (top === 'text' || /pdf|msword|officedocument|opendocument|json|xml|csv|rtf/i.test(mimeType)) return 'document';
	return 'custom';
}

/** What a non-image file looks like to the model: a short text note. */
export function filePlaceholder(file: Pick<StoredFile, 'name' | 'mime_type'>): string {
	return `[file: ${file.name} (${file.mime_type})]`;
}

function isImage(file: StoredFile): boolean {
	return file.type === 'image' && file.mime_type.toLowerCase().startsWith('image/');
}

/** Tokens a message with these files will cost, counted once when it is appended. */
export function messageTokenCount(counter: TokenCounter, content: string, files: readonly StoredFile[]): number {
	let n = content.length > 0 ? counter.count(content) : 0;
	for (const f of files) n += isImage(f) ? IMAGE_TOKEN_ESTIMATE : counter.count(filePlaceholder(f));
	return n;
}

function imagePart(url: string, detail?: ImageDetail): ContentPart {
	return { type: 'image_url', image_url: detail ? { url, detail } : { url } };
}

const dataUrl = (mimeType: string, bytes: Uint8Array) => `data:${mimeType};base64,${Buffer.from(bytes).toString('base64')}`;

/** Content parts for files the caller has in hand (the message being sent now), as history shows them. */
export function inputFileParts(files: readonly FileInput[], detail?: ImageDetail): ContentPart[] {
	return files.map((f) => {
		const isImg = (f.type ?? fileTypeOf(f.mimeType)) === 'image' && f.mimeType.toLowerCase().startsWith('image/');
		if (!isImg) return { type: 'text', text: filePlaceholder({ name: f.name, mime_type: f.mimeType }) };
		return imagePart(f.transferMethod === 'remote_url' ? f.url : dataUrl(f.mimeType, f.data), detail);
	});
}

/**
 * Turns a file input into a stored reference. Local and tool files are copied once into storage under a
 * content-addressed key (sha256), so history outlives n8n's pruning of execution data.
 */
export async function storeFile(
	storage: MemoryStorage,
	filesPrefix: string,
	input: FileInput,
	belongsTo: StoredFile['belongs_to'],
): Promise<StoredFile> {
	const type = input.type ?? fileTypeOf(input.mimeType);
	const base = { type, mime_type: input.mimeType, name: input.name, belongs_to: belongsTo };
	if (input.transferMethod === 'remote_url') {
		if (!/^https?:\/\//i.test(input.url)) throw new TypeError(`File "${input.name}": remote URLs must be http(s)`);
		return { ...base, transfer_method: 'remote_url', url: input.url, size: input.size ?? 0 };
	}
	const key = filesPrefix + createHash('sha256').update(input.data).digest('hex');
	try {
		await storage.put(key, input.data, { ifVersion: null, contentType: input.mimeType });
	} catch (error) {
		if (!(error instanceof ConflictError)) throw error; // same bytes are already stored
	}
	return { ...base, transfer_method: input.transferMethod, key, size: input.data.byteLength };
}

/**
 * Rebuilds a message's files into content parts: images as data URLs (or their remote URL),
 * other files as a text note. A file that cannot be rebuilt is skipped and reported, never thrown.
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
	for (const file of files) {
		if (!isImage(file)) {
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
				skipped.push({ messageId, name: file.name, reason: `could not be read: ${(error as Error).message}` });
			}
		}
	}
	return { parts, skipped };
}
