import { createHash } from 'node:crypto';

import type { StoredFile, WrittenFile } from './schema';
import type { MemoryStorage } from './storage';

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
	return { ...base, transfer_method: input.transferMethod, key, size: input.data.byteLength };
}
