import { isMissing } from '../common/missing';
import { MissingConversationIdError } from '../errors';
import { conversationFilesPrefix, conversationMemoryKey, nodeMemoryKey } from './keys';
import { BufferMemory } from './buffer-memory';
import type { MemoryOptions } from './buffer-memory';

/** Conversation scope: every node of the app shares one history per conversation. */
export class ConversationMemory extends BufferMemory {
	constructor(appId: string, conversationId: string, options: MemoryOptions) {
		super(
			conversationMemoryKey(appId, conversationId, options.keyPrefix),
			conversationFilesPrefix(appId, conversationId, options.keyPrefix),
			options,
		);
	}
}

/** Node scope: each node keeps its own history per conversation. Needs a conversation ID. */
export class NodeMemory extends BufferMemory {
	constructor(
		appId: string,
		conversationId: string | null | undefined,
		nodeId: string,
		options: MemoryOptions,
	) {
		if (isMissing(conversationId)) throw new MissingConversationIdError();
		super(
			nodeMemoryKey(appId, conversationId, nodeId, options.keyPrefix),
			conversationFilesPrefix(appId, conversationId, options.keyPrefix),
			options,
		);
	}
}

/** Dify's name for the conversation scope, kept for existing callers. */
export const TokenBufferMemory = ConversationMemory;
export type TokenBufferMemory = ConversationMemory;
/** Dify's name for the node scope, kept for existing callers. */
export const NodeTokenBufferMemory = NodeMemory;
export type NodeTokenBufferMemory = NodeMemory;
