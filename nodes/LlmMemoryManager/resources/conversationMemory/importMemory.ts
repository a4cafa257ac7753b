import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { importConversationMemory } from '../../../../src/history/memory-transfer';
import { gzipOption, optionsCollection } from '../../../shared/descriptions';
import { showFor } from '../../../shared/display';
import { idParameter } from '../../../shared/ids';
import type { ItemOperation } from '../../../shared/operation';
import { storageFor } from '../../../shared/storage';
import { workflowIdOf } from '../parameters';
import { importSourceOf, importSourceProperties, intoConversationIdOption } from '../transfer';
import { RESOURCE } from './fields';

const show = showFor(RESOURCE, 'import');

interface Options {
	gzip?: boolean;
}

export const importMemory: ItemOperation = {
	option: {
		name: 'Import',
		value: 'import',
		description:
			'Import a conversation’s memory from an Export, e.g. into another workflow. The whole export is checked before anything is written.',
		action: 'Import a conversation’s memory',
	},
	properties: [
		...importSourceProperties(
			show,
			{ name: 'exportedMemory', displayName: 'Exported Memory' },
			'Whether to replace memory the conversation already has (all of it is deleted first). Off: a conversation that has memory is refused and nothing is written.',
		),
		optionsCollection([gzipOption, intoConversationIdOption], show),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const workflowId = workflowIdOf(ctx, i);
		const conversationId = idParameter(ctx, 'options.conversationId', i, 'Into Session ID');
		const options = ctx.getNodeParameter('options', i, {}) as Options;
		const value = await importSourceOf(ctx, i, 'exportedMemory');
		const result = await importConversationMemory(await storageFor(ctx, i), workflowId, value, {
			conversationId,
			overwrite: ctx.getNodeParameter('overwrite', i, false) === true,
			gzip: options.gzip === true,
		});
		return [{ json: { workflowId, ...result } }];
	},
};
