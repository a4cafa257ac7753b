import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { importConversationMemory } from '../../../../src';
import { gzipOption } from '../../../shared/descriptions';
import { idParameter } from '../../../shared/ids';
import { storageFor } from '../../../shared/storage';
import { workflowIdOf } from '../parameters';
import { showFor } from '../types';
import type { Operation } from '../types';
import { RESOURCE } from './fields';

const show = showFor(RESOURCE, 'import');

interface Options {
	gzip?: boolean;
}

export const importMemory: Operation = {
	option: {
		name: 'Import',
		value: 'import',
		description:
			'Import a conversation’s memory from an Export, e.g. into another workflow. The whole export is checked before anything is written.',
		action: 'Import a conversation’s memory',
	},
	properties: [
		{
			displayName: 'Source',
			name: 'source',
			type: 'options',
			noDataExpression: true,
			options: [
				{
					name: 'JSON',
					value: 'json',
					description: 'The export as JSON, e.g. the item an Export operation outputs',
				},
				{
					name: 'Binary File',
					value: 'binary',
					description: 'A JSON file an Export wrote, in a binary field of the item',
				},
			],
			default: 'json',
			displayOptions: { show },
		},
		{
			displayName: 'Exported Memory',
			name: 'exportedMemory',
			type: 'json',
			default: '={{ $json }}',
			description:
				'The export: by default the whole input item, as the Export operation outputs it',
			displayOptions: { show: { ...show, source: ['json'] } },
		},
		{
			displayName: 'Input Binary Field',
			name: 'binaryPropertyName',
			type: 'string',
			default: 'data',
			hint: 'The name of the input binary field holding the exported JSON file',
			displayOptions: { show: { ...show, source: ['binary'] } },
		},
		{
			displayName: 'Overwrite',
			name: 'overwrite',
			type: 'boolean',
			default: false,
			description:
				'Whether to replace memory the conversation already has (all of it is deleted first). Off: a conversation that has memory is refused and nothing is written.',
			displayOptions: { show },
		},
		{
			displayName: 'Options',
			name: 'options',
			type: 'collection',
			placeholder: 'Add Option',
			default: {},
			displayOptions: { show },
			options: [
				gzipOption,
				{
					displayName: 'Into Conversation ID',
					name: 'conversationId',
					type: 'string',
					default: '',
					description: 'Import into this conversation. Empty: the conversation the export names.',
				},
			],
		},
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const workflowId = workflowIdOf(ctx, i);
		const conversationId = idParameter(ctx, 'options.conversationId', i, 'Into Conversation ID');
		const options = ctx.getNodeParameter('options', i, {}) as Options;
		let value: unknown;
		if (ctx.getNodeParameter('source', i, 'json') === 'binary') {
			const property = ctx.getNodeParameter('binaryPropertyName', i, 'data') as string;
			ctx.helpers.assertBinaryData(i, property);
			value = await ctx.helpers.getBinaryDataBuffer(i, property);
		} else value = ctx.getNodeParameter('exportedMemory', i, {});
		const result = await importConversationMemory(await storageFor(ctx, i), workflowId, value, {
			conversationId,
			overwrite: ctx.getNodeParameter('overwrite', i, false) === true,
			gzip: options.gzip === true,
		});
		return [{ json: { workflowId, ...result } }];
	},
};
