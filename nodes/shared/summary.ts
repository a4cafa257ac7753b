// When History Exceeds the Budget (LLM with Memory and the LLM Memory Store): drop the oldest turns, or
// summarize them with a chat model. The fields, the settings read from them, the summarizer over a
// connected model, and what the output shows.
import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeProperties, ISupplyDataFunctions } from 'n8n-workflow';

import type { Summarizer } from '../../src/history/summarized';
import type { PromptMessage } from '../../src/prompt/types';
import { subNodeOnInput } from './connections';
import { replyText } from './message-text';
import { numberParameter } from './parameters';

type Ctx = IExecuteFunctions | ISupplyDataFunctions;

export const SUMMARIZE = 'summarize';

/** The setting itself: an option of LLM with Memory, a field of the store. */
export function historyOverflowField(modelHint: string): INodeProperties {
	return {
		displayName: 'When History Exceeds the Budget',
		name: 'historyOverflow',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Drop Oldest Turns',
				value: 'dropOldest',
				description: 'The oldest whole turns are left out; the model no longer sees them',
			},
			{
				name: 'Summarize Older Turns',
				value: SUMMARIZE,
				description: `The turns that no longer fit are summarized, and the summary goes before the history, within the budget. ${modelHint}`,
			},
		],
		default: 'dropOldest',
		description:
			'What happens to the turns that no longer fit Max History Tokens. Summaries are made now and then, not on every turn.',
	};
}

/**
 * Fine-tuning of the summary (options of both nodes), shown only with Summarize Older Turns: `where` is
 * the path of When History Exceeds the Budget as seen from the options collection (a sibling option in
 * LLM with Memory, '/historyOverflow' at the top of the store).
 */
export function summaryOptions(where: string): INodeProperties[] {
	const displayOptions = { show: { [where]: [SUMMARIZE] } };
	return SUMMARY_OPTIONS.map((o) => ({ ...o, displayOptions }));
}

const SUMMARY_OPTIONS: INodeProperties[] = [
	{
		displayName: 'Summary Max Tokens',
		name: 'summaryMaxTokens',
		type: 'number',
		default: 0,
		typeOptions: { minValue: 0 },
		description:
			'With Summarize Older Turns: the most tokens the summary takes in the prompt; they count against Max History Tokens. 0: a third of Max History Tokens.',
	},
	{
		displayName: 'Summary Threshold (Tokens)',
		name: 'summaryThreshold',
		type: 'number',
		default: 0,
		typeOptions: { minValue: 0 },
		description:
			'With Summarize Older Turns: a new summary is made once the turns that no longer fit, and are not in the summary yet, hold more than this many tokens (until then they are left out). Higher means fewer model calls. 0: a quarter of Max History Tokens.',
	},
];

export interface SummarySettings {
	threshold: number;
	maxTokens: number;
}

/** The item's summary settings (`field`: where the setting is), or undefined with Drop Oldest Turns. */
export function summarySettings(
	ctx: Ctx,
	i: number,
	field: string,
	budget: number,
): SummarySettings | undefined {
	if (ctx.getNodeParameter(field, i, 'dropOldest') !== SUMMARIZE) return undefined;
	const number = (name: string, label: string) =>
		numberParameter(ctx, `options.${name}`, i, label, 0, 0);
	const threshold = number('summaryThreshold', 'Summary Threshold (Tokens)');
	const maxTokens = number('summaryMaxTokens', 'Summary Max Tokens');
	return {
		threshold: threshold || Math.floor(budget / 4),
		maxTokens: maxTokens || Math.floor(budget / 3),
	};
}

/** What we need of a LangChain chat model to summarize: invoke() with plain role/content messages. */
interface Invokable {
	invoke(messages: PromptMessage[], options?: { signal?: AbortSignal }): Promise<unknown>;
}

const isInvokable = (value: unknown): value is Invokable =>
	typeof (value as Invokable)?.invoke === 'function';

/** A summarizer that asks `model` (one call, its reply's text). */
export function modelSummarizer(model: Invokable, signal?: AbortSignal): Summarizer {
	return async (request) => replyText(await model.invoke(request, signal ? { signal } : {}));
}

/**
 * The chat model on the node's `index`-th chat model input (the store's Summary Model, then its Facts
 * Model), or undefined when none is connected there.
 */
export async function optionalChatModel(
	ctx: Ctx,
	i = 0,
	index = 0,
): Promise<Invokable | undefined> {
	return await subNodeOnInput(ctx, NodeConnectionTypes.AiLanguageModel, i, index, isInvokable);
}
