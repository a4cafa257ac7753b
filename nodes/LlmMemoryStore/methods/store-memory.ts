import type { IDataObject, ISupplyDataFunctions } from 'n8n-workflow';

import type { ChatHistory, History, PromptMessage, StoredTurn, TurnInput } from '../../../src';
import type { LongTermMemory, Recalled } from '../../shared/long-term/long-term';
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

/**
 * The object supplyData hands to n8n: LangChain's chat-memory interface, duck-typed.
 * loadMemoryVariables gives `chat_history` as messages (whole turns, window and token budget applied);
 * saveContext stores a turn without tools; tool turns arrive through chatHistory.addMessages.
 *
 * With Long-Term Memory, chat_history starts with the recalled section as a user-role message: n8n's
 * AI Agent puts chat_history right after its own system message, and providers such as Anthropic and
 * Google accept a system message only first, so a second system message would break them.
 */
export class StoreMemory {
	readonly memoryKey = 'chat_history';
	readonly inputKey = 'input';
	readonly outputKey = 'output';
	readonly returnMessages = true;
	readonly humanPrefix = 'Human';
	readonly aiPrefix = 'AI';
	readonly chatHistory: StoreChatHistory;

	constructor(
		private readonly ctx: ISupplyDataFunctions,
		private readonly itemIndex: number,
		private readonly history: ChatHistory,
		private readonly limits: Limits,
		/** What the panes show about where the memory lives. */
		private readonly describe: IDataObject,
		private readonly longTerm?: StoreLongTerm,
	) {
		this.chatHistory = new StoreChatHistory(ctx, itemIndex, history, (turns) =>
			this.capture(turns),
		);
	}

	get memoryKeys(): string[] {
		return [this.memoryKey];
	}

	private read(maxTokenLimit = this.limits.maxTokenLimit): Promise<History> {
		return this.history.memory.getHistoryPromptMessages({
			maxTokenLimit,
			messageLimit: this.limits.messageLimit,
		});
	}

	/** The history, with the recalled section in front when Long-Term Memory is on. */
	private async load(query: string | undefined) {
		const lt = this.longTerm;
		if (!lt || !query?.trim()) return { h: await this.read(), recalled: undefined };
		const [h, hits] = await Promise.all([
			this.read(),
			lt.memory.search(query).catch((error: unknown) => error as Error),
		]);
		if (hits instanceof Error) {
			this.ctx.logger.warn(`Long-term memory was not recalled: ${hits.message}`);
			return { h, recalled: { section: '', tokens: 0, hits: [], skipped: 0, error: hits.message } };
		}
		const recalled: Recalled = lt.memory.section(hits, h);
		// The recalled section counts against the history's budget: the oldest turns give way.
		const fits = h.tokens + recalled.tokens <= this.limits.maxTokenLimit;
		return {
			h: fits ? h : await this.read(Math.max(0, this.limits.maxTokenLimit - recalled.tokens)),
			recalled,
		};
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
				const recall: PromptMessage[] = recalled?.section
					? [{ role: 'user', content: recalled.section }]
					: [];
				return { h, recalled, messages: historyMessages([...recall, ...h.messages]) };
			},
			({ h, recalled, messages }) => ({
				chatHistory: serialize(messages),
				turns: h.turns,
				tokens: h.tokens,
				droppedTurns: h.droppedTurns,
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
			(added) => ({ storedTurns: [added.messageId], ...this.describe }),
			'ai-message-added-to-memory',
		);
	}

	async clear(): Promise<void> {
		await this.chatHistory.clear();
	}

	/** Captures answered turns into long-term memory; a failure is reported, never undoes the turn. */
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
					lt.memory.captureTurn({
						runId: `${this.ctx.getExecutionId?.() ?? 'run'}:${t.messageId}`,
						userText: t.userContent,
						answer: t.assistantContent,
						userMessageId: t.userMessageId,
						messageId: t.messageId,
					}),
				(captured) => ({ longTermMemory: lt.memory.summary(undefined, captured) }),
			).catch((error: unknown) =>
				this.ctx.logger.warn(
					`The turn was saved, but not captured into long-term memory: ${(error as Error).message}`,
				),
			);
		}
	}
}
