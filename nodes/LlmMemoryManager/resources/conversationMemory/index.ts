import type { Resource } from '../types';
import { clear } from './clear';
import { deleteConversation } from './deleteConversation';
import { exportMemory } from './exportMemory';
import { fieldProperties, RESOURCE } from './fields';
import { forgetUser } from './forgetUser';
import { getMessages } from './getMessages';
import { importFromChatMemory } from './importFromChatMemory';
import { importMemory } from './importMemory';
import { listConversations } from './listConversations';
import { prune } from './prune';
import { pruneExpired } from './pruneExpired';
import { reencrypt } from './reencrypt';

/** The memory of LLM with Memory and LLM Memory Store: the same documents, addressed the same way. */
export const conversationMemory: Resource = {
	option: {
		name: 'Conversation Memory',
		value: RESOURCE,
		description:
			'Chat memory of LLM with Memory and LLM Memory Store nodes, per conversation or per node',
	},
	defaultOperation: 'getMessages',
	properties: fieldProperties,
	operations: [
		clear,
		deleteConversation,
		exportMemory,
		forgetUser,
		getMessages,
		importMemory,
		importFromChatMemory,
		listConversations,
		prune,
		pruneExpired,
		reencrypt,
	],
};
