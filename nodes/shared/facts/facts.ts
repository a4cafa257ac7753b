// Remember Facts in LLM with Memory and the LLM Memory Store: the settings an item asks for (read and
// checked before anything runs), and the facts a turn shows and learns, over the engine's Facts.
import type { IExecuteFunctions, ISupplyDataFunctions } from 'n8n-workflow';

import { Facts } from '../../../src/facts/facts';
import { factsSubject } from '../../../src/facts/keys';
import { DEFAULT_FACTS_THRESHOLD } from '../../../src/facts/learn';
import type { Extractor } from '../../../src/facts/learn';
import type { FactsSource } from '../../../src/facts/operations';
import type { TurnFacts } from '../../../src/turn/facts';
import type { LongTermSettings } from '../../../src/turn/long-term';
import { nodeError } from '../errors';
import { emptyUserIdFails, userIdOf } from '../long-term/long-term';
import { savedWorkflowId } from '../memory-scope';
import { numberParameter } from '../parameters';
import { storageFor } from '../storage';
import { DEFAULT_FACTS_TOKEN_BUDGET } from './properties';

type Ctx = IExecuteFunctions | ISupplyDataFunctions;

/** An item's Remember Facts settings. */
export interface NodeFactsSettings {
	/** Whose facts: the user, or (undefined) the conversation's own. */
	userId?: string;
	/** The facts space: Long-Term Memory's Memory Base ID when it is on, else this workflow's ID. */
	space: string;
	tokenBudget: number;
	/** Learn After (Tokens). */
	threshold: number;
}

const EMPTY_USER_ID_HELP =
	'Remember Facts is on and When User ID Is Empty is Fail. Set the User ID (n8n’s hosted chat page sends none: use the chat widget’s metadata, a webhook field or the n8n login), or set When User ID Is Empty to Recall This Conversation to keep the conversation’s own facts.';

/**
 * The item's Remember Facts settings; undefined when the option is off. The User ID is Long-Term
 * Memory's when it is on (`longTerm`), read here otherwise; an empty one fails here with Fail.
 */
export function factsSettings(
	ctx: Ctx,
	i: number,
	longTerm?: LongTermSettings,
): NodeFactsSettings | undefined {
	if (ctx.getNodeParameter('rememberFacts', i, false) !== true) return undefined;
	const userId = longTerm ? longTerm.userId : userIdOf(ctx, i);
	if (userId === undefined && emptyUserIdFails(ctx, i))
		throw nodeError(ctx, 'The User ID is empty', i, EMPTY_USER_ID_HELP);
	return {
		userId,
		space: longTerm?.baseId ?? savedWorkflowId(ctx, i),
		tokenBudget: numberParameter(
			ctx,
			'factsTokenBudget',
			i,
			'Facts Token Budget',
			0,
			DEFAULT_FACTS_TOKEN_BUDGET,
		),
		threshold: numberParameter(
			ctx,
			'factsOptions.learnAfterTokens',
			i,
			'Learn After (Tokens)',
			0,
			DEFAULT_FACTS_THRESHOLD,
		),
	};
}

/**
 * The facts of a turn: the subject's (the engine picks the user, or the conversation without a User
 * ID), read from the node's storage, learned from `source` with `extract` (one model call).
 */
export async function turnFacts(
	ctx: Ctx,
	i: number,
	settings: NodeFactsSettings,
	source: FactsSource,
	extract: Extractor,
): Promise<TurnFacts> {
	return {
		memory: new Facts({
			storage: await storageFor(ctx, i),
			space: settings.space,
			subject: factsSubject(settings.userId, source.conversationId),
		}),
		extract,
		tokenBudget: settings.tokenBudget,
		threshold: settings.threshold,
		source,
	};
}

/** Said when Remember Facts keeps a conversation's own facts because no User ID came with the turn. */
export const NO_USER_FACTS_WARNING =
	'The User ID is empty, so the facts are this conversation’s own: another conversation of the same person does not see them. Set the User ID (n8n’s hosted chat page sends none: use the chat widget’s metadata, a webhook field or the n8n login), or set When User ID Is Empty to Fail.';

/** Whose facts a turn used, for the output: the Memory Base ID and the user (or the conversation). */
export function factsAbout(facts: TurnFacts): Record<string, string> {
	const { space, subject } = facts.memory.store;
	return subject.kind === 'user'
		? { memoryBaseId: space, userId: subject.id }
		: { memoryBaseId: space, conversationId: subject.id, warning: NO_USER_FACTS_WARNING };
}
