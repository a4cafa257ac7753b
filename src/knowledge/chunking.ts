// Messages into chunks for embedding, and the chunk IDs that make ingestion idempotent.
import { createHash } from 'node:crypto';

import { InvalidOptionError } from '../errors';

/** Langflow's memory base defaults: 1,000-character chunks overlapping by 100. */
export const DEFAULT_CHUNK_SIZE = 1000;
export const DEFAULT_CHUNK_OVERLAP = 100;

export function checkChunking(size: number, overlap: number): void {
	if (!Number.isSafeInteger(size) || size < 1)
		throw new InvalidOptionError('chunkSize', 'must be a whole number ≥ 1');
	if (!Number.isSafeInteger(overlap) || overlap < 0 || overlap >= size)
		throw new InvalidOptionError('chunkOverlap', `must be a whole number from 0 to ${size - 1}`);
}

/**
 * Splits text into windows of at most `size` characters (code points: a surrogate pair is never cut),
 * each starting `size − overlap` after the previous one; a window ends at the last white space in its
 * final fifth when there is one, so words stay whole. Text up to `size` is one chunk.
 */
export function chunkText(text: string, size: number, overlap: number): string[] {
	const chars = Array.from(text);
	if (chars.length <= size) return [text];
	const chunks: string[] = [];
	let start = 0;
	while (start < chars.length) {
		let end = Math.min(start + size, chars.length);
		if (end < chars.length) {
			for (let i = end - 1; i > end - Math.ceil(size / 5) && i > start; i--)
				if (/\s/.test(chars[i])) {
					end = i + 1;
					break;
				}
		}
		chunks.push(chars.slice(start, end).join(''));
		if (end >= chars.length) break;
		start = Math.max(start + 1, end - overlap);
	}
	return chunks;
}

/**
 * The ID of chunk `index` of a message: derived from the knowledge base, session and message IDs only,
 * so ingesting a message again (a retry after a partial failure, Regenerate) writes the same IDs and
 * replaces instead of adding. UUID-shaped (version 8: custom), which vector stores that want UUIDs
 * (PGVector) accept.
 */
export function chunkId(kbId: string, sessionId: string, messageId: string, index: number): string {
	const h = createHash('sha256')
		.update(`${kbId}\n${sessionId}\n${messageId}\n${index}`, 'utf8')
		.digest('hex');
	const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
	return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
