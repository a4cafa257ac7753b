import type { IDataObject, ISupplyDataFunctions } from 'n8n-workflow';

import type {
	CaptureResult,
	ChatHistory,
	History,
	PromptMessage,
	RecentTurn,
	StoredTurn,
	Summarizer,
	TurnInput,
} from '../../../src';
import { failedRecall, notRecalled } from '../../shared/long-term/long-term';
import type { LongTermMemory, Recalled } from '../../shared/long-term/long-term';
import { rereadReport, summaryOutput } from '../../shared/summary';
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

/**
 * The object supplyData hands to n8n: LangChain's chat-memory interface, duck-typed.
 * loadMemoryVariables gives `chat_history` as messages (whole turns, window and token budget applied);
 * saveContext stores a turn without tools; tool turns arrive through chatHistory.addMessages.
 *
 * With Long-Term Memory or a summary of older turns, chat_history starts with the recalled section and
 * the summary as one user-role message: n8n's AI Agent puts chat_history right after its own system
 * message, and providers such as Anthropic and Google accept a system message only first, so a second
 * system message would break them. The summary's section says what it is.
 */
export class StoreMemory {
	readonly memoryKey = 'chat_history';
	readonly inputKey = 'input';
	readonly outputKey = 'output';
	readonly returnMessages = true;
	readonly humanPrefix = 'Human';
	readonly aiPrefix = 'AI';
	readonly chatHistory: StoreChatHistory;
	/** This turn's recall (the last load's), shown on every call of the turn. */
	private recalled: Recalled | undefined;
	/** The window's newest turns as the last load read them: what a capture catches up on. */
	private recent: RecentTurn[] = [];

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

	/** `refresh` false: a read again with less room uses the summary as stored, never a second call. */
	private read(maxTokenLimit = this.limits.maxTokenLimit, refresh = true): Promise<History> {
		return this.history.memory.getHistoryPromptMessages({
			maxTokenLimit,
			messageLimit: this.limits.messageLimit,
			...(this.summary ? { summary: { ...this.summary, refresh } } : {}),
		});
	}

	/** A summary that could not be made is said in n8n's log and the pane; the turn goes on. */
	private warnSummary(h: History): History {
		if (h.summary?.error) this.ctx.logger.warn(h.summary.error);
		return h;
	}

	/** The history, with the recalled section in front when Long-Term Memory is on. */
	private async load(query: string | undefined) {
		const lt = this.longTerm;
		if (!lt) return { h: this.warnSummary(await this.read()), recalled: undefined };
		if (!query?.trim()) {
			const h = this.warnSummary(await this.read());
			return { h, recalled: notRecalled(NO_QUERY) };
		}
		const [h, found] = await Promise.all([
			this.read(),
			lt.memory.search(query).catch((error: unknown) => error as Error),
		]);
		if (found instanceof Error) {
			this.ctx.logger.warn(`Long-term memory was not recalled: ${found.message}`);
			return { h, recalled: failedRecall(found) };
		}
		this.warnSummary(h);
		const recalled: Recalled = lt.memory.section(found, h);
		// The recalled section counts against the history's budget: the oldest turns give way.
		const used = h.tokens + (h.summary?.tokens ?? 0);
		if (used + recalled.tokens <= this.limits.maxTokenLimit) return { h, recalled };
		const again = await this.read(Math.max(0, this.limits.maxTokenLimit - recalled.tokens), false);
		if (h.summary && again.summary) again.summary = rereadReport(h.summary, again.summary);
		return { h: again, recalled };
	}

	async loadMemoryVariables(values: IDataObject = {}): Promise<{ chat_history: StoreMessage[] }> {
		// Agents before 3.0 hand the user's message over; 3.x does not (the Recall Query stands in).
		const query = typeof values.input === 'string' ? values.input : this.longTerm?.query;
		const loaded = await logged(
			this.ctx,
			this.itemIndex,
			{ action: 'loadMemoryVariables', values, ...this.describe },
			async () => {
				const { h, recalled } = await this.load(query);
				this.recalled = recalled;
				this.recent = h.recentTurns;
				const lead = [recalled?.section, h.summary?.section].filter((x) => x).join('\n\n');
				const recall: PromptMessage[] = lead ? [{ role: 'user', content: lead }] : [];
				return { h, recalled, messages: historyMessages([...recall, ...h.messages]) };
			},
			({ h, recalled, messages }) => ({
				chatHistory: serialize(messages),
				turns: h.turns,
				tokens: h.tokens,
				droppedTurns: h.droppedTurns,
				...(h.summary ? { summary: summaryOutput(h.summary) } : {}),
				...(this.longTerm ? { longTermMemory: this.longTerm.memory.summary(recalled) } : {}),
			}),
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

	/** The turn's long-term memory report (recall, and the capture when there is one) for an output. */
	private longTermOutput(captured?: CaptureResult | Error): IDataObject {
		const lt = this.longTerm;
		return lt ? { longTermMemory: lt.memory.summary(this.recalled, captured) } : {};
	}

	/**
	 * Captures answered turns into long-term memory, with the window's earlier turns a failed capture
	 * missed. A failure is reported on the pane (and in n8n's log), never undoes the turn: the next
	 * turn of the conversation captures it.
	 */
	private async capture(turns: StoredTurn[]): Promise<void> {
		const lt = this.longTerm;
		if (!lt?.memory.settings.capture) return;
		for (const t of turns) {
			if (!t.assistantContent.trim() && !t.userContent.trim()) continue;
			await logged(
				this.ctx,
				this.itemIndex,
				{ action: 'captureIntoLongTermMemory', turn: t.messageId },
				() =>
					lt.memory
						.captureTurn(
							{
								userText: t.userContent,
								answer: t.assistantContent,
								userMessageId: t.userMessageId,
								messageId: t.messageId,
							},
							this.recent,
						)
						.catch((error: unknown) => {
							const message = `The turn was saved, but not captured into long-term memory (the next turn of this conversation captures it): ${(error as Error).message}`;
							this.ctx.logger.warn(message);
							return new Error(message);
						}),
				(captured) => this.longTermOutput(captured),
			);
		}
	}
}

const NO_QUERY =
	'nothing to recall for: the Recall Query is empty (the agent did not hand over the user’s message)';
