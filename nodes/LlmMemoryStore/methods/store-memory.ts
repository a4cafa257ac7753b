import { NodeConnectionTypes } from 'n8n-workflow';
import type { AiEvent, IDataObject, ISupplyDataFunctions } from 'n8n-workflow';

import type { AddedTurn, ChatHistory, TurnInput } from '../../../src';
import { asNodeError } from '../../shared/errors';
import { contextValue, historyMessages, listedMessages, toChatMessage } from './messages';
import type { StoreMessage } from './messages';

export interface Limits {
	/** Context window: the most past turns the model receives. */
	messageLimit: number;
	/** Token budget of that history. */
	maxTokenLimit: number;
}

const serialize = (messages: readonly StoreMessage[]) =>
	messages.map((m) => m.toJSON()) as IDataObject[];
const turnIds = (turns: readonly AddedTurn[]) => turns.map((t) => t.messageId);

/**
 * Runs one memory operation and logs it on the sub-node's input and output panes, as n8n's own memory
 * nodes do through their log wrapper: the input pane gets what was asked, the output pane what was
 * loaded or saved (messages in LangChain's serialized form, which the editor renders as a chat).
 * A failure is logged on the output pane and rethrown as a NodeOperationError.
 */
async function logged<T>(
	ctx: ISupplyDataFunctions,
	itemIndex: number,
	input: IDataObject,
	run: () => Promise<T>,
	output: (result: T) => IDataObject,
	event?: AiEvent,
): Promise<T> {
	let index = 0;
	try {
		index = ctx.addInputData(NodeConnectionTypes.AiMemory, [[{ json: input }]]).index;
	} catch {
		// logging never fails a memory operation
	}
	let result: T;
	try {
		result = await run();
	} catch (error) {
		const failure = asNodeError(ctx, error, itemIndex);
		try {
			ctx.addOutputData(NodeConnectionTypes.AiMemory, index, failure);
		} catch {
			// as above
		}
		throw failure;
	}
	const json = { action: input.action, ...output(result) } as IDataObject;
	try {
		ctx.addOutputData(NodeConnectionTypes.AiMemory, index, [[{ json }]]);
		if (event) ctx.logAiEvent(event, JSON.stringify(json));
	} catch {
		// as above
	}
	return result;
}

/**
 * The chat history n8n's nodes call on a memory (`memory.chatHistory`): Chat Trigger's session reload
 * (getMessages), the AI Agent's tool turns (addMessages), Respond to Chat (addUserMessage,
 * addAIMessage) and the Chat Memory Manager (getMessages, addMessage, clear).
 */
export class StoreChatHistory {
	constructor(
		private readonly ctx: ISupplyDataFunctions,
		private readonly itemIndex: number,
		private readonly history: ChatHistory,
	) {}

	async getMessages(): Promise<StoreMessage[]> {
		return await logged(
			this.ctx,
			this.itemIndex,
			{ action: 'getMessages' },
			async () => listedMessages(await this.history.getMessages()),
			(messages) => ({ chatHistory: serialize(messages) }),
			'ai-messages-retrieved-from-memory',
		);
	}

	/** One message; a whole turn is stored once its answer arrives (see ChatHistory). */
	async addMessage(message: unknown): Promise<void> {
		await this.addMessages([message]);
	}

	async addMessages(messages: readonly unknown[]): Promise<void> {
		const chat = messages.map(toChatMessage);
		await logged(
			this.ctx,
			this.itemIndex,
			{
				action: messages.length === 1 ? 'addMessage' : 'addMessages',
				messages: chat as unknown as IDataObject[],
			},
			async () => await this.history.addMessages(chat),
			(added) => ({ storedTurns: turnIds(added), waitingForAnswer: this.history.hasOpenTurn }),
			'ai-message-added-to-memory',
		);
	}

	/**
	 * A user message on its own, stored at once (unanswered until an answer follows in this memory):
	 * n8n's Respond to Chat adds the user's reply this way, with nothing after it in the same call.
	 */
	async addUserMessage(text: string): Promise<void> {
		await logged(
			this.ctx,
			this.itemIndex,
			{ action: 'addUserMessage', message: text },
			async () => {
				await this.history.addMessages([{ role: 'user', content: text }]);
				return await this.history.flushOpen();
			},
			(added) => ({ storedTurns: added ? [added.messageId] : [] }),
			'ai-message-added-to-memory',
		);
	}

	/** An AI message: the answer of the open turn, or a turn of its own (e.g. Respond to Chat's question). */
	async addAIMessage(text: string): Promise<void> {
		await logged(
			this.ctx,
			this.itemIndex,
			{ action: 'addAIMessage', message: text },
			async () => await this.history.addMessages([{ role: 'assistant', content: text }]),
			(added) => ({ storedTurns: turnIds(added) }),
			'ai-message-added-to-memory',
		);
	}

	/** LangChain's older name for addAIMessage. */
	async addAIChatMessage(text: string): Promise<void> {
		await this.addAIMessage(text);
	}

	/** Deletes this memory's whole document (every thread). */
	async clear(): Promise<void> {
		await logged(
			this.ctx,
			this.itemIndex,
			{ action: 'clear' },
			async () => await this.history.clear(),
			() => ({ cleared: true }),
		);
	}

	/** Stores a turn left open (a lone user message, tool steps without an answer). */
	async flushOpen(): Promise<void> {
		if (!this.history.hasOpenTurn) return;
		await logged(
			this.ctx,
			this.itemIndex,
			{ action: 'storeOpenTurn' },
			async () => await this.history.flushOpen(),
			(added) => ({ storedTurns: added ? [added.messageId] : [] }),
		);
	}
}

/**
 * The object supplyData hands to n8n (next-wave.md §A.2): LangChain's chat-memory interface, duck-typed.
 * loadMemoryVariables gives `chat_history` as messages (whole turns, window and token budget applied);
 * saveContext stores a turn without tools; tool turns arrive through chatHistory.addMessages.
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
	) {
		this.chatHistory = new StoreChatHistory(ctx, itemIndex, history);
	}

	get memoryKeys(): string[] {
		return [this.memoryKey];
	}

	async loadMemoryVariables(values: IDataObject = {}): Promise<{ chat_history: StoreMessage[] }> {
		const loaded = await logged(
			this.ctx,
			this.itemIndex,
			{ action: 'loadMemoryVariables', values, ...this.describe },
			async () => {
				const h = await this.history.memory.getHistoryPromptMessages({
					maxTokenLimit: this.limits.maxTokenLimit,
					messageLimit: this.limits.messageLimit,
				});
				return { h, messages: historyMessages(h.messages) };
			},
			({ h, messages }) => ({
				chatHistory: serialize(messages),
				turns: h.turns,
				tokens: h.tokens,
				droppedTurns: h.droppedTurns,
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
				const turn: TurnInput = {
					userContent: contextValue(inputValues, this.inputKey, 'input'),
					assistantContent: contextValue(outputValues, this.outputKey, 'output'),
				};
				return await this.history.saveTurn(turn);
			},
			(added) => ({ storedTurns: [added.messageId], ...this.describe }),
			'ai-message-added-to-memory',
		);
	}

	async clear(): Promise<void> {
		await this.chatHistory.clear();
	}
}
