import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { showFor } from '../../../shared/display';
import type { ItemOperation } from '../../../shared/operation';
import { openFacts, RESOURCE, viewJson } from './fields';

export const getFacts: ItemOperation = {
	option: {
		name: 'Get Facts',
		value: 'getFacts',
		description:
			'What is believed about the user now: each fact with its ID, since when it holds and its evidence (the words quoted, where and when; or who wrote it). Before anything is learned, version is null and facts is empty.',
		action: 'Get the facts about a user',
	},
	properties: [
		{
			displayName: 'Include Superseded',
			name: 'includeSuperseded',
			type: 'boolean',
			default: false,
			description:
				'Whether to list the facts that no longer hold too (superseded by a newer fact, or retired), each with its status and when and why it ended',
			displayOptions: { show: showFor(RESOURCE, 'getFacts') },
		},
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { where, facts } = await openFacts(ctx, i);
		const all = ctx.getNodeParameter('includeSuperseded', i, false) === true;
		return [{ json: { ...where, ...viewJson(await facts.get({ all })) } }];
	},
};
