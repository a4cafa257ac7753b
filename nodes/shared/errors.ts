import { NodeOperationError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

import {
	ConversationExistsError,
	InvalidIdError,
	SchemaViolationError,
	UnknownFactError,
	VersionConflictError,
} from '../../src/errors';
import {
	DimensionMismatchError,
	IndexDamagedError,
	MemoryBaseDeletingError,
	SyncCancelledError,
	SyncRunningError,
} from '../../src/errors/knowledge';
import { MAX_ID_BYTES } from '../../src/keys/ids';

/** What a node needs to raise errors: its own description. */
interface HasNode {
	getNode(): INode;
}

/**
 * A NodeOperationError that keeps our message. (n8n replaces messages that mention an errno code,
 * like EISDIR or ECONNREFUSED, with generic text, which would hide what failed and where.)
 */
export function nodeError(
	ctx: HasNode,
	message: string,
	itemIndex?: number,
	description?: string,
): NodeOperationError {
	const error = new NodeOperationError(ctx.getNode(), message, { itemIndex, description });
	error.message = message;
	return error;
}

export const ID_RULES = `IDs must be strings (or numbers), must not contain / \\ .. or control characters, be empty or exceed ${MAX_ID_BYTES} bytes.`;

/** The one place where an engine error becomes a node error (typed errors stay typed until here). */
export function asNodeError(ctx: HasNode, error: unknown, itemIndex: number): NodeOperationError {
	if (error instanceof NodeOperationError) return error;
	return nodeError(ctx, (error as Error)?.message ?? String(error), itemIndex, describe(error));
}

/** What a node adds to an engine error's message: the rules it broke, or how to go on. */
function describe(error: unknown): string | undefined {
	if (error instanceof InvalidIdError) return ID_RULES;
	if (error instanceof ConversationExistsError)
		return 'Nothing was written. Turn on "Overwrite" to replace the memory stored for this conversation, or import into another session ID.';
	if (error instanceof SchemaViolationError)
		return `Nothing was saved. Every violation: ${error.errors
			.map((e) => `${e.path === '' ? '(root)' : e.path}: ${e.message}`)
			.join('; ')}`;
	if (error instanceof UnknownFactError)
		return 'Nothing was changed. Get Facts lists the current facts with their IDs (with Include Superseded, every fact and its status); a superseded or retired fact stays as it is: add a new one, or roll back.';
	if (error instanceof VersionConflictError)
		return 'Another writer saved a version first. Read the current version (Get Current) and try again.';
	// Only the Memory Base raises these.
	if (error instanceof SyncRunningError)
		return 'Only one sync per conversation (and per whole base) runs at a time; the other one was refused without changing anything (like HTTP 409 Conflict). A crashed sync’s lock expires after the Lock Duration.';
	if (error instanceof SyncCancelledError || error instanceof MemoryBaseDeletingError)
		return 'Delete Memory Base is running for this base.';
	if (error instanceof DimensionMismatchError || error instanceof IndexDamagedError)
		return 'Status shows what is stored; Regenerate rebuilds the knowledge base from the capture log.';
	return undefined;
}
