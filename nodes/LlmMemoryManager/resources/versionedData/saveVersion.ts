import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { jsonSchemaOption, optionsCollection } from '../../../shared/descriptions';
import { showFor } from '../../../shared/display';
import { idParameter } from '../../../shared/ids';
import { optionalJsonParameter, parseJsonValue } from '../../../shared/json-parameter';
import type { ItemOperation } from '../../../shared/operation';
import { numberParameter } from '../../../shared/parameters';
import {
	expireAfterDaysOf,
	expireAfterDaysOption,
	keepLastVersionsOf,
	keepLastVersionsOption,
} from '../../../shared/retention';
import { branchOf, openVersionedData, recordJson, RESOURCE } from './fields';

const show = showFor(RESOURCE, 'saveVersion');

interface Options {
	expectedVersion?: number;
}

export const saveVersion: ItemOperation = {
	option: {
		name: 'Save Version',
		value: 'saveVersion',
		description:
			'Save data as a new version of a branch, with a summary of what changed. Bad data is refused before anything is written.',
		action: 'Save a new version of the data',
	},
	properties: [
		{
			displayName: 'Data',
			name: 'data',
			type: 'json',
			required: true,
			default: '',
			placeholder: 'e.g. {"inci": "WATER", "category": "OTHERS"}',
			description: 'The whole new data (any JSON value, at most 5 MiB), e.g. {{ $json.data }}',
			displayOptions: { show },
		},
		{
			displayName: 'Summary',
			name: 'summary',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'e.g. Changed category to FRAGRANCE',
			description: 'What changed, for History and for a model asked "what did I change?"',
			displayOptions: { show },
		},
		optionsCollection(
			[
				{
					displayName: 'Expected Version',
					name: 'expectedVersion',
					type: 'number',
					default: 1,
					typeOptions: { minValue: 0 },
					description:
						'Save only if the branch is still at this version (0: only while nothing is saved on it); otherwise fail and save nothing. Not set: save after whatever version the branch is at.',
				},
				jsonSchemaOption,
				expireAfterDaysOption('this conversation’s versioned data'),
				keepLastVersionsOption,
				{
					displayName: 'Message ID',
					name: 'messageId',
					type: 'string',
					default: '',
					description:
						'The chat turn this change belongs to (a Message ID as LLM with Memory outputs it), kept with the version',
				},
			],
			show,
		),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const options = ctx.getNodeParameter('options', i, {}) as Options;
		const schema = optionalJsonParameter(ctx, 'options.jsonSchema', i, 'JSON Schema');
		const { workflowId, conversationId, versions } = await openVersionedData(ctx, i, schema);
		const branch = branchOf(ctx, i);
		const data = parseJsonValue(ctx, i, ctx.getNodeParameter('data', i, ''), 'Data');
		const expected =
			options.expectedVersion === undefined
				? undefined
				: numberParameter(ctx, 'options.expectedVersion', i, 'Expected Version', 0, 1);
		const record = await versions.saveVersion({
			data,
			summary: ctx.getNodeParameter('summary', i, '') as string,
			branch,
			messageId: idParameter(ctx, 'options.messageId', i, 'Message ID'),
			expectedVersion: expected === 0 ? null : expected,
			expireAfterDays: expireAfterDaysOf(ctx, i),
			keepLastVersions: keepLastVersionsOf(ctx, i, 'options.keepLastVersions'),
		});
		return [{ json: { workflowId, conversationId, branch, ...recordJson(record) } }];
	},
};
