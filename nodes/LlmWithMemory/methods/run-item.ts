import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { asNodeError } from '../../shared/errors';
import { resolveInput } from './input';
import { persistTurn, readMemory } from './memory';
import { callModel } from './model';
import { readItemFiles } from './read-files';
import type { ChatModel } from './model';
import { formatOutput, noMemoryReason } from './output';
import type { ItemInput } from './input';
import { buildPrompt } from './prompt';
import { ChatStream } from './stream';

/**
 * One item: resolve the input, read memory, build the prompt, call the model, persist the turn.
 * When the Chat Trigger streams, the answer streams as it is generated and the stream ends once the turn
 * is saved. A failure ends the stream with one error chunk: when the node fails, n8n itself sends it,
 * with the error's description as its text, so the description leads with the message; when the node
 * continues on fail, n8n sends nothing, so we do.
 */
export async function runItem(
	ctx: IExecuteFunctions,
	i: number,
	model: ChatModel,
): Promise<IDataObject> {
	const stream = ChatStream.open(ctx, i);
	try {
		const result = await answerItem(ctx, i, model, stream);
		await stream?.end();
		return result;
	} catch (error) {
		const failure = asNodeError(ctx, error, i); // the same error when it is one already (partialResult kept)
		if (stream) {
			const text = failure.description
				? `${failure.message}. ${failure.description}`
				: failure.message;
			if (ctx.continueOnFail()) await stream.fail(text);
			else failure.description = text;
		}
		throw failure;
	}
}

/** The item's one output item: runItem's result (runItems pairs it with the input item). */
export async function itemOutput(
	ctx: IExecuteFunctions,
	i: number,
	model: ChatModel,
): Promise<INodeExecutionData[]> {
	return [{ json: await runItem(ctx, i, model) }];
}

/** Executions already told that they ran without memory: one hint per run of the node, not per item. */
const hinted = new WeakSet<IExecuteFunctions>();

/**
 * A green "success" must not hide a memoryless call: a hint in the output pane says so (n8n shows
 * execution hints above the output; versions without the call still get the output's memory.reason).
 */
function hintNoMemory(ctx: IExecuteFunctions, i: number, input: ItemInput): void {
	if (hinted.has(ctx) || typeof ctx.addExecutionHints !== 'function') return;
	hinted.add(ctx);
	const which = ctx.getInputData().length > 1 ? ` First item without one: ${i}.` : '';
	ctx.addExecutionHints({
		message: `${noMemoryReason(input)}${which}`,
		type: 'warning',
		location: 'outputPane',
	});
}

async function answerItem(
	ctx: IExecuteFunctions,
	i: number,
	model: ChatModel,
	stream: ChatStream | undefined,
): Promise<IDataObject> {
	const input = await readItemFiles(ctx, await resolveInput(ctx, i), model);
	if (input.versioned) {
		// Loaded with Versioned Data only: it brings the versioned-data memory.
		const { answerWithData } = await import('./data-turn');
		return await answerWithData(ctx, i, model, { ...input, versioned: input.versioned }, stream);
	}
	const opened = await readMemory(ctx, i, input, model);
	const prompt = buildPrompt(input, opened);
	const answer = await callModel(ctx, i, model, prompt, stream);
	if (!opened) {
		if (input.mode !== 'none') hintNoMemory(ctx, i, input);
		return formatOutput(input, answer.text);
	}
	const added = await persistTurn(ctx, i, opened, input, answer);
	return formatOutput(input, answer.text, opened, added);
}
