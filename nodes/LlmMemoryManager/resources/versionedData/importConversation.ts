import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { importConversation as importInto } from '../../../../src/admin/conversation-transfer';
import { optionsCollection } from '../../../shared/descriptions';
import { showFor } from '../../../shared/display';
import { idParameter } from '../../../shared/ids';
import { parseJsonValue } from '../../../shared/json-parameter';
import type { ItemOperation } from '../../../shared/operation';
import { storageFor } from '../../../shared/storage';
import { workflowIdOf } from '../parameters';
import { importSourceOf, importSourceProperties, intoConversationIdOption } from '../transfer';
import { RESOURCE } from './fields';

const show = showFor(RESOURCE, 'import');

export const importConversation: ItemOperation = {
	option: {
		name: 'Import',
		value: 'import',
		description:
			'Import a conversation from a Versioned Data Export (its versions, branches and chat memory), e.g. into another workflow. The whole export is checked before anything is written.',
		action: 'Import a conversation with its versioned data',
	},
	properties: [
		...importSourceProperties(
			show,
			{ name: 'exportedConversation', displayName: 'Exported Conversation' },
			'Whether to replace what the conversation already holds (its chat memory, files and versioned data are all deleted first). Off: a conversation that holds anything is refused and nothing is written.',
		),
		optionsCollection([intoConversationIdOption], show),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const workflowId = workflowIdOf(ctx, i);
		const conversationId = idParameter(ctx, 'options.conversationId', i, 'Into Session ID');
		const source = await importSourceOf(ctx, i, 'exportedConversation');
		const value = parseJsonValue(ctx, i, source, 'The exported conversation');
		const result = await importInto(await storageFor(ctx, i), workflowId, value, {
			conversationId,
			overwrite: ctx.getNodeParameter('overwrite', i, false) === true,
		});
		return [
			{
				json: {
					workflowId,
					conversationId: result.conversationId,
					versions: result.versions,
					branches: result.branches,
					memory: result.memory as unknown as IDataObject | null,
					replaced: result.replaced,
				},
			},
		];
	},
};
