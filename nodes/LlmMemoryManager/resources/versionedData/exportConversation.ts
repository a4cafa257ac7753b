import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { missingFilesOf } from '../../../../src/history/memory-transfer';
import { showFor } from '../../../shared/display';
import type { ItemOperation } from '../../../shared/operation';
import { exportFileProperties, exportItem } from '../transfer';
import { openVersionedData, RESOURCE } from './fields';

export const exportConversation: ItemOperation = {
	option: {
		name: 'Export',
		value: 'export',
		description:
			'Export the whole conversation as JSON, for Import: every version and branch of its versioned data, and its chat memory (as Conversation Memory → Export gives it), so the versions and the chat turns that made them stay together',
		action: 'Export a conversation with its versioned data',
	},
	properties: exportFileProperties(showFor(RESOURCE, 'export'), 'conversation'),

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { conversationId, versions } = await openVersionedData(ctx, i);
		const exported = await versions.exportConversation();
		const missing = exported.memory ? missingFilesOf(exported.memory) : [];
		if (missing.length > 0)
			ctx.addExecutionHints({
				message: `${missing.length} file(s) the memory references were no longer stored and are not in the export`,
				location: 'outputPane',
			});
		return [await exportItem(ctx, i, exported, `conversation-${conversationId}.json`)];
	},
};
