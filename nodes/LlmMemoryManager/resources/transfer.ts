import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import { optionsCollection } from '../../shared/descriptions';
import type { Show } from '../../shared/display';

/** Export's fields, the same in every resource: Output as File, its binary field and file name. */
export function exportFileProperties(show: Show, example: string): INodeProperties[] {
	return [
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
		optionsCollection(
			[
				{
					displayName: 'File Name',
					name: 'fileName',
					type: 'string',
					default: '',
					placeholder: `e.g. ${example}.json`,
					description: `Name of the output file. Empty: ${example}-<session ID>.json.`,
				},
			],
			{ ...show, asFile: [true] },
		),
	];
}

/** The output item of an Export: the export as JSON and, with Output as File, as a binary JSON file. */
export async function exportItem(
	ctx: IExecuteFunctions,
	i: number,
	exported: object,
	defaultFileName: string,
): Promise<INodeExecutionData> {
	const item: INodeExecutionData = { json: exported as IDataObject };
	if (ctx.getNodeParameter('asFile', i, false) === true) {
		const property = ctx.getNodeParameter('binaryPropertyName', i, 'data') as string;
		const fileName = (ctx.getNodeParameter('options.fileName', i, '') as string) || defaultFileName;
		item.binary = {
			[property]: await ctx.helpers.prepareBinaryData(
				Buffer.from(JSON.stringify(exported, null, 2), 'utf8'),
				fileName,
				'application/json',
			),
		};
	}
	return item;
}

/** Import's fields, the same in every resource: Source (JSON or a binary file), the value, Overwrite. */
export function importSourceProperties(
	show: Show,
	value: { name: string; displayName: string },
	overwriteDescription: string,
): INodeProperties[] {
	return [
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
			...value,
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
			description: overwriteDescription,
			displayOptions: { show },
		},
	];
}

/** Options → Into Session ID of an Import. */
export const intoConversationIdOption: INodeProperties = {
	displayName: 'Into Session ID',
	name: 'conversationId',
	type: 'string',
	default: '',
	description: 'Import into this conversation. Empty: the conversation the export names.',
};

/**
 * What an item imports: the JSON parameter `valueParameter` as n8n resolved it, or the bytes of the
 * binary file (checked to be there: n8n's own error names the field).
 */
export async function importSourceOf(
	ctx: IExecuteFunctions,
	i: number,
	valueParameter: string,
): Promise<unknown> {
	if (ctx.getNodeParameter('source', i, 'json') !== 'binary')
		return ctx.getNodeParameter(valueParameter, i, {});
	const property = ctx.getNodeParameter('binaryPropertyName', i, 'data') as string;
	ctx.helpers.assertBinaryData(i, property);
	return await ctx.helpers.getBinaryDataBuffer(i, property);
}
