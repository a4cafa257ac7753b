import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ItemOperation } from '../../../shared/operation';
import { openFacts, versionOf, versionProperty } from './fields';

export const factsDiff: ItemOperation = {
	option: {
		name: 'Facts Diff',
		value: 'factsDiff',
		description:
			'What changed in the facts from one version to another: one line per change and the JSON Patch (RFC 6902)',
		action: 'Compare two versions of the facts',
	},
	properties: [
		versionProperty('fromVersion', 'From Version', 'The older version to compare', 'factsDiff'),
		versionProperty('toVersion', 'To Version', 'The newer version to compare', 'factsDiff'),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { where, facts } = await openFacts(ctx, i);
		const result = await facts.diff(
			versionOf(ctx, i, 'fromVersion', 'From Version'),
			versionOf(ctx, i, 'toVersion', 'To Version'),
		);
		return [
			{
				json: {
					...where,
					from: result.from,
					to: result.to,
					changes: result.summary,
					patch: structuredClone(result.patch) as unknown as IDataObject[],
				},
			},
		];
	},
};
