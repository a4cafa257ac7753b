import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { AddedTurn, BufferMemory, History, StoredDataVersion } from '../../../src';
import { nodeError } from '../../shared/errors';
import { openNodeMemory, savedWorkflowId } from '../../shared/memory-scope';
import type { ItemInput } from './input';
import { formatOutput } from './output';
import { modelNameOf } from './model';
import type { ChatModel } from './model';

export interface OpenedMemory {
	memory: BufferMemory;
	history: History;
}

/**
 * Step 1b: opens the item's memory and reads its history in one conditional read, which also checks
 * every ID the turn will use (format, new message ID, known parent) before the model is called.
 * Undefined when the item runs without memory.
 */
export async function readMemory(
	ctx: IExecuteFunctions,
	i: number,
	input: ItemInput,
	model: ChatModel,
): Promise<OpenedMemory | undefined> {
	if (input.mode === 'none' || !input.conversationId) return undefined;
	const at = { workflowId: savedWorkflowId(ctx, i), conversationId: input.conversationId };
	const memory = await openNodeMemory(ctx, i, input.mode, at, {
		model: modelNameOf(model),
		gzip: input.options.gzip === true,
	});
	const history = await memory.getHistoryPromptMessages({
		messageId: input.messageId,
		parentMessageId: input.parentMessageId,
		maxTokenLimit: input.options.maxHistoryTokens,
		messageLimit: input.options.window,
	});
	return { memory, history };
}

/**
 * Step 4: appends the turn and flushes it. A failed write keeps the answer (and `extra`, the output's
 * other fields) as a partial result. `dataVersion` is the versioned data the answer is based on.
 */
export async function persistTurn(
	ctx: IExecuteFunctions,
	i: number,
	opened: OpenedMemory,
	input: ItemInput,
	answer: string,
	dataVersion?: StoredDataVersion,
	extra: IDataObject = {},
): Promise<AddedTurn> {
	const added = await opened.memory.addMessages({
		messageId: input.messageId,
		parentMessageId: input.parentMessageId,
		userContent: input.prompt,
		userFiles: input.files,
		assistantContent: answer,
		dataVersion,
	});
	try {
		await opened.memory.flush();
	} catch (error) {
		const message = `The answer was generated but could not be saved to memory: ${(error as Error).message}`;
		throw Object.assign(nodeError(ctx, message, i), {
			partialResult: { ...formatOutput(input, answer, opened, added), ...extra },
		});
	}
	return added;
}
