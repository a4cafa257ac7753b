// Long-term memory in a turn: recall from a Memory Base before the model call, capture the saved turn
// after it (with the earlier turns a failed capture missed), and what both did, for the output.
import { MemoryBase } from '../knowledge/memory-base';
import { chooseRecall } from '../knowledge/recall';
import type { RecallCandidates } from '../knowledge/recall';
import type { CaptureResult, Embedder } from '../knowledge/types';
import { recallReport } from './recalled';
import type { Recalled } from './recalled';
import type { History } from '../history/thread-view';
import type { RecentTurn } from '../history/thread-view';
import type { MemoryStorage } from '../store/storage';
import { encodingForModel, TiktokenCounter } from '../tokens/tokens';

export interface LongTermSettings {
	baseId: string;
	userId?: string;
	/** Where recall looks: the user's conversations, or this one. */
	scope: 'user' | 'conversation';
	topK: number;
	tokenBudget: number;
	halfLifeDays: number;
	capture: boolean;
	/** Expire After (Days) stored with the conversation's captures (undefined: as stored). */
	expireAfterDays?: number;
	/** Minimum Similarity of recalled entries (cosine); undefined: none. */
	minSimilarity?: number;
}

/** A saved turn, as long-term memory captures it. */
export interface CapturedTurn {
	userText: string;
	answer: string;
	userMessageId: string;
	messageId: string;
}

/** How many candidates a recall searches beyond Top K: the window's messages are left out later. */
const WINDOW_ALLOWANCE = 40;

/** A turn's run ID in long-term memory: its message ID (a retried or later capture knows it). */
const runIdOf = (messageId: string) => `turn:${messageId}`;

function turnMessages(t: CapturedTurn) {
	return [
		{ text: t.userText, role: 'user', metadata: { messageId: t.userMessageId } },
		{ text: t.answer, role: 'assistant', metadata: { messageId: t.messageId } },
	];
}

/** Said when Recall Scope is This User but no User ID came with the turn. */
export const EMPTY_USER_ID_WARNING =
	'Recall Scope is This User, but the User ID is empty, so recall covered this conversation only. Set the User ID (n8n’s hosted chat page sends none: use the chat widget’s metadata, a webhook field or the n8n login), or set When User ID Is Empty to Fail.';

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

	/** Why the scope is narrower than asked (This User without a User ID), or undefined. */
	get warning(): string | undefined {
		const { scope, userId } = this.settings;
		return scope === 'user' && userId === undefined ? EMPTY_USER_ID_WARNING : undefined;
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

	/**
	 * The section for a window: the best candidates it does not hold, within the Recall Token Budget
	 * and at most `cap` tokens (the turn's whole budget: recall never takes more than all of it).
	 */
	section(
		found: RecallCandidates,
		window: History | undefined,
		model?: string,
		cap = Infinity,
	): Recalled {
		return chooseRecall(found, {
			k: this.settings.topK,
			tokenBudget: Math.min(this.settings.tokenBudget, cap),
			inWindow: window?.messageIds,
			counter: new TiktokenCounter(encodingForModel(model)),
		});
	}

	/**
	 * Captures a saved turn with the window's earlier turns (`recent`), of which the log takes only those
	 * it missed (a failed capture). Each turn's run ID is its message ID, so no turn is captured twice.
	 */
	captureTurn(turn: CapturedTurn, recent: readonly RecentTurn[] = []): Promise<CaptureResult> {
		return this.base.capture({
			sessionId: this.conversationId,
			userId: this.settings.userId,
			runId: runIdOf(turn.messageId),
			expireAfterDays: this.settings.expireAfterDays,
			messages: turnMessages(turn),
			earlier: recent
				.filter((t) => t.messageId !== turn.messageId)
				.map((t) => ({ runId: runIdOf(t.messageId), saidAt: t.at, messages: turnMessages(t) })),
		});
	}

	/** What long-term memory did this turn, for the output. */
	report(
		recalled: Recalled | undefined,
		captured?: CaptureResult | Error,
	): Record<string, unknown> {
		return {
			baseId: this.settings.baseId,
			scope: 'userId' in this.scope ? 'user' : 'conversation',
			...(this.settings.userId !== undefined ? { userId: this.settings.userId } : {}),
			...(this.warning ? { warning: this.warning } : {}),
			...(recalled ? recallReport(recalled) : {}),
			...(captured instanceof Error
				? { captureError: captured.message }
				: captured
					? {
							captured: captured.captured,
							pending: captured.pending,
							...(captured.pendingNote ? { pendingNote: captured.pendingNote } : {}),
							...(captured.caughtUp ? { caughtUp: captured.caughtUp } : {}),
						}
					: {}),
		};
	}
}
