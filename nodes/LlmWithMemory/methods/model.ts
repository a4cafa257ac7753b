import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

import { contentFiles } from '../../../src/prompt/content-files';
import type { PromptMessage } from '../../../src/prompt/types';
import type { FileInput } from '../../../src/store/blobs';
import { connectedSubNode } from '../../shared/connections';
import { nodeError } from '../../shared/errors';
import { messageText, replyText } from '../../shared/message-text';
import type { ChatStream } from './stream';

/**
 * What we need of a connected LangChain chat model: invoke() with plain role/content messages, and
 * stream() (an async iterable of message chunks) when the answer is streamed to the chat.
 */
export interface ChatModel {
	invoke(messages: PromptMessage[], options?: { signal?: AbortSignal }): Promise<unknown>;
	stream?(
		messages: PromptMessage[],
		options?: { signal?: AbortSignal },
	): Promise<AsyncIterable<unknown>>;
	/** LangChain's tool binding: a model that offers these tools (OpenAI function format) on every call. */
	bindTools?(tools: unknown[], kwargs?: unknown): unknown;
	modelName?: string;
	model?: string;
}

export function isChatModel(value: unknown): value is ChatModel {
	return typeof (value as ChatModel)?.invoke === 'function';
}

/** The chat model connected to the Model input, checked before any item runs. */
export async function connectedChatModel(ctx: IExecuteFunctions): Promise<ChatModel> {
	const model = await connectedSubNode(ctx, NodeConnectionTypes.AiLanguageModel);
	if (!isChatModel(model)) throw nodeError(ctx, 'Please connect a chat model to the Model input');
	return model;
}

/** The model's name, for picking the tokenizer encoding. */
export function modelNameOf(model: ChatModel): string | undefined {
	const name = model.modelName ?? model.model;
	return typeof name === 'string' ? name : undefined;
}

export { replyText };

/** Text of one streamed chunk (an AIMessageChunk, a string); '' for chunks without text (tool-call deltas, usage). */
export function chunkText(chunk: unknown): string {
	return (
		(typeof chunk === 'string' ? chunk : messageText((chunk as { content?: unknown })?.content)) ??
		''
	);
}

/** A failed model call: an error that says nothing was stored. */
export function modelCallError(ctx: IExecuteFunctions, i: number, error: unknown) {
	return nodeError(
		ctx,
		`The model call failed: ${(error as Error).message}`,
		i,
		'Nothing was added to memory.',
	);
}

/** One model call whose whole reply (tool calls included) the caller reads. */
export async function invokeModel(
	ctx: IExecuteFunctions,
	i: number,
	model: ChatModel,
	messages: PromptMessage[],
): Promise<unknown> {
	try {
		return await model.invoke(messages, { signal: ctx.getExecutionCancelSignal() });
	} catch (error) {
		throw modelCallError(ctx, i, error);
	}
}

/** A model's answer: its text, and the files it returned (images among its content parts). */
export interface ModelAnswer {
	text: string;
	files: FileInput[];
}

/** Files in a reply or a streamed chunk: what the model returned beside its text. */
const replyFiles = (reply: unknown): FileInput[] =>
	contentFiles((reply as { content?: unknown })?.content, 'tool_file');

/**
 * Step 3: one model call. A failure is an error that says nothing was stored. When the answer streams
 * to the chat, it goes through the model's stream() piece by piece; a model without stream() is invoked
 * and its answer sent as one piece, so the chat never shows "no response". The caller ends the stream
 * after memory is saved.
 */
export async function callModel(
	ctx: IExecuteFunctions,
	i: number,
	model: ChatModel,
	messages: PromptMessage[],
	stream?: ChatStream,
): Promise<ModelAnswer> {
	const options = { signal: ctx.getExecutionCancelSignal() };
	try {
		const invoked = async () => {
			const reply = await model.invoke(messages, options);
			return { text: replyText(reply), files: replyFiles(reply) };
		};
		if (!stream) return await invoked();
		await stream.begin();
		if (typeof model.stream !== 'function') {
			const answer = await invoked();
			await stream.item(answer.text);
			return answer;
		}
		const answer: ModelAnswer = { text: '', files: [] };
		for await (const chunk of await model.stream(messages, options)) {
			answer.files.push(...replyFiles(chunk));
			const piece = chunkText(chunk);
			if (!piece) continue;
			answer.text += piece;
			await stream.item(piece);
		}
		return answer;
	} catch (error) {
		throw modelCallError(ctx, i, error);
	}
}
