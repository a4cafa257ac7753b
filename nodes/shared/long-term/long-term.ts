import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, ISupplyDataFunctions } from 'n8n-workflow';

import { isEmbedder } from '../../../src/knowledge/types';
import type { Embedder } from '../../../src/knowledge/types';
import type { LongTermMemory, LongTermSettings } from '../../../src/turn/long-term';
import { optionalSubNode } from '../connections';
import { nodeError } from '../errors';
import { idParameter, idValue } from '../ids';
import { savedWorkflowId } from '../memory-scope';
import { storageFor } from '../storage';
import { numberParameter } from '../parameters';
import { expireAfterDaysOf } from '../retention';

type Ctx = IExecuteFunctions | ISupplyDataFunctions;

/** The node's Long-Term Memory settings; the store adds its Recall Query. */
export type NodeLongTermSettings = LongTermSettings & { recallQuery?: string };

const EMPTY_USER_ID_HELP =
	'Recall Scope is This User and When User ID Is Empty is Fail. n8n’s hosted chat page sends no user ID: set User ID From to Chat Widget Metadata (an embedded widget created with metadata: { userId }), to n8n Login (Hosted Chat), or define it from a webhook field.';

/** Where the user ID comes from (User ID From), checked like every ID. */
export function userIdOf(ctx: Ctx, i: number): string | undefined {
	const source = ctx.getNodeParameter('longTermUserIdSource', i, 'define');
	if (source === 'define') return idParameter(ctx, 'longTermUserId', i, 'User ID');
	const json = ctx.getInputData?.()[i]?.json as
		{ metadata?: { userId?: unknown }; user?: { id?: unknown } } | undefined;
	const value = source === 'metadata' ? json?.metadata?.userId : json?.user?.id;
	return idValue(ctx, value ?? '', i, 'User ID');
}

export const emptyUserIdFails = (ctx: Ctx, i: number) =>
	ctx.getNodeParameter('longTermEmptyUserId', i, 'conversation') === 'fail';

/** The item's Long-Term Memory settings; undefined when the option is off. IDs are checked here. */
export function longTermSettings(ctx: Ctx, i: number): NodeLongTermSettings | undefined {
	if (ctx.getNodeParameter('longTermMemory', i, false) !== true) return undefined;
	const userId = userIdOf(ctx, i);
	const baseId = idParameter(ctx, 'longTermOptions.baseId', i, 'Memory Base ID');
	const query = ctx.getNodeParameter('longTermQuery', i, '') as unknown;
	const scope =
		ctx.getNodeParameter('longTermOptions.scope', i, 'user') === 'conversation'
			? 'conversation'
			: 'user';
	if (scope === 'user' && userId === undefined && emptyUserIdFails(ctx, i))
		throw nodeError(ctx, 'The User ID is empty', i, EMPTY_USER_ID_HELP);
	return {
		baseId: baseId ?? savedWorkflowId(ctx, i),
		userId,
		scope,
		topK: numberParameter(ctx, 'longTermOptions.topK', i, 'Top K', 1, 5),
		tokenBudget: numberParameter(
			ctx,
			'longTermOptions.tokenBudget',
			i,
			'Recall Token Budget',
			0,
			500,
		),
		halfLifeDays: numberParameter(
			ctx,
			'longTermOptions.halfLifeDays',
			i,
			'Recency Half-Life (Days)',
			0,
			180,
		),
		capture: ctx.getNodeParameter('longTermOptions.capture', i, true) !== false,
		...minSimilarityOf(ctx, 'longTermOptions.minSimilarity', i),
		...(typeof query === 'string' && query !== '' ? { recallQuery: query } : {}),
		expireAfterDays: expireAfterDaysOf(ctx, i),
	};
}

/**
 * A Minimum Similarity parameter (−1 … 1; 0, the default, is none), as search options take it. A value
 * out of range is the parameter's error, naming it.
 */
export function minSimilarityOf(ctx: Ctx, name: string, i: number): { minSimilarity?: number } {
	const value = numberParameter(ctx, name, i, 'Minimum Similarity', -1, 0, { fractions: true });
	if (value > 1)
		throw nodeError(ctx, `Minimum Similarity must be a number from -1 to 1, got ${value}`, i);
	return value === 0 ? {} : { minSimilarity: value };
}

/** The embedding model on the node's optional Embedding input, or undefined (recall is lexical then). */
export async function optionalEmbedder(ctx: Ctx, i = 0): Promise<Embedder | undefined> {
	return await optionalSubNode(ctx, NodeConnectionTypes.AiEmbedding, i, isEmbedder);
}

/** The conversation's long-term memory over the node's storage and optional Embedding input. */
export async function longTermFor(
	ctx: Ctx,
	i: number,
	settings: LongTermSettings,
	conversationId: string,
): Promise<LongTermMemory> {
	// Loaded with Long-Term Memory only: it brings the Memory Base and its indexes.
	const { LongTermMemory } = await import('../../../src/turn/long-term');
	return new LongTermMemory(
		await storageFor(ctx, i),
		settings,
		conversationId,
		await optionalEmbedder(ctx, i),
	);
}
