import { NodeOperationError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

import { ConversationExistsError, InvalidIdError, MAX_ID_BYTES } from '../../src';

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
	const description =
		error instanceof InvalidIdError
			? ID_RULES
			: error instanceof ConversationExistsError
				? 'Nothing was written. Turn on "Overwrite" to replace the memory stored for this conversation, or import into another conversation ID.'
				: undefined;
	return nodeError(ctx, (error as Error)?.message ?? String(error), itemIndex, description);
}
