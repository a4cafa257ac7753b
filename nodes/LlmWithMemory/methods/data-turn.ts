import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { InvalidInputError } from '../../../src';
import type { PromptMessage, ToolCall, VersionRecord } from '../../../src';
import { asNodeError, nodeError } from '../../shared/errors';
import { savedWorkflowId } from '../../shared/memory-scope';
import type { VersionedInput } from './input';
import { persistTurn, readMemory } from './memory';
import { callModel, invokeModel, isChatModel, replyText } from './model';
import type { ChatModel } from './model';
import { formatOutput } from './output';
import { buildPrompt } from './prompt';
import type { ChatStream } from './stream';
import {
	dataOutput,
	dataSection,
	openVersionedData,
	proposeChange,
	UPDATE_DATA_TOOL,
	updateDataTool,
} from './versioned-data';
import type { DataChange, OpenedData } from './versioned-data';

/** What the model made of the turn: its answer, and the checked change or why the change failed. */
interface Outcome {
	answer: string;
	change?: DataChange;
	failure?: unknown;
}

/**
 * One item with Versioned Data on: read chat memory and the data, let the model answer (and propose a
 * change), save the change as a new version, then the chat turn recording that version. Nothing is
 * written before the model answered, except Initial Data as the first version. A change that does not
 * apply or validate saves nothing (no version, no chat turn): the item fails, or with On Error →
 * Continue outputs the model's answer with the error.
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
	const workflowId = savedWorkflowId(ctx, i);
	const opened = await readMemory(ctx, i, given, model);
	if (!opened) throw nodeError(ctx, 'Versioned Data needs memory', i); // unreachable: checked above
	// The turn's ID is known before anything is saved: the version records it, the turn records the version.
	const input: VersionedInput = {
		...given,
		messageId: given.messageId ?? opened.memory.newMessageId(),
	};
	const data = await openVersionedData(ctx, i, workflowId, given.conversationId, input.versioned);
	const bound = input.versioned.method === 'auto' ? bindUpdateTool(model) : undefined;
	const system = [input.system, dataSection(data, bound ? 'tool' : 'json')].filter(Boolean);
	const messages = buildPrompt(
		{ ...input, system: system.join('\n\n') },
		opened.history,
		opened.recalled?.section,
	);
	const outcome = bound
		? await withTool(ctx, i, bound, messages, data, stream)
		: await withJsonReply(ctx, i, model, messages, data, stream);

	const unsaved = (): IDataObject => ({
		output: outcome.answer,
		text: outcome.answer,
		conversationId: input.conversationId ?? null,
		messageId: null,
		parentMessageId: null,
		...dataOutput(data, undefined, undefined),
	});
	if (outcome.failure !== undefined) {
		const failure = asNodeError(ctx, outcome.failure, i);
		failure.description = [
			failure.description,
			`Nothing was saved: the data stays at ${data.current ? `version ${data.current.version}` : 'no version'} and the turn was not added to memory.`,
		]
			.filter(Boolean)
			.join(' ');
		throw Object.assign(failure, { partialResult: unsaved() });
	}
	let saved: VersionRecord | undefined;
	if (outcome.change)
		try {
			saved = await data.versions.saveVersion({
				data: outcome.change.data,
				summary: outcome.change.summary,
				branch: input.versioned.branch,
				messageId: input.messageId,
				// The model saw this version: a version saved meanwhile is a conflict, never overwritten.
				expectedVersion: data.current?.version ?? null,
				...input.versioned.rules,
			});
		} catch (error) {
			throw Object.assign(asNodeError(ctx, error, i), { partialResult: unsaved() });
		}
	const at = saved ?? data.current;
	const fields = dataOutput(data, saved, outcome.change);
	const added = await persistTurn(
		ctx,
		i,
		opened,
		input,
		outcome.answer,
		at ? { version: at.version, branch: input.versioned.branch, changed: !!saved } : undefined,
		fields,
	);
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

interface CallSeen {
	id: string;
	name: string;
	args: Record<string, unknown>;
	/** Why its arguments could not be read (LangChain's invalid_tool_calls). */
	invalid?: string;
}

/** The tool calls of a LangChain AIMessage, the unreadable ones included (they fail the change). */
function toolCallsOf(reply: unknown): CallSeen[] {
	const r = reply as {
		tool_calls?: Array<{ id?: string; name?: string; args?: unknown }>;
		invalid_tool_calls?: Array<{ id?: string; name?: string; error?: string }>;
	};
	const calls: CallSeen[] = [];
	for (const c of Array.isArray(r?.tool_calls) ? r.tool_calls : [])
		calls.push({
			id: c.id || `call_${calls.length}`,
			name: String(c.name ?? ''),
			args: (typeof c.args === 'object' && c.args !== null ? c.args : {}) as Record<
				string,
				unknown
			>,
		});
	for (const c of Array.isArray(r?.invalid_tool_calls) ? r.invalid_tool_calls : [])
		calls.push({
			id: c.id || `call_${calls.length}`,
			name: String(c.name ?? ''),
			args: {},
			invalid: c.error || 'its arguments are not valid JSON',
		});
	return calls;
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
): Promise<Outcome> {
	const first = await invokeModel(ctx, i, model, messages);
	const calls = toolCallsOf(first);
	if (calls.length === 0) {
		const answer = replyText(first);
		await stream?.item(answer);
		return { answer };
	}
	let change: DataChange | undefined;
	let failure: unknown;
	try {
		const unreadable = calls.find((c) => c.name === UPDATE_DATA_TOOL && c.invalid);
		if (unreadable)
			throw nodeError(ctx, `Invalid ${UPDATE_DATA_TOOL} call: ${unreadable.invalid}`, i);
		change = proposeChange(
			ctx,
			i,
			data,
			calls.filter((c) => c.name === UPDATE_DATA_TOOL).map((c) => c.args),
		);
	} catch (error) {
		failure = error;
	}
	if (failure !== undefined && !ctx.continueOnFail()) return { answer: '', failure };
	const result = (c: CallSeen): string =>
		JSON.stringify(
			c.name !== UPDATE_DATA_TOOL
				? { ok: false, error: `Unknown tool "${c.name}"` }
				: failure !== undefined
					? { ok: false, error: (failure as Error).message, saved: false }
					: change
						? { ok: true, summary: change.summary, changes: change.changes }
						: { ok: true, changes: [], note: 'The data already looked like this: nothing changed' },
		);
	const toolCalls: ToolCall[] = calls.map((c) => ({ id: c.id, name: c.name, args: c.args }));
	const followUp: PromptMessage[] = [
		...messages,
		{ role: 'assistant', content: safeText(first), tool_calls: toolCalls },
		...calls.map((c): PromptMessage => ({
			role: 'tool',
			content: result(c),
			tool_call_id: c.id,
			name: c.name,
		})),
	];
	const { text } = await callModel(ctx, i, model, followUp, stream);
	if (text.trim()) return { answer: text, change, failure };
	const answer = failure !== undefined ? (failure as Error).message : (change?.summary ?? '');
	await stream?.item(answer);
	return { answer, change, failure };
}

/** A reply's text, or '' when it has none (a tool-call message). */
function safeText(reply: unknown): string {
	try {
		return replyText(reply);
	} catch {
		return '';
	}
}

/**
 * JSON reply (models without tool calling): the model replies {"answer", "patch", "summary"}. A reply
 * that is not JSON at all is taken as the answer, with no change (models often answer questions in
 * prose); a reply that starts as JSON but does not parse, or has no "answer", fails the change.
 */
async function withJsonReply(
	ctx: IExecuteFunctions,
	i: number,
	model: ChatModel,
	messages: PromptMessage[],
	data: OpenedData,
	stream: ChatStream | undefined,
): Promise<Outcome> {
	const text = replyText(await invokeModel(ctx, i, model, messages));
	const outcome = parseJsonReply(ctx, i, text, data);
	await stream?.item(outcome.answer);
	return outcome;
}

/** The JSON inside a reply: the whole text, or the inside of a ```json fence around it. */
function unfenced(text: string): string {
	const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/i.exec(text.trim());
	return (fenced ? fenced[1] : text).trim();
}

function parseJsonReply(
	ctx: IExecuteFunctions,
	i: number,
	text: string,
	data: OpenedData,
): Outcome {
	const body = unfenced(text);
	if (!body.startsWith('{')) return { answer: text };
	let value: Record<string, unknown>;
	try {
		value = JSON.parse(body) as Record<string, unknown>;
	} catch (error) {
		return {
			answer: text,
			failure: new InvalidInputError(
				'reply',
				`the model's JSON reply does not parse (${(error as Error).message})`,
			),
		};
	}
	if (typeof value !== 'object' || value === null || typeof value.answer !== 'string')
		return {
			answer: text,
			failure: new InvalidInputError('reply', 'the model\'s JSON reply has no "answer" text'),
		};
	const answer = value.answer;
	const empty =
		value.patch === undefined ||
		value.patch === null ||
		(Array.isArray(value.patch) && value.patch.length === 0);
	if (empty) return { answer };
	try {
		return { answer, change: proposeChange(ctx, i, data, [value]) };
	} catch (failure) {
		return { answer, failure };
	}
}
