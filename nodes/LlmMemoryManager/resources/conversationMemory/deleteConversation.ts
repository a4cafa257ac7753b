import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { deleteConversationMemory } from '../../../../src/admin/housekeeping';
import type { ItemOperation } from '../../../shared/operation';
import { conversationIdOf } from '../../../shared/parameters';
import { storageFor } from '../../../shared/storage';
import { showFor } from '../../../shared/display';
import { memoryBaseIdsOf, memoryBaseIdsProperty, workflowIdOf } from '../parameters';
import { RESOURCE } from './fields';

export const deleteConversation: ItemOperation = {
	option: {
		name: 'Delete Conversation',
		value: 'deleteConversation',
		description:
			'Delete everything stored for a conversation: its shared memory, every node’s memory, the copied files, any versioned data and what Memory Bases captured of it',
		action: 'Delete a conversation’s memory',
	},
	properties: [memoryBaseIdsProperty(showFor(RESOURCE, 'deleteConversation'))],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const workflowId = workflowIdOf(ctx, i);
		const conversationId = conversationIdOf(ctx, i);
		const deleted = await deleteConversationMemory(
			await storageFor(ctx, i),
			workflowId,
			conversationId,
			{ memoryBaseIds: memoryBaseIdsOf(ctx, i) },
		);
		return [{ json: { workflowId, conversationId, deletedCount: deleted.length, deleted } }];
	},
};
