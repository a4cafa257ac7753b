import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { changeOfCalls, followUp, parseJsonReply, toolCallsOf } from '../../../src/turn/data-reply';
import { dataReport, dataSection, updateDataTool } from '../../../src/turn/versioned';
import type { PromptMessage } from '../../../src/prompt/types';
import type { VersionRecord } from '../../../src/snapshots/records';
import type { DataOutcome } from '../../../src/turn/data-reply';
import type { OpenedData } from '../../../src/turn/versioned';
import { asNodeError, nodeError } from '../../shared/errors';
import type { VersionedInput } from './input';
import { persistTurn, readMemory } from './memory';
import type { OpenedMemory } from './memory';
import { callModel, invokeModel, isChatModel, replyText } from './model';
import type { ChatModel } from './model';
import { formatOutput } from './output';
import { buildPrompt } from './prompt';
import type { ChatStream } from './stream';

/**
 * One item with Versioned Data on: the engine assembles the turn with the data beside the history and
 * the recall; the model answers (and proposes a change, by the update_data tool or in a JSON reply);
 * the change is saved as a new version, then the chat turn recording that version. Nothing is written
 * before the model answered, except Initial Data as the first version. A change that does not apply or
 * validate saves nothing (no version, no chat turn): the item fails, or with On Error → Continue
 * outputs the model's answer with the error.
 */
export async function answerWithData(
	ctx: IExecuteFunctions,
	i: number,
	model: ChatModel,
	given: VersionedInput,
	stream: ChatStream | undefined,
): Promise<IDataObject> {
	if (!given.conversationId)
		throw nodeError(
			ctx,
			'Versioned Data needs a session ID, but none was found',
			i,
			given.missingIdHelp,
		);
	const opened = await readMemory(ctx, i, given, model);
	const data = opened?.turn.data;
	if (!opened || !data) throw nodeError(ctx, 'Versioned Data needs memory', i); // unreachable: checked above
	// The turn's ID is known before anything is saved: the version records it, the turn records the version.
	const input = { ...given, messageId: given.messageId ?? opened.memory.newMessageId() };
	const bound = input.versioned.method === 'auto' ? bindUpdateTool(model) : undefined;
	const system = [input.system, dataSection(data, bound ? 'tool' : 'json')].filter(Boolean);
	const messages = buildPrompt(input, opened, system.join('\n\n'));
	const outcome = bound
		? await withTool(ctx, i, bound, messages, data, stream)
		: await withJsonReply(ctx, i, model, messages, data, stream);
	if (outcome.failure !== undefined) throw unsavedFailure(ctx, i, input, data, outcome);
	const saved = outcome.change ? await saveChange(ctx, i, input, data, outcome) : undefined;
	return await saveTurn(ctx, i, opened, input, data, outcome, saved);
}

/** The output of a turn whose change was not saved: the answer, the data as it stays. */
function unsaved(input: VersionedInput, data: OpenedData, answer: string): IDataObject {
	return {
		output: answer,
		text: answer,
		conversationId: input.conversationId ?? null,
		messageId: null,
		parentMessageId: null,
		...(dataReport(data, undefined, undefined) as IDataObject),
	};
}

/** A change that failed: nothing is saved, and the error says so (with the answer as a partial result). */
function unsavedFailure(
	ctx: IExecuteFunctions,
	i: number,
	input: VersionedInput,
	data: OpenedData,
	outcome: DataOutcome,
): Error {
	const failure = asNodeError(ctx, outcome.failure, i);
	const at = data.current ? `version ${data.current.version}` : 'no version';
	failure.description = [
		failure.description,
		`Nothing was saved: the data stays at ${at} and the turn was not added to memory.`,
	]
		.filter(Boolean)
		.join(' ');
	return Object.assign(failure, { partialResult: unsaved(input, data, outcome.answer) });
}

/** Saves the checked change as a new version, against the version the model saw. */
async function saveChange(
	ctx: IExecuteFunctions,
	i: number,
	input: VersionedInput & { messageId: string },
	data: OpenedData,
	outcome: DataOutcome,
): Promise<VersionRecord> {
	try {
		return await data.versions.saveVersion({
			data: outcome.change!.data,
			summary: outcome.change!.summary,
			branch: input.versioned.branch,
			messageId: input.messageId,
			// The model saw this version: a version saved meanwhile is a conflict, never overwritten.
			expectedVersion: data.current?.version ?? null,
			...input.versioned.rules,
		});
	} catch (error) {
		throw Object.assign(asNodeError(ctx, error, i), {
			partialResult: unsaved(input, data, outcome.answer),
		});
	}
}

/** Saves the chat turn recording the version its answer is based on; the output with the data. */
async function saveTurn(
	ctx: IExecuteFunctions,
	i: number,
	opened: OpenedMemory,
	input: VersionedInput,
	data: OpenedData,
	outcome: DataOutcome,
	saved: VersionRecord | undefined,
): Promise<IDataObject> {
	const at = saved ?? data.current;
	const fields = dataReport(data, saved, outcome.change) as IDataObject;
	const version = at
		? { version: at.version, branch: input.versioned.branch, changed: !!saved }
		: undefined;
	const added = await persistTurn(ctx, i, opened, input, outcome.answer, version, fields);
	return { ...formatOutput(input, outcome.answer, opened, added), ...fields };
}

/** The model with update_data bound, or undefined when it cannot bind tools (then: a JSON reply). */
function bindUpdateTool(model: ChatModel): ChatModel | undefined {
	if (typeof model.bindTools !== 'function') return undefined;
	try {
		const bound = model.bindTools([updateDataTool]);
		return isChatModel(bound) ? bound : undefined;
	} catch {
		return undefined; // LangChain models without tool support throw here
	}
}

/**
 * Tool calling: the model answers, or calls update_data. A call is checked (applied to the data,
 * validated), its result goes back to the model, and the model's next reply is the answer (streamed
 * when the chat streams). That costs one more model call, only on turns that change the data, and gives
 * the best answer: the model confirms in its own words what was done (or explains why it could not be),
 * and still answers the rest of the user's message; the summary alone is written for the version log.
 * If that reply has no text, the summary (or the error) is the answer. A failed change without On
 * Error → Continue fails at once, without the extra call (its answer would be thrown away).
 */
async function withTool(
	ctx: IExecuteFunctions,
	i: number,
	model: ChatModel,
	messages: PromptMessage[],
	data: OpenedData,
	stream: ChatStream | undefined,
): Promise<DataOutcome> {
	const first = await invokeModel(ctx, i, model, messages);
	const calls = toolCallsOf(first);
	if (calls.length === 0) {
		const answer = replyText(first);
		await stream?.item(answer);
		return { answer };
	}
	const checked = changeOfCalls(data, calls);
	if (checked.failure !== undefined && !ctx.continueOnFail()) return { answer: '', ...checked };
	const next = followUp(messages, safeText(first), calls, checked);
	const { text } = await callModel(ctx, i, model, next, stream);
	if (text.trim()) return { answer: text, ...checked };
	const { change, failure } = checked;
	const answer = failure !== undefined ? (failure as Error).message : (change?.summary ?? '');
	await stream?.item(answer);
	return { answer, ...checked };
}

/** A reply's text, or '' when it has none (a tool-call message). */
function safeText(reply: unknown): string {
	try {
		return replyText(reply);
	} catch {
		return '';
	}
}

/** JSON reply (models without tool calling): see parseJsonReply. */
async function withJsonReply(
	ctx: IExecuteFunctions,
	i: number,
	model: ChatModel,
	messages: PromptMessage[],
	data: OpenedData,
	stream: ChatStream | undefined,
): Promise<DataOutcome> {
	const outcome = parseJsonReply(replyText(await invokeModel(ctx, i, model, messages)), data);
	await stream?.item(outcome.answer);
	return outcome;
}
