import type { IDataObject, ISupplyDataFunctions } from 'n8n-workflow';

import { captureTurn, ChatTurn } from '../../../src/turn/turn';
import type { ChatHistory, StoredTurn } from '../../../src/history/chat-history';
import type { TurnInput } from '../../../src/history/memory-types';
import type { Summarizer } from '../../../src/history/summarized';
import type { CaptureResult } from '../../../src/knowledge/types';
import type { LongTermMemory } from '../../../src/turn/long-term';
import type { SummarySettings } from '../../shared/summary';
import { contextContent, historyMessages } from './messages';
import type { StoreMessage } from './messages';
import { logged, serialize, StoreChatHistory } from './store-history';

export interface Limits {
	/** Context window: the most past turns the model receives. */
	messageLimit: number;
	/** Token budget of that history. */
	maxTokenLimit: number;
}

/** Long-Term Memory of the store: the memory, and what to recall for when the agent does not say. */
export interface StoreLongTerm {
	memory: LongTermMemory;
	/** The Recall Query, evaluated against the agent's input item (the Chat Trigger's chatInput). */
	query?: string;
}

/** Summarize Older Turns: the limits, and the summarizer over the Summary Model input. */
export interface StoreSummary extends SummarySettings {
	summarize: Summarizer;
}

const NO_QUERY =
	'nothing to recall for: the Recall Query is empty (the agent did not hand over the user’s message)';

/**
 * The object supplyData hands to n8n: LangChain's chat-memory interface, duck-typed.
 * loadMemoryVariables gives `chat_history` as messages (whole turns, window and token budget applied);
 * saveContext stores a turn without tools; tool turns arrive through chatHistory.addMessages. The turn
 * itself is assembled by the engine (ChatTurn): with Long-Term Memory or a summary of older turns,
 * chat_history starts with them as one user-role message, after the agent's own system message.
 */
export class StoreMemory {
	readonly memoryKey = 'chat_history';
	readonly inputKey = 'input';
	readonly outputKey = 'output';
	readonly returnMessages = true;
	readonly humanPrefix = 'Human';
	readonly aiPrefix = 'AI';
	readonly chatHistory: StoreChatHistory;
	/** The turn the last load assembled: every call of the turn shows its recall, captures catch up from it. */
	private turn: ChatTurn | undefined;
	private captured: CaptureResult | Error | undefined;

	constructor(
		private readonly ctx: ISupplyDataFunctions,
		private readonly itemIndex: number,
		private readonly history: ChatHistory,
		private readonly limits: Limits,
		/** What the panes show about where the memory lives. */
		private readonly describe: IDataObject,
		private readonly longTerm?: StoreLongTerm,
		private readonly summary?: StoreSummary,
	) {
		this.chatHistory = new StoreChatHistory(
			ctx,
			itemIndex,
			history,
			(turns) => this.capture(turns),
			() => this.longTermOutput(),
		);
	}

	get memoryKeys(): string[] {
		return [this.memoryKey];
	}

	/** The turn: history, summary and recall read and fitted by the engine; what went wrong is logged. */
	private async open(query: string | undefined): Promise<ChatTurn> {
		const { messageLimit, maxTokenLimit } = this.limits;
		const summary = this.summary;
		const turn = await ChatTurn.open({
			memory: this.history.memory,
			read: { maxTokenLimit, messageLimit },
			...(summary
				? {
						summary: {
							summarize: summary.summarize,
							threshold: summary.threshold,
							maxTokens: summary.maxTokens,
						},
					}
				: {}),
			budget: maxTokenLimit,
			...(this.longTerm
				? { longTerm: { memory: this.longTerm.memory, query, emptyQuery: NO_QUERY } }
				: {}),
		});
		for (const w of turn.warnings) this.ctx.logger.warn(w);
		return turn;
	}

	async loadMemoryVariables(values: IDataObject = {}): Promise<{ chat_history: StoreMessage[] }> {
		// Agents before 3.0 hand the user's message over; 3.x does not (the Recall Query stands in).
		const query = typeof values.input === 'string' ? values.input : this.longTerm?.query;
		const loaded = await logged(
			this.ctx,
			this.itemIndex,
			{ action: 'loadMemoryVariables', values, ...this.describe },
			async () => {
				this.turn = await this.open(query);
				return { turn: this.turn, messages: historyMessages(this.turn.agentHistory()) };
			},
			({ turn, messages }) => {
				const {
					turns,
					historyTokens: tokens,
					droppedTurns,
					summary,
					longTermMemory,
				} = turn.report();
				return {
					chatHistory: serialize(messages),
					turns,
					tokens,
					droppedTurns,
					...(summary ? { summary } : {}),
					...(longTermMemory ? { longTermMemory } : {}),
				} as IDataObject;
			},
			'ai-messages-retrieved-from-memory',
		);
		return { chat_history: loaded.messages };
	}

	async saveContext(inputValues: IDataObject, outputValues: IDataObject): Promise<void> {
		await logged(
			this.ctx,
			this.itemIndex,
			{ action: 'saveContext', input: inputValues, output: outputValues },
			async () => {
				const input = contextContent(inputValues, this.inputKey, 'input', 'local_file');
				const output = contextContent(outputValues, this.outputKey, 'output', 'tool_file');
				const turn: TurnInput = {
					userContent: input.text,
					userFiles: input.files,
					assistantContent: output.text,
					assistantFiles: output.files,
				};
				return await this.chatHistory.stored(await this.history.saveTurn(turn));
			},
			(added) => ({ storedTurns: [added.messageId], ...this.describe, ...this.longTermOutput() }),
			'ai-message-added-to-memory',
		);
	}

	async clear(): Promise<void> {
		await this.chatHistory.clear();
	}

	/** The turn's long-term memory report (its recall, and its capture once made) for an output. */
	private longTermOutput(): IDataObject {
		const lt = this.longTerm?.memory;
		if (!lt) return {};
		const report = this.turn?.report().longTermMemory ?? lt.report(undefined, this.captured);
		return { longTermMemory: report as IDataObject };
	}

	/**
	 * Captures answered turns into long-term memory, with the window's earlier turns a failed capture
	 * missed. A failure is reported on the pane (and in n8n's log), never undoes the turn: the next turn
	 * of the conversation captures it. Without a loaded turn (Respond to Chat), the turn alone.
	 */
	private async capture(turns: StoredTurn[]): Promise<void> {
		const lt = this.longTerm?.memory;
		if (!lt?.settings.capture) return;
		for (const t of turns) {
			if (!t.assistantContent.trim() && !t.userContent.trim()) continue;
			const saved = {
				userText: t.userContent,
				answer: t.assistantContent,
				userMessageId: t.userMessageId,
				messageId: t.messageId,
			};
			await logged(
				this.ctx,
				this.itemIndex,
				{ action: 'captureIntoLongTermMemory', turn: t.messageId },
				async () => {
					this.captured = this.turn ? await this.turn.capture(saved) : await captureTurn(lt, saved);
					if (this.captured instanceof Error) this.ctx.logger.warn(this.captured.message);
					return this.captured;
				},
				() => this.longTermOutput(),
			);
		}
	}
}
