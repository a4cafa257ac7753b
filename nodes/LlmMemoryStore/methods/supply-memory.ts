import type { ISupplyDataFunctions, SupplyData } from 'n8n-workflow';

import { ChatHistory, ConversationMemory, DEFAULT_MAX_TOKEN_LIMIT, NodeMemory } from '../../../src';
import { nodeError } from '../../shared/errors';
import { idParameter } from '../../shared/ids';
import { storageFor } from '../../shared/storage';
import { StoreMemory } from './store-memory';

export type StoreMode = 'conversation' | 'node';

interface Options {
	gzip?: boolean;
}

/** n8n's own wording for a missing session ID (nodes/memory getSessionId), adapted to our field names. */
function missingSessionId(ctx: ISupplyDataFunctions, itemIndex: number): Error {
	const fromChatTrigger =
		ctx.getNodeParameter('conversationIdType', itemIndex, 'fromInput') === 'fromInput';
	return nodeError(
		ctx,
		'No session ID found',
		itemIndex,
		fromChatTrigger
			? "Expected to find the session ID in an input field called 'sessionId' (this is what the chat trigger node outputs). To use something else, change the 'Session ID' parameter"
			: "Provide a key to use as session ID in the 'Session ID' parameter or use the 'Connected Chat Trigger Node' option to use the session ID from your Chat Trigger",
	);
}

function count(
	ctx: ISupplyDataFunctions,
	name: string,
	itemIndex: number,
	fallback: number,
	label: string,
	min: number,
): number {
	const value: unknown = ctx.getNodeParameter(name, itemIndex, fallback);
	if (typeof value !== 'number' || !Number.isFinite(value) || value < min)
		throw nodeError(
			ctx,
			`${label} must be a number ≥ ${min}, got ${JSON.stringify(value)}`,
			itemIndex,
		);
	return value;
}

/**
 * The memory an AI Agent, Chat Trigger, Respond to Chat or Chat Memory Manager gets from this sub-node.
 * Everything is checked here, before the caller does anything: the session ID (a missing one is n8n's
 * familiar "No session ID found"; objects and arrays are errors naming the field), the limits, the
 * storage. The documents and keys are those of LLM with Memory, so Conversation mode shares one history
 * per conversation with every LLM with Memory node and every store of the workflow in that mode.
 */
export async function supplyMemory(
	ctx: ISupplyDataFunctions,
	itemIndex: number,
): Promise<SupplyData> {
	const mode = ctx.getNodeParameter('memoryMode', itemIndex, 'conversation') as StoreMode;
	const sessionId = idParameter(ctx, 'conversationId', itemIndex, 'Session ID');
	if (!sessionId) throw missingSessionId(ctx, itemIndex);
	const limits = {
		messageLimit: count(ctx, 'contextWindowLength', itemIndex, 10, 'Context Window Length', 1),
		maxTokenLimit: count(
			ctx,
			'maxHistoryTokens',
			itemIndex,
			DEFAULT_MAX_TOKEN_LIMIT,
			'Max History Tokens',
			0,
		),
	};
	const workflowId = ctx.getWorkflow().id;
	if (!workflowId)
		throw nodeError(ctx, 'Save the workflow first: memory is kept per workflow ID', itemIndex);
	const options = ctx.getNodeParameter('options', itemIndex, {}) as Options;
	const memoryOptions = {
		storage: await storageFor(ctx, itemIndex),
		gzip: options.gzip === true,
		onWarning: (m: string) => ctx.logger.warn(m),
	};
	const memory =
		mode === 'node'
			? new NodeMemory(workflowId, sessionId, ctx.getNode().id, memoryOptions)
			: new ConversationMemory(workflowId, sessionId, memoryOptions);
	const history = new ChatHistory(memory);
	const store = new StoreMemory(ctx, itemIndex, history, limits, {
		mode,
		sessionId,
		key: memory.key,
	});
	// A message left waiting for its answer (a Chat Memory Manager insert ending with a user message) is
	// stored when the calling node is done; n8n runs this after the node's execute().
	return { response: store, closeFunction: async () => await store.chatHistory.flushOpen() };
}
