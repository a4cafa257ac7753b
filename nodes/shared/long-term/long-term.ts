import { NodeConnectionTypes } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, ISupplyDataFunctions } from 'n8n-workflow';

import {
	encodingForModel,
	isEmbedder,
	MemoryBase,
	recallSection,
	TiktokenCounter,
} from '../../../src';
import type { CaptureResult, Embedder, History, MemoryStorage, SearchMatch } from '../../../src';
import { optionalSubNode } from '../connections';
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
		...(typeof query === 'string' && query !== '' ? { recallQuery: query } : {}),
		expireAfterDays: expireAfterDaysOf(ctx, i),
	};
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
	error?: string;
}

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
	search(query: string): Promise<SearchMatch[]> {
		return this.base.search(query, {
			...this.scope,
			k: this.settings.topK + 40,
			halfLifeDays: this.settings.halfLifeDays > 0 ? this.settings.halfLifeDays : undefined,
		});
	}

	/** The section for a window: the best candidates it does not hold, within the budget. */
	section(hits: SearchMatch[], window: History | undefined, model?: string): Recalled {
		const inWindow = new Set(window?.messageIds ?? []);
		const fresh = hits.filter((h) => {
			const id = h.metadata?.messageId;
			return !(typeof id === 'string' && inWindow.has(id));
		});
		const counter = new TiktokenCounter(encodingForModel(model));
		const built = recallSection(
			fresh.slice(0, this.settings.topK),
			this.settings.tokenBudget,
			counter,
		);
		return { ...built, skipped: hits.length - fresh.length };
	}

	/** Captures a saved turn: the user's message and the answer, with their stored message IDs. */
	captureTurn(turn: {
		runId: string;
		userText: string;
		answer: string;
		userMessageId: string;
		messageId: string;
	}): Promise<CaptureResult> {
		return this.base.capture({
			sessionId: this.conversationId,
			userId: this.settings.userId,
			runId: turn.runId,
			expireAfterDays: this.settings.expireAfterDays,
			messages: [
				{ text: turn.userText, role: 'user', metadata: { messageId: turn.userMessageId } },
				{ text: turn.answer, role: 'assistant', metadata: { messageId: turn.messageId } },
			],
		});
	}

	/** The output's view of what long-term memory did this turn. */
	summary(recalled: Recalled | undefined, captured?: CaptureResult | Error): IDataObject {
		return {
			baseId: this.settings.baseId,
			scope: 'userId' in this.scope ? 'user' : 'conversation',
			...(this.settings.userId !== undefined ? { userId: this.settings.userId } : {}),
			recalled: recalled?.hits.length ?? 0,
			recallTokens: recalled?.tokens ?? 0,
			...(recalled?.hits.length
				? {
						entries: recalled.hits.map((h) => ({
							text: h.text,
							capturedAt: h.capturedAt,
							role: h.role ?? null,
						})),
					}
				: {}),
			...(recalled?.error ? { recallError: recalled.error } : {}),
			...(captured instanceof Error
				? { captureError: captured.message }
				: captured
					? { captured: captured.captured, pending: captured.pending }
					: {}),
		};
	}
}
