import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { exportConversationMemory, missingFilesOf } from '../../../../src/history/memory-transfer';
import { showFor } from '../../../shared/display';
import type { ItemOperation } from '../../../shared/operation';
import { conversationIdOf } from '../../../shared/parameters';
import { storageFor } from '../../../shared/storage';
import { workflowIdOf } from '../parameters';
import { exportFileProperties, exportItem } from '../transfer';
import { RESOURCE } from './fields';

const show = showFor(RESOURCE, 'export');

export const exportMemory: ItemOperation = {
	option: {
		name: 'Export',
		value: 'export',
		description:
			'Export all memory of a conversation (its shared memory, every node’s memory and the copied files) as JSON, for Import',
		action: 'Export a conversation’s memory',
	},
	properties: exportFileProperties(show, 'memory'),

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const workflowId = workflowIdOf(ctx, i);
		const conversationId = conversationIdOf(ctx, i);
		const data = await exportConversationMemory(
			await storageFor(ctx, i),
			workflowId,
			conversationId,
		);
		const missing = missingFilesOf(data);
		if (missing.length > 0)
			ctx.addExecutionHints({
				message: `${missing.length} file(s) the memory references were no longer stored and are not in the export`,
				location: 'outputPane',
			});
		return [await exportItem(ctx, i, data, `memory-${conversationId}.json`)];
	},
};
