/** Base class: every error the memory engine raises on purpose. */
export class MemoryError extends Error {
	constructor(message: string, options?: { cause?: unknown }) {
		super(message, options);
		this.name = new.target.name;
	}
}

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

/** The storage server does not enforce conditional writes, so concurrent turns could be lost. */
export class UnsafeStorageError extends StorageError {}

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
