// Typed errors of the engine; nodes wrap them once (nodes/shared/errors.ts).
import { MemoryError } from './base';

export { MemoryError };

/** An ID (app, conversation, node, message) or key prefix that could not be used safely. */
export class InvalidIdError extends MemoryError {
	constructor(
		readonly field: string,
		readonly reason: string,
	) {
		super(`Invalid ${field}: ${reason}`);
	}
}

/** An option that would make a limit meaningless (NaN, infinite, negative) is refused, never ignored. */
export class InvalidOptionError extends MemoryError {
	constructor(
		readonly option: string,
		readonly reason: string,
	) {
		super(`Invalid ${option}: ${reason}`);
	}
}

/** An operation that embeds (vector or hybrid search, sync, regenerate) ran without an embedding model. */
export class NoEmbeddingModelError extends InvalidOptionError {
	constructor(readonly what: string) {
		super('embedder', `${what} needs an embedding model`);
		this.message = `${what} needs an embedding model: connect one to the node's Embedding input (the same model the Memory Base embeds with)`;
	}
}

/**
 * A stored object is encrypted with a key this storage does not hold (or encryption is off). It is
 * left untouched: never read as empty, never overwritten. Names the object and the key ID only.
 */
export class EncryptionKeyError extends MemoryError {
	constructor(
		readonly key: string,
		readonly keyId: string,
		haveKeys: boolean,
	) {
		super(
			haveKeys
				? `Stored memory "${key}" is encrypted with key ${keyId}, which is neither the current key nor one of the older keys of the LLM Memory Encryption Key credential. It was left untouched.`
				: `Stored memory "${key}" is encrypted with key ${keyId}: set Encryption to Encrypt with a Key, with the LLM Memory Encryption Key credential that holds it. It was left untouched.`,
		);
	}
}

/** Node memory needs a conversation ID; without one there is nothing to scope the history to. */
export class MissingConversationIdError extends MemoryError {
	constructor(message = 'Node memory needs a conversation ID, but none was given') {
		super(message);
	}
}

/** A stored document that does not parse, fails the schema or has an unknown version. It is never overwritten. */
export class CorruptDocumentError extends MemoryError {
	constructor(
		readonly key: string,
		readonly detail: string,
		options?: { cause?: unknown },
	) {
		super(
			`Stored memory document "${key}" is unreadable: ${detail}. It was left untouched.`,
			options,
		);
	}
}

/** The storage backend failed (network, permissions, disk). */
export class StorageError extends MemoryError {
	constructor(
		message: string,
		readonly key?: string,
		options?: { cause?: unknown },
	) {
		super(message, options);
	}
}

/** A conditional write lost a race: the stored version is not the one the writer read. */
export class ConflictError extends StorageError {}

/**
 * The storage did not answer in time. Unlike a refusal, the outcome is unknown: a write may still land
 * once the server recovers, so a caller must not tell the user it was not saved.
 */
export class StorageTimeoutError extends StorageError {}

/** The storage server does not enforce conditional writes, so concurrent turns could be lost. */
export class UnsafeStorageError extends StorageError {}

/**
 * A turn's answer was generated but the turn could not be written: `added` names it. The message says
 * whether it may still have been saved (a timeout is not a refusal).
 */
export class TurnNotSavedError extends MemoryError {
	constructor(
		message: string,
		readonly added: { messageId: string; userMessageId: string; parentMessageId: string | null },
		options?: { cause?: unknown },
	) {
		super(message, options);
	}
}

/** flush() kept losing races until its retries ran out. */
export class FlushConflictError extends MemoryError {
	constructor(
		readonly key: string,
		readonly attempts: number,
	) {
		super(
			`Could not save memory "${key}": ${attempts} attempts in a row conflicted with other writers. ` +
				'The turn was not saved; retry the execution.',
		);
	}
}

/** A message ID that is already stored (or pending) in this memory, with other content. */
export class DuplicateMessageIdError extends MemoryError {
	constructor(
		readonly key: string,
		readonly messageId: string,
	) {
		super(`Message ID "${messageId}" is already stored in memory "${key}"; a turn ID must be new`);
	}
}

/** An explicit parent message ID that is not in this memory. */
export class UnknownParentMessageError extends MemoryError {
	constructor(
		readonly key: string,
		readonly messageId: string,
	) {
		super(`Parent message ID "${messageId}" was not found in memory "${key}"`);
	}
}

/**
 * The summary of older turns could not be refreshed: the summarizing model failed or answered nothing.
 * Reported with the turn, never fatal: the turn runs without the new summary and nothing stored is lost.
 */
export class SummaryFailedError extends MemoryError {
	constructor(reason: string, options?: { cause?: unknown }) {
		super(`The summary of older turns could not be refreshed: ${reason}`, options);
	}
}

// ── Versioned data (src/snapshots) ─────────────────────────────────────────────────────────────

/** An argument that cannot be used (missing summary, bad version number, bad limit, …), naming the field. */
export class InvalidInputError extends MemoryError {
	constructor(
		readonly field: string,
		readonly reason: string,
	) {
		super(`Invalid ${field}: ${reason}`);
	}
}

/**
 * A value that is not plain JSON (undefined, a function, a symbol, NaN, Infinity, a BigInt, a cycle, a
 * Date or other class instance, a sparse array). `path` is the JSON Pointer of the offending value.
 */
export class NotJsonError extends InvalidInputError {
	constructor(
		field: string,
		readonly path: string,
		readonly problem: string,
	) {
		super(
			field,
			`${path === '' ? 'the value' : `"${path}"`} ${problem}; only JSON values can be stored`,
		);
	}
}

/** Data whose serialized JSON is larger than the limit. Nothing was written. */
export class DataTooLargeError extends InvalidInputError {
	constructor(
		field: string,
		readonly bytes: number,
		readonly limit: number,
		atLeast = false,
	) {
		super(
			field,
			`${atLeast ? 'at least ' : ''}${bytes} bytes as JSON, more than the limit of ${limit} bytes`,
		);
	}
}

/** One JSON Schema violation: where (JSON Pointer into the data) and what. */
export interface SchemaIssue {
	path: string;
	message: string;
}

/** Data that does not satisfy the configured JSON Schema. Nothing was written. */
export class SchemaViolationError extends MemoryError {
	constructor(readonly errors: SchemaIssue[]) {
		const shown = errors
			.slice(0, 5)
			.map((e) => `${e.path === '' ? '(root)' : e.path}: ${e.message}`)
			.join('; ');
		super(
			`Data does not match the JSON Schema: ${shown}${errors.length > 5 ? ` (and ${errors.length - 5} more)` : ''}`,
		);
	}
}

/** The configured JSON Schema itself cannot be compiled. */
export class InvalidSchemaError extends MemoryError {
	constructor(
		readonly reason: string,
		options?: { cause?: unknown },
	) {
		super(`Invalid JSON Schema: ${reason}`, options);
	}
}

/** A version number that does not exist in this conversation's versioned data. */
export class UnknownVersionError extends MemoryError {
	constructor(
		readonly scope: string,
		readonly version: number,
		/** Set when Keep Last N Versions cut history there: versions before it were deleted. */
		readonly deletedBefore?: number,
	) {
		super(
			`Version ${version} does not exist in versioned data "${scope}"` +
				(deletedBefore !== undefined
					? ` (Keep Last N Versions deleted the versions before ${deletedBefore})`
					: ''),
		);
	}
}

/** A branch that does not exist (only "main" exists without being created). */
export class UnknownBranchError extends MemoryError {
	constructor(
		readonly scope: string,
		readonly branch: string,
	) {
		super(
			`Branch "${branch}" does not exist in versioned data "${scope}"; create it with branch(name, fromVersion)`,
		);
	}
}

/** branch(name, …) for a name that is already a branch. */
export class BranchExistsError extends MemoryError {
	constructor(
		readonly scope: string,
		readonly branch: string,
	) {
		super(`Branch "${branch}" already exists in versioned data "${scope}"`);
	}
}

/** saveVersion with expectedVersion, but the branch has moved on (another writer saved first). Nothing was saved. */
export class VersionConflictError extends MemoryError {
	constructor(
		readonly branch: string,
		readonly expectedVersion: number | null,
		readonly currentVersion: number | null,
	) {
		super(
			`Branch "${branch}" is at ${currentVersion === null ? 'no version' : `version ${currentVersion}`}, ` +
				`not the expected ${expectedVersion === null ? 'empty branch' : `version ${expectedVersion}`}; ` +
				'nothing was saved. Read the current version and try again.',
		);
	}
}

/** A JSON Patch that is malformed or whose operation `index` cannot be applied. The input was not changed. */
export class PatchError extends MemoryError {
	constructor(
		readonly index: number,
		readonly op: string,
		readonly path: string,
		readonly reason: string,
	) {
		super(`JSON Patch operation ${index} (${op} ${JSON.stringify(path)}) failed: ${reason}`);
	}
}

/** import without overwrite into a conversation that already holds memory or versioned data. Nothing was written. */
export class ConversationExistsError extends MemoryError {
	constructor(
		readonly appId: string,
		readonly conversationId: string,
		readonly keys: string[],
	) {
		super(
			`Conversation "${conversationId}" of "${appId}" already holds ${keys.length} stored object(s) ` +
				`(e.g. "${keys[0]}"); import with { overwrite: true } to replace them`,
		);
	}
}

/** An export value that cannot be imported (wrong format, inconsistent history). Nothing was written. */
export class InvalidExportError extends MemoryError {
	constructor(
		readonly path: string,
		readonly reason: string,
	) {
		super(`Invalid conversation export at ${path === '' ? '(root)' : path}: ${reason}`);
	}
}

// ── Memory administration (src/admin) ──────────────────────────────────────────────────────────

/** A message ID that is not stored in the memory being read (e.g. the end of a thread to list). */
export class MessageNotFoundError extends MemoryError {
	constructor(
		readonly key: string,
		readonly messageId: string,
	) {
		super(`Message ID "${messageId}" was not found in memory "${key}"`);
	}
}

/** A conversation with no memory document stored (nothing to export). */
export class NoMemoryStoredError extends MemoryError {
	constructor(
		readonly appId: string,
		readonly conversationId: string,
	) {
		super(`No memory is stored for conversation "${conversationId}" of "${appId}"`);
	}
}

/**
 * A file whose text could not be read for the model (a corrupt or password-protected PDF, bytes that
 * are not text). The turn goes on: the model gets a note with `reason` instead of the text.
 */
export class UnreadableFileError extends MemoryError {
	constructor(
		readonly fileName: string,
		readonly reason: string,
		options?: { cause?: unknown },
	) {
		super(`The text of "${fileName}" could not be read: ${reason}`, options);
	}
}

// ── Memory Base (src/knowledge) ─────────────────────────────────────────────────────────────────

export * from './knowledge';

// ── Long-term facts (src/facts) ─────────────────────────────────────────────────────────────────

export * from './facts';
