import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';

import { CorruptDocumentError } from './errors';

export const DOCUMENT_VERSION = 1;

// Unknown fields are kept (loose objects) so a rewrite never drops what a newer writer added.
export const storedFileSchema = z
	.looseObject({
		type: z.enum(['image', 'audio', 'video', 'document', 'custom']),
		transfer_method: z.enum(['local_file', 'remote_url', 'tool_file']),
		key: z.string().min(1).optional(),
		url: z.string().min(1).optional(),
		mime_type: z.string(),
		name: z.string(),
		size: z.number().int().nonnegative(),
		belongs_to: z.enum(['user', 'assistant']),
	})
	.refine((f) => (f.transfer_method === 'remote_url' ? f.url !== undefined : f.key !== undefined), {
		message: 'remote_url files need "url"; local_file and tool_file files need "key"',
	});

export const storedMessageSchema = z.looseObject({
	message_id: z.string().min(1),
	parent_message_id: z.string().min(1).nullable(),
	role: z.enum(['user', 'assistant']),
	content: z.string(),
	files: z.array(storedFileSchema),
	token_count: z.number().int().nonnegative(),
	created_at: z.iso.datetime({ offset: true }),
});

export const memoryDocumentSchema = z
	.looseObject({
		version: z.literal(DOCUMENT_VERSION),
		messages: z.array(storedMessageSchema),
	})
	.superRefine((doc, ctx) => {
		const seen = new Set<string>();
		for (const [i, m] of doc.messages.entries()) {
			if (seen.has(m.message_id))
				ctx.addIssue({ code: 'custom', path: ['messages', i, 'message_id'], message: `duplicate message_id "${m.message_id}"` });
			seen.add(m.message_id);
		}
	});

export type StoredFile = z.infer<typeof storedFileSchema>;
export type StoredMessage = z.infer<typeof storedMessageSchema>;
export type MemoryDocument = z.infer<typeof memoryDocumentSchema>;

export function emptyDocument(): MemoryDocument {
	return { version: DOCUMENT_VERSION, messages: [] };
}

const GZIP_MAGIC = [0x1f, 0x8b];

/** Serialises a document, gzipped when asked. */
export function encodeDocument(doc: MemoryDocument, options: { gzip?: boolean } = {}): Buffer {
	const json = Buffer.from(JSON.stringify(doc), 'utf8');
	return options.gzip ? gzipSync(json) : json;
}

/**
 * Parses stored bytes (plain or gzipped JSON) into a validated document.
 * Anything else is a CorruptDocumentError naming the key: never an empty document.
 */
export function decodeDocument(key: string, bytes: Uint8Array): MemoryDocument {
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
	if (typeof value !== 'object' || value === null || Array.isArray(value))
		throw new CorruptDocumentError(key, 'not a JSON object');
	const version = (value as { version?: unknown }).version;
	if (version !== DOCUMENT_VERSION)
		throw new CorruptDocumentError(
			key,
			`unknown document version ${JSON.stringify(version)} (this package reads version ${DOCUMENT_VERSION})`,
		);
	const parsed = memoryDocumentSchema.safeParse(value);
	if (!parsed.success) {
		const issue = parsed.error.issues[0];
		throw new CorruptDocumentError(key, `schema check failed at ${issue.path.join('.') || '(root)'}: ${issue.message}`);
	}
	return parsed.data;
}
