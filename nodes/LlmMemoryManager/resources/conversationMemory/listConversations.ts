import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { listConversations as list } from '../../../../src/admin/conversation-memory';
import { optionsCollection } from '../../../shared/descriptions';
import { showFor } from '../../../shared/display';
import type { ItemOperation } from '../../../shared/operation';
import { storageFor } from '../../../shared/storage';
import { offsetOption, pageOf, pageProperties, workflowIdOf } from '../parameters';
import { RESOURCE } from './fields';

const show = showFor(RESOURCE, 'listConversations');

export const listConversations: ItemOperation = {
	option: {
		name: 'List Conversations',
		value: 'listConversations',
		description:
			'List a workflow’s conversations with stored memory, one item each, the most recently written first',
		action: 'List conversations',
	},
	properties: [...pageProperties(show, 'conversations'), optionsCollection([offsetOption], show)],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const workflowId = workflowIdOf(ctx, i);
		const page = pageOf(ctx, i);
		const { conversations } = await list(await storageFor(ctx, i), workflowId, page);
		return conversations.map((c) => ({
			json: {
				workflowId,
				conversationId: c.conversationId,
				conversationMemory: c.conversationMemory,
				nodeIds: c.nodeIds,
				files: c.files,
				objects: c.objects,
				bytes: c.bytes,
				lastModified: c.lastModified.toISOString(),
			},
		}));
	},
};
