import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { deleteConversationMemory } from '../../../../src';
import type { ItemOperation } from '../../../shared/operation';
import { conversationIdOf } from '../../../shared/parameters';
import { storageFor } from '../../../shared/storage';
import { workflowIdOf } from '../parameters';

export const deleteConversation: ItemOperation = {
	option: {
		name: 'Delete Conversation',
		value: 'deleteConversation',
		description:
			'Delete everything stored for a conversation: its shared memory, every node’s memory, the copied files and any versioned data. A Memory Base that captured it keeps its copy until its Forget Conversation.',
		action: 'Delete a conversation’s memory',
	},
	properties: [],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const workflowId = workflowIdOf(ctx, i);
		const conversationId = conversationIdOf(ctx, i);
		const deleted = await deleteConversationMemory(
			await storageFor(ctx, i),
			workflowId,
			conversationId,
		);
		return [{ json: { workflowId, conversationId, deletedCount: deleted.length, deleted } }];
	},
};
