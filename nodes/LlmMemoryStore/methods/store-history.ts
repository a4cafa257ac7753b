import { NodeConnectionTypes } from 'n8n-workflow';
import type { AiEvent, IDataObject, ISupplyDataFunctions } from 'n8n-workflow';

import type { ChatHistory, StoredTurn } from '../../../src/history/chat-history';
import type { AddedTurn } from '../../../src/history/memory-types';
import { asNodeError } from '../../shared/errors';
import { listedMessages, toChatMessage } from './messages';
import type { StoreMessage } from './messages';

export const serialize = (messages: readonly StoreMessage[]) =>
	messages.map((m) => m.toJSON()) as IDataObject[];
const turnIds = (turns: readonly AddedTurn[]) => turns.map((t) => t.messageId);

/**
 * Runs one memory operation and logs it on the sub-node's input and output panes, as n8n's own memory
 * nodes do through their log wrapper: the input pane gets what was asked, the output pane what was
 * loaded or saved (messages in LangChain's serialized form, which the editor renders as a chat).
 * A failure is logged on the output pane and rethrown as a NodeOperationError.
 */
export async function logged<T>(
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
		/** Called with every turn stored (long-term memory captures them). */
		private readonly onStored: (turns: StoredTurn[]) => Promise<void> = async () => {},
		/** More for the output of a stored turn (the turn's long-term memory report). */
		private readonly report: () => IDataObject = () => ({}),
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
			async () => await this.stored(await this.history.addMessages(chat)),
			(added) => ({
				storedTurns: turnIds(added),
				waitingForAnswer: this.history.hasOpenTurn,
				...this.report(),
			}),
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
			async () =>
				await this.stored(await this.history.addMessages([{ role: 'assistant', content: text }])),
			(added) => ({ storedTurns: turnIds(added), ...this.report() }),
			'ai-message-added-to-memory',
		);
	}

	/** Hands stored turns to onStored, then returns them. */
	async stored<T extends StoredTurn | StoredTurn[]>(turns: T): Promise<T> {
		await this.onStored(Array.isArray(turns) ? turns : [turns]);
		return turns;
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
