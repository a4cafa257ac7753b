import { z } from 'zod';

import { CorruptDocumentError } from '../errors';
import { expireAfterDaysSchema } from './retention';

export const DOCUMENT_VERSION = 1;

// Unknown fields are kept (loose objects) so a rewrite never drops what a newer writer added.
/** The fields every stored file has, in this package's form and in Dify's. */
const fileFields = {
	type: z.enum(['image', 'audio', 'video', 'document', 'custom']),
	transfer_method: z.enum(['local_file', 'remote_url', 'tool_file']),
	key: z.string().min(1).optional(),
	belongs_to: z.enum(['user', 'assistant']),
	/** The file's text as the model gets it (text files and PDFs), cut to the per-file token limit. */
	text: z.string().optional(),
	/** The text was cut: the model is told so. */
	text_truncated: z.boolean().optional(),
	/** Why no text could be read (a corrupt PDF, a scanned one): the model gets this note instead. */
	text_error: z.string().optional(),
	/** A PDF's page count (what a PDF sent as a file part is counted by). */
	pages: z.number().int().nonnegative().optional(),
};
const fileSize = z.number().int().nonnegative();

/**
 * A file as this package writes it: its bytes copied into storage under `key` (local and tool files), or
 * its `url` (remote files), with its MIME type, name and size. Appended messages must use this form.
 */
export const writtenFileSchema = z
	.looseObject({
		...fileFields,
		url: z.string().min(1).optional(),
		mime_type: z.string(),
		name: z.string(),
		size: fileSize,
	})
	.refine((f) => (f.transfer_method === 'remote_url' ? f.url !== undefined : f.key !== undefined), {
		message: 'remote_url files need "url"; local_file and tool_file files need "key"',
	});

/**
 * A file as the reader accepts it: one this package wrote, or a reference of Dify's memory document
 * format, which locates a file by `upload_file_id` (a Dify upload), `tool_file_id` (a Dify tool file) or
 * `url` instead of `key`, and may leave out `mime_type`, `name` and `size` (and set the locators it does
 * not use to null). Such a file is read and kept as it is; history shows it by URL or as a note.
 */
export const storedFileSchema = z
	.looseObject({
		...fileFields,
		url: z.string().min(1).nullish(),
		upload_file_id: z.string().min(1).nullish(),
		tool_file_id: z.string().min(1).nullish(),
		mime_type: z.string().optional(),
		name: z.string().optional(),
		size: fileSize.optional(),
	})
	.superRefine((f, ctx) => {
		if (f.key === undefined) {
			if (f.url == null && f.upload_file_id == null && f.tool_file_id == null)
				ctx.addIssue({
					code: 'custom',
					message:
						'remote_url files need "url"; local_file and tool_file files need "key" (or, in Dify\'s memory document format, "upload_file_id" or "tool_file_id")',
				});
			return;
		}
		for (const field of ['mime_type', 'name', 'size'] as const)
			if (f[field] === undefined)
				ctx.addIssue({
					code: 'custom',
					path: [field],
					message: `files with "key" need "${field}"`,
				});
	});

/**
 * The file as this package wrote it, or undefined for a reference of Dify's memory document format
 * (located without a `key`: by `upload_file_id`, `tool_file_id`, or a `url` without the MIME type, name
 * and size this package always writes).
 */
export function writtenFile(f: StoredFile): WrittenFile | undefined {
	if (f.key !== undefined) return f as WrittenFile;
	if (f.upload_file_id != null || f.tool_file_id != null) return undefined;
	const complete = f.url != null && f.mime_type !== undefined && f.name !== undefined;
	return complete && f.size !== undefined ? (f as WrittenFile) : undefined;
}

/** A tool call an assistant message asked for (LangChain's flat `tool_calls` shape). */
export const storedToolCallSchema = z.looseObject({
	id: z.string().min(1),
	name: z.string().min(1),
	args: z.record(z.string(), z.unknown()),
});

/**
 * The versioned data an assistant message's answer is based on (LLM with Memory's Versioned Data
 * option): the version its turn produced (`changed`: true) or the version it read and left as it was.
 */
export const storedDataVersionSchema = z.looseObject({
	version: z.number().int().positive(),
	branch: z.string().min(1),
	changed: z.boolean(),
});

/**
 * Version 1, extended compatibly for tool turns: an assistant message may carry `tool_calls`, and a
 * `tool` message carries the result with `tool_call_id` (and the tool's `name`); and for versioned
 * data: an assistant message may carry `data_version`. Documents without them read as before; unknown
 * fields are kept (so an older reader keeps `data_version` too).
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
		data_version: storedDataVersionSchema.optional(),
	})
	.refine((m) => m.role !== 'tool' || m.tool_call_id !== undefined, {
		message: 'tool messages need "tool_call_id"',
	})
	.refine((m) => m.tool_calls === undefined || m.role === 'assistant', {
		message: 'only assistant messages carry "tool_calls"',
	})
	.refine((m) => m.data_version === undefined || m.role === 'assistant', {
		message: 'only assistant messages carry "data_version"',
	});

/** Message IDs must be unique within a document: a thread is walked by them. */
function checkUniqueIds(
	messages: readonly { message_id: string }[],
	ctx: z.RefinementCtx,
	from = 0,
	seen = new Set<string>(),
): void {
	for (let i = from; i < messages.length; i++) {
		const id = messages[i].message_id;
		if (seen.has(id))
			ctx.addIssue({
				code: 'custom',
				path: ['messages', i, 'message_id'],
				message: `duplicate message_id "${id}"`,
			});
		seen.add(id);
	}
}

/**
 * Retention stored with a memory (store/retention.ts): expire this many days after `updated_at`, the
 * time of the last write. Written only with a rule, so documents without one keep their former shape.
 */
const retentionFields = {
	expire_after_days: expireAfterDaysSchema.optional(),
	updated_at: z.iso.datetime({ offset: true }).optional(),
};

/** A rule needs the time it is counted from: without it the memory would silently never expire. */
function checkRetention(
	doc: { expire_after_days?: number; updated_at?: string },
	ctx: z.RefinementCtx,
) {
	if (doc.expire_after_days !== undefined && doc.updated_at === undefined)
		ctx.addIssue({
			code: 'custom',
			path: ['updated_at'],
			message: 'a document with "expire_after_days" needs "updated_at"',
		});
}

export const memoryDocumentSchema = z
	.looseObject({
		version: z.literal(DOCUMENT_VERSION),
		messages: z.array(storedMessageSchema),
		...retentionFields,
	})
	.superRefine((doc, ctx) => {
		checkUniqueIds(doc.messages, ctx);
		checkRetention(doc, ctx);
	});

export type StoredFile = z.infer<typeof storedFileSchema>;
export type WrittenFile = z.infer<typeof writtenFileSchema>;
export type StoredMessage = z.infer<typeof storedMessageSchema>;
export type StoredToolCall = z.infer<typeof storedToolCallSchema>;
export type StoredDataVersion = z.infer<typeof storedDataVersionSchema>;
export type MemoryDocument = z.infer<typeof memoryDocumentSchema>;

export function emptyDocument(): MemoryDocument {
	return { version: DOCUMENT_VERSION, messages: [] };
}

/** The reader's verdict on a document: the same checks decodeDocument applies after parsing. */
export function validateDocument(key: string, value: unknown): MemoryDocument {
	const version = (value as { version?: unknown }).version;
	if (version === 3)
		throw new CorruptDocumentError(
			key,
			'version 3 is a head whose older messages are sealed in other objects, not a whole document; read it with decodeHead, or the whole conversation with exportDocument',
		);
	if (version !== DOCUMENT_VERSION)
		throw new CorruptDocumentError(
			key,
			`unknown document version ${JSON.stringify(version)} (this package reads version ${DOCUMENT_VERSION})`,
		);
	const parsed = memoryDocumentSchema.safeParse(value);
	if (!parsed.success) {
		const issue = parsed.error.issues[0];
		throw new CorruptDocumentError(
			key,
			`schema check failed at ${issue.path.join('.') || '(root)'}: ${issue.message}`,
		);
	}
	return parsed.data;
}

/**
 * Checks messages about to be appended to a document that was itself validated (read and checked,
 * or written by this check): each must pass the reader's message schema, keep its files in this
 * package's own form (writtenFileSchema), and have an ID the document does not hold yet. So a document
 * the reader would refuse is never written, at the cost of the new messages only.
 */
export function assertAppendable(
	key: string,
	existingIds: (id: string) => boolean,
	added: readonly StoredMessage[],
): void {
	const seen = new Set<string>();
	for (const m of added) {
		const parsed = storedMessageSchema.safeParse(m);
		const files = parsed.success ? z.array(writtenFileSchema).safeParse(m.files) : undefined;
		const error = !parsed.success
			? parsed.error
			: files?.success === false
				? files.error
				: undefined;
		if (error) {
			const issue = error.issues[0];
			const at = [...(parsed.success ? ['files'] : []), ...issue.path].join('.');
			throw new CorruptDocumentError(
				key,
				`refusing to write message "${m.message_id}": ${at}: ${issue.message}`,
			);
		}
		if (existingIds(m.message_id) || seen.has(m.message_id))
			throw new CorruptDocumentError(
				key,
				`refusing to write duplicate message_id "${m.message_id}"`,
			);
		seen.add(m.message_id);
	}
}

// ---------------------------------------------------------------------------------------------------
// Version 3: a head document plus write-once sealed objects (docs/format.md). Version 2 is never
// written: Dify's memory document design uses it as its example of a version written by a newer
// package, which is refused.

/** Version of a head document whose older messages are sealed into write-once objects. */
export const LOG_DOCUMENT_VERSION = 3;

/**
 * A head's (or an index's) reference to one sealed object: a segment of messages (level 0) or an
 * index of references (level ≥ 1). `first_parent` is the parent of the first message beneath it;
 * `linear` says every message beneath follows the one before it and the first is a user message, so a
 * history walk that only counts dropped turns can pass over it using `turns` (answered turns beneath).
 */
export const sealedRefSchema = z.looseObject({
	key: z.string().min(1),
	level: z.number().int().nonnegative(),
	count: z.number().int().positive(),
	first_id: z.string().min(1),
	last_id: z.string().min(1),
	first_parent: z.string().min(1).nullable(),
	linear: z.boolean(),
	turns: z.number().int().nonnegative(),
	bloom: z.string().optional(),
});

export const logHeadSchema = z
	.looseObject({
		version: z.literal(LOG_DOCUMENT_VERSION),
		/** The newest messages (the tail), oldest first. */
		messages: z.array(storedMessageSchema),
		/** Sealed objects, oldest first. */
		sealed: z.array(sealedRefSchema),
		/** How many messages the sealed objects hold: the ordinal of messages[0]. */
		sealed_count: z.number().int().nonnegative(),
		...retentionFields,
	})
	.superRefine((doc, ctx) => {
		checkUniqueIds(doc.messages, ctx);
		checkRetention(doc, ctx);
		const total = doc.sealed.reduce((n, r) => n + r.count, 0);
		if (total !== doc.sealed_count)
			ctx.addIssue({
				code: 'custom',
				path: ['sealed_count'],
				message: `is ${doc.sealed_count}, but the sealed objects hold ${total} messages`,
			});
		if (doc.sealed.length > 0 && doc.messages.length === 0)
			ctx.addIssue({
				code: 'custom',
				path: ['messages'],
				message: 'a head with sealed objects keeps at least its newest message',
			});
	});

export const segmentSchema = z.looseObject({
	version: z.literal(LOG_DOCUMENT_VERSION),
	kind: z.literal('segment'),
	head: z.string().min(1),
	first: z.number().int().nonnegative(),
	messages: z.array(storedMessageSchema).min(1),
});

export const indexSchema = z.looseObject({
	version: z.literal(LOG_DOCUMENT_VERSION),
	kind: z.literal('index'),
	head: z.string().min(1),
	first: z.number().int().nonnegative(),
	level: z.number().int().positive(),
	refs: z.array(sealedRefSchema).min(1),
});

export type SealedRef = z.infer<typeof sealedRefSchema>;
export type LogHead = z.infer<typeof logHeadSchema>;
export type SealedSegment = z.infer<typeof segmentSchema>;
export type SealedIndex = z.infer<typeof indexSchema>;
/** What a memory key holds: a single document (version 1) or a head with sealed objects (version 3). */
export type HeadDocument = MemoryDocument | LogHead;

/** A head's sealed references (none for a version-1 document). */
export function sealedRefsOf(doc: HeadDocument): readonly SealedRef[] {
	return doc.version === LOG_DOCUMENT_VERSION ? doc.sealed : [];
}

/** How many messages precede the head's own: the position of doc.messages[0] in the conversation. */
export function sealedCountOf(doc: HeadDocument): number {
	return doc.version === LOG_DOCUMENT_VERSION ? doc.sealed_count : 0;
}

function schemaError(key: string, error: z.ZodError): CorruptDocumentError {
	const issue = error.issues[0];
	return new CorruptDocumentError(
		key,
		`schema check failed at ${issue.path.join('.') || '(root)'}: ${issue.message}`,
	);
}

/** The reader's verdict on whatever a memory key holds: a version-1 document or a version-3 head. */
export function validateHead(
	key: string,
	value: unknown,
	checkRef: (ref: SealedRef, path: string) => void,
): HeadDocument {
	const version = (value as { version?: unknown }).version;
	if (version === DOCUMENT_VERSION) return validateDocument(key, value);
	if (version !== LOG_DOCUMENT_VERSION)
		throw new CorruptDocumentError(
			key,
			`unknown document version ${JSON.stringify(version)} (this package reads versions ${DOCUMENT_VERSION} and ${LOG_DOCUMENT_VERSION})`,
		);
	const parsed = logHeadSchema.safeParse(value);
	if (!parsed.success) throw schemaError(key, parsed.error);
	parsed.data.sealed.forEach((ref, i) => checkRef(ref, `sealed.${i}`));
	return parsed.data;
}

/** Parses a sealed object; `kind` says which one the reference promised. */
export function validateSealed(
	key: string,
	value: unknown,
	kind: 'segment' | 'index',
): SealedSegment | SealedIndex {
	const version = (value as { version?: unknown }).version;
	if (version !== LOG_DOCUMENT_VERSION)
		throw new CorruptDocumentError(
			key,
			`unknown sealed object version ${JSON.stringify(version)} (this package reads version ${LOG_DOCUMENT_VERSION})`,
		);
	const parsed = (kind === 'segment' ? segmentSchema : indexSchema).safeParse(value);
	if (!parsed.success) throw schemaError(key, parsed.error);
	return parsed.data;
}
