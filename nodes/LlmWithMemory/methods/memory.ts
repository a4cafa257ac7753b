import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { DEFAULT_MAX_TOKEN_LIMIT, StorageTimeoutError } from '../../../src';
import type {
	AddedTurn,
	BufferMemory,
	CaptureResult,
	History,
	StoredDataVersion,
} from '../../../src';
import { failedRecall, LongTermMemory, optionalEmbedder } from '../../shared/long-term/long-term';
import type { Recalled } from '../../shared/long-term/long-term';
import { storageFor } from '../../shared/storage';
import { nodeError } from '../../shared/errors';
import { openNodeMemory, savedWorkflowId } from '../../shared/memory-scope';
import { modelSummarizer, rereadReport } from '../../shared/summary';
import type { ItemInput } from './input';
import { formatOutput } from './output';
import { modelNameOf } from './model';
import type { ChatModel, ModelAnswer } from './model';

export interface OpenedMemory {
	memory: BufferMemory;
	history: History;
	/** Long-Term Memory of the conversation, when the option is on. */
	longTerm?: LongTermMemory;
	/** What it recalled for this turn (the section goes into the system message). */
	recalled?: Recalled;
	/** What capturing the turn gave (or why it failed), once the turn is saved. */
	captured?: CaptureResult | Error;
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
		expireAfterDays: input.expireAfterDays,
		files: {
			maxTokensPerFile: input.options.maxTokensPerFile,
			pdfAndAudio: input.options.pdfAndAudio,
		},
	});
	const summarize = modelSummarizer(model, ctx.getExecutionCancelSignal());
	// refresh false: a read again with less room uses the summary as stored, never a second call.
	const read = (maxTokenLimit = input.options.maxHistoryTokens, refresh = true) =>
		memory.getHistoryPromptMessages({
			messageId: input.messageId,
			parentMessageId: input.parentMessageId,
			maxTokenLimit,
			messageLimit: input.options.window,
			...(input.summary ? { summary: { ...input.summary, summarize, refresh } } : {}),
		});
	if (!input.longTerm) return { memory, history: warnSummary(ctx, await read()) };
	const longTerm = new LongTermMemory(
		await storageFor(ctx, i),
		input.longTerm,
		input.conversationId,
		await optionalEmbedder(ctx),
	);
	// The history and the search are independent reads: side by side.
	const [history, found] = await Promise.all([
		read(),
		longTerm.search(input.prompt).catch((error: unknown) => error as Error),
	]);
	warnSummary(ctx, history);
	if (found instanceof Error) {
		warn(ctx, `Long-term memory was not recalled: ${found.message}`);
		return { memory, history, longTerm, recalled: failedRecall(found) };
	}
	const recalled = longTerm.section(found, history, modelNameOf(model));
	// The recalled section counts against the history's budget: the oldest turns give way.
	const budget = input.options.maxHistoryTokens ?? DEFAULT_MAX_TOKEN_LIMIT;
	const used = history.tokens + (history.summary?.tokens ?? 0);
	if (used + recalled.tokens <= budget) return { memory, history, longTerm, recalled };
	const again = await read(Math.max(0, budget - recalled.tokens), false);
	if (history.summary && again.summary)
		again.summary = rereadReport(history.summary, again.summary);
	return { memory, history: again, longTerm, recalled };
}

/** A summary that could not be made (or read) is said in the output pane; the turn goes on. */
function warnSummary(ctx: IExecuteFunctions, history: History): History {
	if (history.summary?.error) warn(ctx, history.summary.error);
	return history;
}

/** A warning on the output pane (and in n8n's log): the turn goes on, but not silently. */
export function warn(ctx: IExecuteFunctions, message: string): void {
	ctx.logger.warn(message);
	ctx.addExecutionHints?.({ message, location: 'outputPane', type: 'warning' });
}

/**
 * Step 4: appends the turn and flushes it, with the files the user sent and those the model returned.
 * A failed write keeps the answer (and `extra`, the output's other fields) as a partial result.
 * `dataVersion` is the versioned data the answer is based on.
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
	const added = await opened.memory.addMessages({
		messageId: input.messageId,
		parentMessageId: input.parentMessageId,
		userContent: input.prompt,
		userFiles: input.files,
		assistantContent: answer,
		assistantFiles: files,
		dataVersion,
	});
	try {
		await opened.memory.flush();
	} catch (error) {
		// A timeout is not a refusal: the write may still land, and a resend would store it twice.
		const message =
			error instanceof StorageTimeoutError
				? `The answer was generated, but saving it to memory timed out, so it may or may not have been saved (the storage may still store it): ${error.message}`
				: `The answer was generated but could not be saved to memory: ${(error as Error).message}`;
		throw Object.assign(nodeError(ctx, message, i), {
			partialResult: { ...formatOutput(input, answer, opened, added), ...extra },
		});
	}
	if (opened.longTerm?.settings.capture) {
		// The turn is saved; a failed capture is reported, never undoes it.
		opened.captured = await opened.longTerm
			.captureTurn(
				{
					userText: input.prompt,
					answer,
					userMessageId: added.userMessageId,
					messageId: added.messageId,
				},
				opened.history.recentTurns,
			)
			.catch((e: unknown) => e as Error);
		if (opened.captured instanceof Error)
			warn(
				ctx,
				`The turn was saved, but not captured into long-term memory (the next turn of this conversation captures it): ${opened.captured.message}`,
			);
	}
	return added;
}
