import { z } from 'zod';

import { CorruptDocumentError } from '../errors';

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

/** A tool call an assistant message asked for (LangChain's flat `tool_calls` shape). */
export const storedToolCallSchema = z.looseObject({
	id: z.string().min(1),
	name: z.string().min(1),
	args: z.record(z.string(), z.unknown()),
});

/**
 * Version 1, extended compatibly for tool turns: an assistant message may carry `tool_calls`, and a
 * `tool` message carries the result with `tool_call_id` (and the tool's `name`). Documents without
 * them read as before; unknown fields are kept.
 */
export const storedMessageSchema = z
	.looseObject({
		message_id: z.string().min(1),
		parent_message_id: z.string().min(1).nullable(),
		role: z.enum(['user', 'assistant', 'tool']),
		content: z.string(),
		files: z.array(storedFileSchema),
		token_count: z.number().int().nonnegative(),
		created_at: z.iso.datetime({ offset: true }),
		tool_calls: z.array(storedToolCallSchema).optional(),
		tool_call_id: z.string().min(1).optional(),
		name: z.string().optional(),
	})
	.refine((m) => m.role !== 'tool' || m.tool_call_id !== undefined, { message: 'tool messages need "tool_call_id"' })
	.refine((m) => m.tool_calls === undefined || m.role === 'assistant', { message: 'only assistant messages carry "tool_calls"' });

/** Message IDs must be unique within a document: a thread is walked by them. */
function checkUniqueIds(messages: readonly { message_id: string }[], ctx: z.RefinementCtx, from = 0, seen = new Set<string>()): void {
	for (let i = from; i < messages.length; i++) {
		const id = messages[i].message_id;
		if (seen.has(id)) ctx.addIssue({ code: 'custom', path: ['messages', i, 'message_id'], message: `duplicate message_id "${id}"` });
		seen.add(id);
	}
}

export const memoryDocumentSchema = z
	.looseObject({
		version: z.literal(DOCUMENT_VERSION),
		messages: z.array(storedMessageSchema),
	})
	.superRefine((doc, ctx) => checkUniqueIds(doc.messages, ctx));

export type StoredFile = z.infer<typeof storedFileSchema>;
export type StoredMessage = z.infer<typeof storedMessageSchema>;
export type StoredToolCall = z.infer<typeof storedToolCallSchema>;
export type MemoryDocument = z.infer<typeof memoryDocumentSchema>;

export function emptyDocument(): MemoryDocument {
	return { version: DOCUMENT_VERSION, messages: [] };
}

/** The reader's verdict on a document: the same checks decodeDocument applies after parsing. */
export function validateDocument(key: string, value: unknown): MemoryDocument {
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

/**
 * Checks messages about to be appended to a document that was itself validated (read and checked,
 * or written by this check): each must pass the reader's message schema and have an ID the document
 * does not hold yet. So a document the reader would refuse is never written, at the cost of the new
 * messages only.
 */
export function assertAppendable(key: string, existingIds: (id: string) => boolean, added: readonly StoredMessage[]): void {
	const seen = new Set<string>();
	for (const m of added) {
		const parsed = storedMessageSchema.safeParse(m);
		if (!parsed.success) {
			const issue = parsed.error.issues[0];
			throw new CorruptDocumentError(key, `refusing to write message "${m.message_id}": ${issue.path.join('.')}: ${issue.message}`);
		}
		if (existingIds(m.message_id) || seen.has(m.message_id))
			throw new CorruptDocumentError(key, `refusing to write duplicate message_id "${m.message_id}"`);
		seen.add(m.message_id);
	}
}
