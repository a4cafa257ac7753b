import type { IExecuteFunctions } from 'n8n-workflow';

import type { PromptMessage } from '../../../src';
import { nodeError } from '../../shared/errors';

/** What we need of a connected LangChain chat model: invoke() with plain role/content messages. */
export interface ChatModel {
	invoke(messages: PromptMessage[], options?: { signal?: AbortSignal }): Promise<unknown>;
	modelName?: string;
	model?: string;
}

export function isChatModel(value: unknown): value is ChatModel {
	return typeof (value as ChatModel)?.invoke === 'function';
}

/** The model's name, for picking the tokenizer encoding. */
export function modelNameOf(model: ChatModel): string | undefined {
	const name = model.modelName ?? model.model;
	return typeof name === 'string' ? name : undefined;
}

/** Text of a chat model reply: a string, an AIMessage with string content, or content parts. */
export function replyText(reply: unknown): string {
	if (typeof reply === 'string') return reply;
	const content = (reply as { content?: unknown })?.content;
	if (typeof content === 'string') return content;
	if (Array.isArray(content))
		return content
			.map((p) => (typeof p === 'string' ? p : (p as { type?: string; text?: string })?.type === 'text' ? (p as { text: string }).text : ''))
			.join('');
	throw new Error('The model returned a reply without text content');
}

/** Step 3: one model call. A failure is an error that says nothing was stored. */
export async function callModel(ctx: IExecuteFunctions, i: number, model: ChatModel, messages: PromptMessage[]): Promise<string> {
	try {
		return replyText(await model.invoke(messages, { signal: ctx.getExecutionCancelSignal() }));
	} catch (error) {
		throw nodeError(ctx, `The model call failed: ${(error as Error).message}`, i, 'Nothing was added to memory.');
	}
}
