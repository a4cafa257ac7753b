import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { TurnNotSavedError } from '../../../src/errors';
import { DEFAULT_MAX_TOKEN_LIMIT } from '../../../src/history/truncate';
import { ChatTurn } from '../../../src/turn/turn';
import type { TurnOptions } from '../../../src/turn/turn';
import type { TurnFacts } from '../../../src/turn/facts';
import type { BufferMemory } from '../../../src/history/buffer-memory';
import type { AddedTurn } from '../../../src/history/memory-types';
import type { StoredDataVersion } from '../../../src/store/schema';
import { asNodeError, nodeError } from '../../shared/errors';
import { turnFacts } from '../../shared/facts/facts';
import { longTermFor } from '../../shared/long-term/long-term';
import { openNodeMemory, savedWorkflowId } from '../../shared/memory-scope';
import { storageFor } from '../../shared/storage';
import { modelSummarizer } from '../../shared/summary';
import type { ItemInput } from './input';
import { formatOutput } from './output';
import { modelNameOf } from './model';
import type { ChatModel, ModelAnswer } from './model';

/** The item's memory and its turn, assembled by the engine (history, summary, recall, data). */
export interface OpenedMemory {
	memory: BufferMemory;
	turn: ChatTurn;
	/** Remember Facts: whose facts the turn shows and learns. */
	facts?: TurnFacts;
}

/**
 * Step 1b: opens the item's memories and assembles the turn (one conditional read of the history, which
 * also checks every ID the turn will use, beside the recall and the versioned data) before the model is
 * called. Undefined when the item runs without memory. What went wrong without stopping the turn
 * (a summary, a recall) is said on the output pane.
 */
export async function readMemory(
	ctx: IExecuteFunctions,
	i: number,
	input: ItemInput,
	model: ChatModel,
): Promise<OpenedMemory | undefined> {
	if (input.mode === 'none' || !input.conversationId) return undefined;
	const workflowId = savedWorkflowId(ctx, i);
	const at = { workflowId, conversationId: input.conversationId };
	const modelName = modelNameOf(model);
	const memory = await openNodeMemory(ctx, i, input.mode, at, {
		model: modelName,
		gzip: input.options.gzip === true,
		expireAfterDays: input.expireAfterDays,
		files: {
			maxTokensPerFile: input.options.maxTokensPerFile,
			pdfAndAudio: input.options.pdfAndAudio,
		},
	});
	const conversationId = input.conversationId;
	const options = await turnOptions(ctx, i, { ...input, conversationId }, model, memory);
	const turn = await ChatTurn.open(options);
	for (const w of turn.warnings) warn(ctx, w);
	return { memory, turn, facts: options.facts };
}

/** What the engine assembles the item's turn from: its history, summary, recall, facts and data. */
async function turnOptions(
	ctx: IExecuteFunctions,
	i: number,
	input: ItemInput & { conversationId: string },
	model: ChatModel,
	memory: BufferMemory,
): Promise<TurnOptions> {
	const workflowId = savedWorkflowId(ctx, i);
	const modelName = modelNameOf(model);
	// The node's own model summarizes and reads the turns for facts (one call, its reply's text).
	const call = modelSummarizer(model, ctx.getExecutionCancelSignal());
	const source = { workflowId, conversationId: input.conversationId };
	return {
		memory,
		read: {
			messageId: input.messageId,
			parentMessageId: input.parentMessageId,
			maxTokenLimit: input.options.maxHistoryTokens,
			messageLimit: input.options.window,
		},
		...(input.summary ? { summary: { ...input.summary, summarize: call } } : {}),
		budget: input.options.maxHistoryTokens ?? DEFAULT_MAX_TOKEN_LIMIT,
		model: modelName,
		...(input.longTerm
			? {
					longTerm: {
						memory: await longTermFor(ctx, i, input.longTerm, input.conversationId),
						query: input.prompt,
						model: modelName,
					},
				}
			: {}),
		...(input.facts
			? {
					facts: await turnFacts(
						ctx,
						i,
						input.facts,
						input.mode === 'node' ? { ...source, nodeId: ctx.getNode().id } : source,
						call,
					),
				}
			: {}),
		...(input.versioned
			? {
					data: {
						storage: await storageFor(ctx, i),
						...source,
						settings: input.versioned,
					},
				}
			: {}),
	};
}

/** A warning on the output pane (and in n8n's log): the turn goes on, but not silently. */
export function warn(ctx: IExecuteFunctions, message: string): void {
	ctx.logger.warn(message);
	ctx.addExecutionHints?.({ message, location: 'outputPane', type: 'warning' });
}

/**
 * Step 4: saves the turn, with the files the user sent and those the model returned, then captures it
 * into long-term memory. A failed write keeps the answer (and `extra`, the output's other fields) as a
 * partial result. `dataVersion` is the versioned data the answer is based on.
 */
export async function persistTurn(
	ctx: IExecuteFunctions,
	i: number,
	opened: OpenedMemory,
	input: ItemInput,
	reply: string | ModelAnswer,
	dataVersion?: StoredDataVersion,
	extra: IDataObject = {},
): Promise<AddedTurn> {
	const { text: answer, files } = typeof reply === 'string' ? { text: reply, files: [] } : reply;
	let added: AddedTurn;
	try {
		added = await opened.turn.save({
			messageId: input.messageId,
			parentMessageId: input.parentMessageId,
			userContent: input.prompt,
			userFiles: input.files,
			assistantContent: answer,
			assistantFiles: files,
			dataVersion,
		});
	} catch (error) {
		if (!(error instanceof TurnNotSavedError)) throw asNodeError(ctx, error, i);
		throw Object.assign(nodeError(ctx, error.message, i), {
			partialResult: { ...formatOutput(input, answer, opened, error.added), ...extra },
		});
	}
	const captured = await opened.turn.capture({
		userText: input.prompt,
		answer,
		userMessageId: added.userMessageId,
		messageId: added.messageId,
	});
	if (captured instanceof Error) warn(ctx, captured.message);
	// Facts are read from the saved turns (a model call only once enough is unread); a failure is a
	// warning and leaves the turns unread for the next try.
	const learned = await opened.turn.learn(added);
	const failure =
		learned instanceof Error
			? learned.message
			: learned?.error && `Facts were not learned this turn: ${learned.error}`;
	if (failure) warn(ctx, failure);
	return added;
}
