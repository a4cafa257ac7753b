import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { exportConversationMemory, missingFilesOf } from '../../../../src';
import { storageFor } from '../../../shared/storage';
import { workflowIdOf } from '../parameters';
import { showFor } from '../types';
import type { Operation } from '../types';
import { conversationIdOf, RESOURCE } from './fields';

const show = showFor(RESOURCE, 'export');

export const exportMemory: Operation = {
	option: {
		name: 'Export',
		value: 'export',
		description:
			'Export all memory of a conversation (its shared memory, every node’s memory and the copied files) as JSON, for Import',
		action: 'Export a conversation’s memory',
	},
	properties: [
		{
			displayName: 'Output as File',
			name: 'asFile',
			type: 'boolean',
			default: false,
			description:
				'Whether to also put the export in a binary JSON file (e.g. to write it to disk or S3). The item’s JSON holds the export either way.',
			displayOptions: { show },
		},
		{
			displayName: 'Put Output File in Field',
			name: 'binaryPropertyName',
			type: 'string',
			default: 'data',
			hint: 'The name of the output binary field to put the file in',
			displayOptions: { show: { ...show, asFile: [true] } },
		},
		{
			displayName: 'Options',
			name: 'options',
			type: 'collection',
			placeholder: 'Add Option',
			default: {},
			displayOptions: { show: { ...show, asFile: [true] } },
			options: [
				{
					displayName: 'File Name',
					name: 'fileName',
					type: 'string',
					default: '',
					placeholder: 'e.g. memory.json',
					description: 'Name of the output file. Empty: memory-<conversation ID>.json.',
				},
			],
		},
	],

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
		const item: INodeExecutionData = { json: data as unknown as IDataObject };
		if (ctx.getNodeParameter('asFile', i, false) === true) {
			const property = ctx.getNodeParameter('binaryPropertyName', i, 'data') as string;
			const fileName =
				(ctx.getNodeParameter('options.fileName', i, '') as string) ||
				`memory-${conversationId}.json`;
			item.binary = {
				[property]: await ctx.helpers.prepareBinaryData(
					Buffer.from(JSON.stringify(data, null, 2), 'utf8'),
					fileName,
					'application/json',
				),
			};
		}
		return [item];
	},
};
