/**
 * A stand-in for n8n's own memory sub-nodes (Postgres, Redis, MongoDB Chat Memory, Simple Memory) in
 * the in-process workflow tests, built the way they are: an `ai_memory` sub-node whose supplyData
 * evaluates its Session ID (Key) for the item n8n asks for, and hands over a LangChain memory whose
 * `chatHistory` is LangChain's own InMemoryChatMessageHistory (@langchain/core 1.1.8, the copy n8n 2.8.4
 * ships) holding the session's real HumanMessage / AIMessage / ToolMessage / SystemMessage objects.
 * With "Tells Session" on, the history carries its `sessionId`, as the Postgres, Redis and MongoDB
 * histories do; off, it does not, like Simple Memory's.
 *
 *   chatMemoryStandIn.sessions.set('s1', [new HumanMessage('hi'), new AIMessage('hello')]);
 *   chatMemoryStandIn.asked  // [{ itemIndex, session }] of every supplyData call
 */
import { InMemoryChatMessageHistory } from '@langchain/core/chat_history';
import type { BaseMessage } from '@langchain/core/messages';
import {
	NodeConnectionTypes,
	type INodeType,
	type INodeTypeDescription,
	type ISupplyDataFunctions,
	type SupplyData,
} from 'n8n-workflow';

export const CHAT_MEMORY_STAND_IN_TYPE = 'n8n-nodes-engine-test.chatMemoryStandIn';

/** The sessions every stand-in reads (process-wide, like one Postgres table), and what n8n asked for. */
export const chatMemoryStandIn = {
	sessions: new Map<string, BaseMessage[]>(),
	asked: [] as Array<{ itemIndex: number; session: string }>,
	clear(): void {
		this.sessions.clear();
		this.asked.length = 0;
	},
};

export class ChatMemoryStandIn implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Chat Memory Stand-In',
		name: 'chatMemoryStandIn',
		group: ['transform'],
		version: 1,
		description: 'A LangChain chat memory like n8n’s memory sub-nodes, for engine tests',
		defaults: { name: 'Chat Memory' },
		inputs: [],
		outputs: [NodeConnectionTypes.AiMemory],
		outputNames: ['Memory'],
		properties: [
			{ displayName: 'Key', name: 'sessionKey', type: 'string', default: '={{ $json.sessionId }}' },
			{ displayName: 'Tells Session', name: 'tellsSession', type: 'boolean', default: true },
		],
	};

	async supplyData(this: ISupplyDataFunctions, itemIndex: number): Promise<SupplyData> {
		const session = String(this.getNodeParameter('sessionKey', itemIndex));
		chatMemoryStandIn.asked.push({ itemIndex, session });
		const chatHistory = new InMemoryChatMessageHistory([
			...(chatMemoryStandIn.sessions.get(session) ?? []),
		]);
		if (this.getNodeParameter('tellsSession', itemIndex) === true)
			Object.assign(chatHistory, { sessionId: session });
		return {
			response: {
				chatHistory,
				memoryKeys: ['chat_history'],
				loadMemoryVariables: async () => ({ chat_history: await chatHistory.getMessages() }),
				saveContext: async () => undefined,
			},
		};
	}
}
