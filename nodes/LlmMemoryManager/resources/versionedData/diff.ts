import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ItemOperation } from '../../../shared/operation';
import { diffJson, diffProperties } from '../versions';
import { openVersionedData, RESOURCE } from './fields';

export const diff: ItemOperation = {
	option: {
		name: 'Diff',
		value: 'diff',
		description:
			'What changed from one version to another: one line per change (e.g. replaced /category: "OTHERS" → "FRAGRANCE") and the JSON Patch (RFC 6902)',
		action: 'Compare two versions of the data',
	},
	properties: diffProperties(RESOURCE, 'diff'),

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { workflowId, conversationId, versions } = await openVersionedData(ctx, i);
		const changes = await diffJson(ctx, i, async (from, to) => await versions.diff(from, to));
		return [{ json: { workflowId, conversationId, ...changes } }];
	},
};
