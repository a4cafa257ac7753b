import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ItemOperation } from '../../../shared/operation';
import { openVersionedData, versionOf, versionProperty } from './fields';

export const diff: ItemOperation = {
	option: {
		name: 'Diff',
		value: 'diff',
		description:
			'What changed from one version to another: one line per change (e.g. replaced /category: "OTHERS" → "FRAGRANCE") and the JSON Patch (RFC 6902)',
		action: 'Compare two versions of the data',
	},
	properties: [
		versionProperty('fromVersion', 'From Version', 'The older version to compare', 'diff'),
		versionProperty('toVersion', 'To Version', 'The newer version to compare', 'diff'),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { workflowId, conversationId, versions } = await openVersionedData(ctx, i);
		const result = await versions.diff(
			versionOf(ctx, i, 'fromVersion', 'From Version'),
			versionOf(ctx, i, 'toVersion', 'To Version'),
		);
		return [
			{
				json: {
					workflowId,
					conversationId,
					from: result.from,
					to: result.to,
					changes: result.summary,
					patch: structuredClone(result.patch) as unknown as IDataObject[],
				},
			},
		];
	},
};
