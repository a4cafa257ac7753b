import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { resolveInput } from './input';
import { persistTurn, readMemory } from './memory';
import { callModel } from './model';
import type { ChatModel } from './model';
import { formatOutput } from './output';
import { buildPrompt } from './prompt';

/** One item: resolve the input, read memory, build the prompt, call the model, persist the turn. */
export async function runItem(ctx: IExecuteFunctions, i: number, model: ChatModel): Promise<IDataObject> {
	const input = await resolveInput(ctx, i);
	const opened = await readMemory(ctx, i, input, model);
	const answer = await callModel(ctx, i, model, buildPrompt(input, opened?.history));
	if (!opened) return formatOutput(input, answer);
	const added = await persistTurn(ctx, i, opened, input, answer);
	return formatOutput(input, answer, opened, added);
}
