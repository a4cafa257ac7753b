import { createHash } from 'node:crypto';

import type { StoredFile, WrittenFile } from './schema';
import type { MemoryStorage } from './storage';

export type FileType = StoredFile['type'];

/**
 * What was read of a file for the model, once, when its turn arrived: its text (cut to the per-file
 * token limit: `truncated`), or why it has none (`error`), and a PDF's page count. Stored with the file,
 * so later turns replay the same text without reading the file again.
 */
export interface FileText {
	text?: string;
	truncated?: boolean;
	error?: string;
	pages?: number;
}

/** A file attached to a turn, as the caller has it. */
export type FileInput =
	| {
			transferMethod: 'local_file' | 'tool_file';
			data: Uint8Array;
			mimeType: string;
			name: string;
			type?: FileType;
			/** Set by readFiles (prompt/file-text.ts); a file without it is read when its turn is added. */
			read?: FileText;
	  }
	| {
			transferMethod: 'remote_url';
			url: string;
			mimeType: string;
			name: string;
			size?: number;
			type?: FileType;
	  };

export function fileTypeOf(mimeType: string): FileType {
	const top = mimeType.split('/')[0].toLowerCase();
	if (top === 'image' || top === 'audio' || top === 'video') return top;
	if (top === 'text' || /pdf|msword|officedocument|opendocument|json|xml|csv|rtf/i.test(mimeType))
		return 'document';
	return 'custom';
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
): Promise<WrittenFile> {
	const type = input.type ?? fileTypeOf(input.mimeType);
	const base = { type, mime_type: input.mimeType, name: input.name, belongs_to: belongsTo };
	if (input.transferMethod === 'remote_url') {
		if (!/^https?:\/\//i.test(input.url))
			throw new TypeError(`File "${input.name}": remote URLs must be http(s)`);
		return { ...base, transfer_method: 'remote_url', url: input.url, size: input.size ?? 0 };
	}
	const key = filesPrefix + createHash('sha256').update(input.data).digest('hex');
	// Unconditional: the same bytes may already be stored, and writing them again marks the file as in
	// use now, so housekeeping that judged it unused before this turn keeps it (it re-checks the version).
	await storage.put(key, input.data, { contentType: input.mimeType });
	return {
		...base,
		transfer_method: input.transferMethod,
		key,
		size: input.data.byteLength,
		...storedText(input.read),
	};
}

/** The read text as the stored file's fields (only those that are set). */
function storedText(
	read: FileText | undefined,
): Partial<Pick<WrittenFile, 'text' | 'text_truncated' | 'text_error' | 'pages'>> {
	if (!read) return {};
	const out: Partial<StoredFile> = {};
	if (read.text !== undefined) out.text = read.text;
	if (read.truncated) out.text_truncated = true;
	if (read.error !== undefined) out.text_error = read.error;
	if (read.pages !== undefined) out.pages = read.pages;
	return out;
}
