import { gunzipSync, gzipSync } from 'node:zlib';

import { CorruptDocumentError } from '../errors';
import { validateDocument } from './schema';
import type { MemoryDocument } from './schema';

const GZIP_MAGIC = [0x1f, 0x8b];

/** Serialises a JSON document, gzipped when asked. */
export function encodeJson(doc: unknown, options: { gzip?: boolean } = {}): Buffer {
	const json = Buffer.from(JSON.stringify(doc), 'utf8');
	return options.gzip ? gzipSync(json) : json;
}

/** Parses stored bytes (plain or gzipped JSON) into an object; anything else is a CorruptDocumentError naming the key. */
export function decodeJsonObject(key: string, bytes: Uint8Array): object {
	let text: string;
	try {
		const raw = bytes[0] === GZIP_MAGIC[0] && bytes[1] === GZIP_MAGIC[1] ? gunzipSync(bytes) : Buffer.from(bytes);
		text = raw.toString('utf8');
	} catch (cause) {
		throw new CorruptDocumentError(key, 'gzip data is damaged', { cause });
	}
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (cause) {
		throw new CorruptDocumentError(key, 'not valid JSON', { cause });
	}
	if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CorruptDocumentError(key, 'not a JSON object');
	return value;
}

/** Serialises a memory document, gzipped when asked. */
export const encodeDocument: (doc: MemoryDocument, options?: { gzip?: boolean }) => Buffer = encodeJson;

/**
 * Parses stored bytes into a validated memory document.
 * Anything else is a CorruptDocumentError naming the key: never an empty document.
 */
export function decodeDocument(key: string, bytes: Uint8Array): MemoryDocument {
	return validateDocument(key, decodeJsonObject(key, bytes));
}
