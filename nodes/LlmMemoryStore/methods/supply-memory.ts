import type { ISupplyDataFunctions, SupplyData } from 'n8n-workflow';

import { ChatHistory } from '../../../src/history/chat-history';
import type { MemoryOptions } from '../../../src/history/memory-types';
import { DEFAULT_MAX_TOOL_OUTPUT_CHARS } from '../../../src/history/tool-results';
import type { ToolResultsMode } from '../../../src/history/tool-results';
import { DEFAULT_MAX_TOKEN_LIMIT } from '../../../src/history/truncate';
import { asNodeError, nodeError } from '../../shared/errors';
import { idParameter } from '../../shared/ids';
import { openNodeMemory, savedWorkflowId } from '../../shared/memory-scope';
import type { ScopeMode } from '../../shared/memory-scope';
import { numberParameter } from '../../shared/parameters';
import { StoreMemory } from './store-memory';
import type { Limits } from './store-memory';
import type { StoreLongTerm } from './store-memory';
import { factsSettings, turnFacts } from '../../shared/facts/facts';
import { longTermFor, longTermSettings } from '../../shared/long-term/long-term';
import type { NodeLongTermSettings } from '../../shared/long-term/long-term';
import { expireAfterDaysOf } from '../../shared/retention';
import {
	modelSummarizer,
	optionalChatModel,
	SUMMARIZE,
	summarySettings,
} from '../../shared/summary';
import { factsModelInput } from './inputs';
import type { FactsSource } from '../../../src/facts/operations';
import type { TurnFacts } from '../../../src/turn/facts';
import type { StoreSummary } from './store-memory';

interface Options {
	gzip?: boolean;
}

// The store's limits accept fractions (the engine floors the window).
const fractions = { fractions: true };

/** n8n's own wording for a missing session ID (nodes/memory getSessionId), adapted to our field names. */
function missingSessionId(ctx: ISupplyDataFunctions, itemIndex: number): Error {
	const fromChatTrigger =
		ctx.getNodeParameter('conversationIdType', itemIndex, 'fromInput') === 'fromInput';
	return nodeError(
		ctx,
		'No session ID found',
		itemIndex,
		fromChatTrigger
			? "Expected to find the session ID in an input field called 'sessionId' (this is what the chat trigger node outputs). To use something else, change the 'Session ID' parameter"
			: "Provide a key to use as session ID in the 'Session ID' parameter or use the 'Connected Chat Trigger Node' option to use the session ID from your Chat Trigger",
	);
}

/**
 * Tool Results in Memory, and with Keep its Max Characters per Tool Result. The engine checks the mode
 * (an unknown one is its InvalidOptionError, wrapped where the memory is opened).
 */
function toolResultsOptions(
	ctx: ISupplyDataFunctions,
	itemIndex: number,
): Pick<MemoryOptions, 'toolResults' | 'maxToolOutputChars'> {
	const toolResults = ctx.getNodeParameter('toolResults', itemIndex, 'keep') as ToolResultsMode;
	if (toolResults !== 'keep') return { toolResults };
	const maxToolOutputChars = numberParameter(
		ctx,
		'maxToolResultChars',
		itemIndex,
		'Max Characters per Tool Result',
		0,
		DEFAULT_MAX_TOOL_OUTPUT_CHARS,
	);
	return { toolResults, maxToolOutputChars };
}

/** Long-Term Memory of the store, when the option is on (its IDs are checked here, before anything runs). */
async function storeLongTerm(
	ctx: ISupplyDataFunctions,
	itemIndex: number,
	sessionId: string,
	settings: NodeLongTermSettings | undefined,
): Promise<StoreLongTerm | undefined> {
	if (!settings) return undefined;
	const memory = await longTermFor(ctx, itemIndex, settings, sessionId);
	return { memory, query: settings.recallQuery };
}

/**
 * Remember Facts: the facts of the store's turns (the user's, or this session's without a User ID),
 * read by the model on the Facts Model input. Without a model connected, the store fails here, before
 * the agent runs, saying what to connect.
 */
async function storeFacts(
	ctx: ISupplyDataFunctions,
	itemIndex: number,
	source: FactsSource,
	longTerm: NodeLongTermSettings | undefined,
): Promise<TurnFacts | undefined> {
	const settings = factsSettings(ctx, itemIndex, longTerm);
	if (!settings) return undefined;
	const summarizing =
		ctx.getNodeParameter('historyOverflow', itemIndex, 'dropOldest') === SUMMARIZE;
	const model = await optionalChatModel(ctx, itemIndex, factsModelInput(summarizing));
	if (!model)
		throw nodeError(
			ctx,
			'Remember Facts needs a chat model on the Facts Model input',
			itemIndex,
			'Connect a chat model (for example the agent’s own) to the store’s Facts Model input, or turn Remember Facts off.',
		);
	const extract = modelSummarizer(model, ctx.getExecutionCancelSignal?.());
	return await turnFacts(ctx, itemIndex, settings, source, extract);
}

/**
 * Summarize Older Turns: the settings and a summarizer over the Summary Model input. Without a model
 * connected, the store fails here, before the agent runs, saying what to connect.
 */
async function storeSummary(
	ctx: ISupplyDataFunctions,
	itemIndex: number,
	budget: number,
): Promise<StoreSummary | undefined> {
	const settings = summarySettings(ctx, itemIndex, 'historyOverflow', budget);
	if (!settings) return undefined;
	const model = await optionalChatModel(ctx, itemIndex);
	if (!model)
		throw nodeError(
			ctx,
			'Summarize Older Turns needs a chat model on the Summary Model input',
			itemIndex,
			'Connect a chat model (for example the agent’s own) to the store’s Summary Model input, or set When History Exceeds the Budget to Drop Oldest Turns.',
		);
	return { ...settings, summarize: modelSummarizer(model, ctx.getExecutionCancelSignal?.()) };
}

/** Context Window Length and Max History Tokens. */
function limitsOf(ctx: ISupplyDataFunctions, itemIndex: number): Limits {
	return {
		messageLimit: numberParameter(
			ctx,
			'contextWindowLength',
			itemIndex,
			'Context Window Length',
			1,
			10,
			fractions,
		),
		maxTokenLimit: numberParameter(
			ctx,
			'maxHistoryTokens',
			itemIndex,
			'Max History Tokens',
			0,
			DEFAULT_MAX_TOKEN_LIMIT,
			fractions,
		),
	};
}

/** How the store's memory is kept: compressed, its retention, what it keeps of tool turns. */
function memoryOptions(ctx: ISupplyDataFunctions, itemIndex: number) {
	const options = ctx.getNodeParameter('options', itemIndex, {}) as Options;
	return {
		gzip: options.gzip === true,
		expireAfterDays: expireAfterDaysOf(ctx, itemIndex),
		...toolResultsOptions(ctx, itemIndex),
	};
}

/**
 * The memory an AI Agent, Chat Trigger, Respond to Chat or Chat Memory Manager gets from this sub-node.
 * Everything is checked here, before the caller does anything: the session ID (a missing one is n8n's
 * familiar "No session ID found"; objects and arrays are errors naming the field), the limits, the
 * storage. The documents and keys are those of LLM with Memory, so Conversation mode shares one history
 * per conversation with every LLM with Memory node and every store of the workflow in that mode.
 */
export async function supplyMemory(
	ctx: ISupplyDataFunctions,
	itemIndex: number,
): Promise<SupplyData> {
	const mode = ctx.getNodeParameter('memoryMode', itemIndex, 'conversation') as ScopeMode;
	const sessionId = idParameter(ctx, 'conversationId', itemIndex, 'Session ID');
	if (!sessionId) throw missingSessionId(ctx, itemIndex);
	const limits = limitsOf(ctx, itemIndex);
	const at = { workflowId: savedWorkflowId(ctx, itemIndex), conversationId: sessionId };
	const memory = await openNodeMemory(
		ctx,
		itemIndex,
		mode,
		at,
		memoryOptions(ctx, itemIndex),
	).catch((error: unknown) => {
		throw asNodeError(ctx, error, itemIndex);
	});
	const longTerm = longTermSettings(ctx, itemIndex);
	const source = mode === 'node' ? { ...at, nodeId: ctx.getNode().id } : at;
	const store = new StoreMemory(
		ctx,
		itemIndex,
		new ChatHistory(memory),
		limits,
		{ mode, sessionId, key: memory.key },
		{
			longTerm: await storeLongTerm(ctx, itemIndex, sessionId, longTerm),
			summary: await storeSummary(ctx, itemIndex, limits.maxTokenLimit),
			facts: await storeFacts(ctx, itemIndex, source, longTerm).catch((error: unknown) => {
				throw asNodeError(ctx, error, itemIndex);
			}),
		},
	);
	// A message left waiting for its answer (a Chat Memory Manager insert ending with a user message) is
	// stored when the calling node is done; n8n runs this after the node's execute().
	return { response: store, closeFunction: async () => await store.chatHistory.flushOpen() };
}
