import { NodeConnectionTypes } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, ISupplyDataFunctions } from 'n8n-workflow';

import {
	chooseRecall,
	encodingForModel,
	isEmbedder,
	MemoryBase,
	TiktokenCounter,
} from '../../../src';
import type {
	CaptureResult,
	Embedder,
	History,
	MemoryStorage,
	RecallCandidates,
	RecentTurn,
	SearchMatch,
} from '../../../src';
import { optionalSubNode } from '../connections';
import { nodeError } from '../errors';
import { idParameter } from '../ids';
import { savedWorkflowId } from '../memory-scope';
import { numberParameter } from '../parameters';
import { expireAfterDaysOf } from '../retention';

type Ctx = IExecuteFunctions | ISupplyDataFunctions;

export interface LongTermSettings {
	baseId: string;
	userId?: string;
	/** Where recall looks: the user's conversations, or this one. */
	scope: 'user' | 'conversation';
	topK: number;
	tokenBudget: number;
	halfLifeDays: number;
	capture: boolean;
	/** The store's query (its agent does not hand the memory the user's message). */
	recallQuery?: string;
	/** The node's Expire After (Days), stored with the conversation's captures (undefined: as stored). */
	expireAfterDays?: number;
	/** Minimum Similarity of recalled entries (cosine); undefined: none. */
	minSimilarity?: number;
}

/** The item's Long-Term Memory settings; undefined when the option is off. IDs are checked here. */
export function longTermSettings(ctx: Ctx, i: number): LongTermSettings | undefined {
	if (ctx.getNodeParameter('longTermMemory', i, false) !== true) return undefined;
	const userId = idParameter(ctx, 'longTermUserId', i, 'User ID');
	const baseId = idParameter(ctx, 'longTermOptions.baseId', i, 'Memory Base ID');
	const query = ctx.getNodeParameter('longTermQuery', i, '') as unknown;
	return {
		baseId: baseId ?? savedWorkflowId(ctx, i),
		userId,
		scope:
			ctx.getNodeParameter('longTermOptions.scope', i, 'user') === 'conversation'
				? 'conversation'
				: 'user',
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

/** What a turn's recall found and put in front of the model (the output's memory.longTermMemory). */
export interface Recalled {
	section: string;
	tokens: number;
	hits: SearchMatch[];
	skipped: number;
	/** Why nothing was recalled, when nothing was. */
	reason?: string;
	error?: string;
}

/** Nothing recalled, and why. */
export const notRecalled = (reason: string): Recalled => ({
	section: '',
	tokens: 0,
	hits: [],
	skipped: 0,
	reason,
});

/** A recall that failed: the turn goes on without it, and says why. */
export const failedRecall = (error: Error): Recalled => ({
	...notRecalled('the recall failed'),
	error: error.message,
});

/** How many candidates a recall searches beyond Top K: the window's messages are left out later. */
const WINDOW_ALLOWANCE = 40;

/** One conversation's long-term memory: recall before the model call, capture after the turn is saved. */
export class LongTermMemory {
	readonly base: MemoryBase;

	constructor(
		storage: MemoryStorage,
		readonly settings: LongTermSettings,
		readonly conversationId: string,
		embedder: Embedder | undefined,
	) {
		this.base = new MemoryBase({ storage, baseId: settings.baseId, embedder });
	}

	/** The scope recall searches: the user's conversations when a User ID is set and asked for. */
	get scope(): { userId?: string; sessionId?: string } {
		return this.settings.scope === 'user' && this.settings.userId !== undefined
			? { userId: this.settings.userId }
			: { sessionId: this.conversationId };
	}

	/** Candidates for the recall section (more than Top K: the window's messages are left out later). */
	search(query: string): Promise<RecallCandidates> {
		return this.base.recallCandidates({
			query,
			...this.scope,
			k: this.settings.topK + WINDOW_ALLOWANCE,
			halfLifeDays: this.settings.halfLifeDays,
			minSimilarity: this.settings.minSimilarity,
		});
	}

	/** The section for a window: the best candidates it does not hold, within the budget. */
	section(found: RecallCandidates, window: History | undefined, model?: string): Recalled {
		return chooseRecall(found, {
			k: this.settings.topK,
			tokenBudget: this.settings.tokenBudget,
			inWindow: window?.messageIds,
			counter: new TiktokenCounter(encodingForModel(model)),
		});
	}

	/**
	 * Captures a saved turn: the user's message and the answer, with their stored message IDs, and the
	 * window's earlier turns (`recent`), of which the log holds only those it missed (a failed capture).
	 * Each turn's run ID is its message ID, so no turn is captured twice.
	 */
	captureTurn(
		turn: { userText: string; answer: string; userMessageId: string; messageId: string },
		recent: readonly RecentTurn[] = [],
	): Promise<CaptureResult> {
		return this.base.capture({
			sessionId: this.conversationId,
			userId: this.settings.userId,
			runId: runIdOf(turn.messageId),
			expireAfterDays: this.settings.expireAfterDays,
			messages: turnMessages(turn),
			earlier: recent
				.filter((t) => t.messageId !== turn.messageId)
				.map((t) => ({
					runId: runIdOf(t.messageId),
					saidAt: t.at,
					messages: turnMessages(t),
				})),
		});
	}

	/** The output's view of what long-term memory did this turn. */
	summary(recalled: Recalled | undefined, captured?: CaptureResult | Error): IDataObject {
		return {
			baseId: this.settings.baseId,
			scope: 'userId' in this.scope ? 'user' : 'conversation',
			...(this.settings.userId !== undefined ? { userId: this.settings.userId } : {}),
			...(recalled ? recallReport(recalled) : {}),
			...(captured instanceof Error
				? { captureError: captured.message }
				: captured
					? {
							captured: captured.captured,
							pending: captured.pending,
							...(captured.caughtUp ? { caughtUp: captured.caughtUp } : {}),
						}
					: {}),
		};
	}
}

/** A turn's run ID in long-term memory: its message ID (a retried or later capture knows it). */
const runIdOf = (messageId: string) => `turn:${messageId}`;

function turnMessages(t: {
	userText: string;
	answer: string;
	userMessageId: string;
	messageId: string;
}) {
	return [
		{ text: t.userText, role: 'user', metadata: { messageId: t.userMessageId } },
		{ text: t.answer, role: 'assistant', metadata: { messageId: t.messageId } },
	];
}

const round = (x: number | undefined) => (x === undefined ? undefined : Math.round(x * 1e4) / 1e4);

/** What a recall did, for the output: the entries with their scores, or why there are none. */
export function recallReport(recalled: Recalled): IDataObject {
	return {
		recalled: recalled.hits.length,
		recallTokens: recalled.tokens,
		...(recalled.hits.length
			? {
					entries: recalled.hits.map((h) => ({
						text: h.text,
						capturedAt: h.capturedAt,
						role: h.role ?? null,
						score: round(h.score),
						...(h.similarity !== undefined ? { similarity: round(h.similarity) } : {}),
						...(h.lexicalScore !== undefined ? { lexicalScore: round(h.lexicalScore) } : {}),
					})),
				}
			: { notRecalled: recalled.reason ?? 'nothing matched' }),
		...(recalled.skipped ? { skipped: recalled.skipped } : {}),
		...(recalled.error ? { recallError: recalled.error } : {}),
	};
}
