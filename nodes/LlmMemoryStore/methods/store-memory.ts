import type { IDataObject, ISupplyDataFunctions } from 'n8n-workflow';

import { factsReport, learnTurn } from '../../../src/turn/facts';
import type { TurnFacts } from '../../../src/turn/facts';
import { captureTurn, ChatTurn } from '../../../src/turn/turn';
import type { LearnResult } from '../../../src/facts/learn';
import type { ChatHistory, StoredTurn } from '../../../src/history/chat-history';
import type { TurnInput } from '../../../src/history/memory-types';
import type { Summarizer } from '../../../src/history/summarized';
import type { CaptureResult } from '../../../src/knowledge/types';
import type { LongTermMemory } from '../../../src/turn/long-term';
import type { SummarySettings } from '../../shared/summary';
import { factsAbout } from '../../shared/facts/facts';
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

/** What the store adds to the history, each when its option is on. */
export interface StoreParts {
	longTerm?: StoreLongTerm;
	summary?: StoreSummary;
	/** Remember Facts: the subject's facts, learned with the model on the Facts Model input. */
	facts?: TurnFacts;
}

const NO_QUERY =
	'nothing to recall for: the Recall Query is empty (the agent did not hand over the user’s message)';

/**
 * The object supplyData hands to n8n: LangChain's chat-memory interface, duck-typed.
 * loadMemoryVariables gives `chat_history` as messages (whole turns, window and token budget applied);
 * saveContext stores a turn without tools; tool turns arrive through chatHistory.addMessages. The turn
 * itself is assembled by the engine (ChatTurn): with facts, Long-Term Memory or a summary of older
 * turns, chat_history starts with them as one user-role message, after the agent's own system message.
 * Once a turn is stored, it is captured into long-term memory and read for facts.
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
	private learned: LearnResult | Error | undefined;
	private readonly longTerm?: StoreLongTerm;

	constructor(
		private readonly ctx: ISupplyDataFunctions,
		private readonly itemIndex: number,
		private readonly history: ChatHistory,
		private readonly limits: Limits,
		/** What the panes show about where the memory lives. */
		private readonly describe: IDataObject,
		private readonly parts: StoreParts = {},
	) {
		this.longTerm = parts.longTerm;
		this.chatHistory = new StoreChatHistory(
			ctx,
			itemIndex,
			history,
			async (turns) => {
				await this.capture(turns);
				await this.learn(turns);
			},
			() => ({ ...this.longTermOutput(), ...this.factsOutput() }),
		);
	}

	get memoryKeys(): string[] {
		return [this.memoryKey];
	}

	/** The turn: history, summary and recall read and fitted by the engine; what went wrong is logged. */
	private async open(query: string | undefined): Promise<ChatTurn> {
		const { messageLimit, maxTokenLimit } = this.limits;
		const summary = this.parts.summary;
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
			...(this.parts.facts ? { facts: this.parts.facts } : {}),
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
					facts,
				} = turn.report();
				return {
					chatHistory: serialize(messages),
					turns,
					tokens,
					droppedTurns,
					...(summary ? { summary } : {}),
					...(longTermMemory ? { longTermMemory } : {}),
					...(facts && this.parts.facts
						? { facts: { ...factsAbout(this.parts.facts), ...facts } }
						: {}),
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
			(added) => ({
				storedTurns: [added.messageId],
				...this.describe,
				...this.longTermOutput(),
				...this.factsOutput(),
			}),
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

	/** The turn's facts report (what was shown, and what its last learning did) for an output. */
	private factsOutput(): IDataObject {
		if (!this.parts.facts) return {};
		const report = this.turn?.report().facts ?? factsReport(undefined, this.learned);
		return { facts: { ...factsAbout(this.parts.facts), ...report } as IDataObject };
	}

	/**
	 * Reads the stored turns for facts (the engine batches: a model call only once enough is unread),
	 * after the last of them. A failed or malformed extraction is reported on the pane (and in n8n's
	 * log), never undoes the turn: the turns stay unread for the next try. Without a loaded turn
	 * (Respond to Chat), the stored turns alone.
	 */
	private async learn(turns: StoredTurn[]): Promise<void> {
		const facts = this.parts.facts;
		const last = turns.at(-1);
		if (!facts || !last) return;
		await logged(
			this.ctx,
			this.itemIndex,
			{ action: 'learnFacts', turn: last.messageId },
			async () => {
				this.learned = this.turn
					? await this.turn.learn(last)
					: await learnTurn(this.history.memory, facts, last);
				const failure =
					this.learned instanceof Error
						? this.learned.message
						: this.learned?.error && `Facts were not learned this turn: ${this.learned.error}`;
				if (failure) this.ctx.logger.warn(failure);
				return this.learned;
			},
			() => this.factsOutput(),
		);
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
