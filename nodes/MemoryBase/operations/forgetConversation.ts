import { onItemBase, sessionOf } from '../methods/base';
import type { MemoryBaseOperation } from './types';

export const forgetConversation: MemoryBaseOperation = {
	option: {
		name: 'Forget Conversation',
		value: 'forgetConversation',
		description:
			'Delete one conversation from the memory base for good: its captured outputs, and its texts and vectors in the index (or in the connected vector store, which must be able to delete by ID). Fails with "sync already running" while a sync of it runs.',
		action: 'Forget a conversation',
	},
	needsEmbedder: false,
	properties: [],

	execute: onItemBase(async (base, ctx, i) => {
		const result = await base.forget(sessionOf(ctx, i, true) as string);
		return {
			baseId: result.baseId,
			conversationId: result.sessionId,
			messages: result.messages,
			vectors: result.vectors,
			deleted: result.deleted.length,
		};
	}),
};
