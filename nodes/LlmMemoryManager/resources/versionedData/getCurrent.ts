import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ItemOperation } from '../../../shared/operation';
import { branchOf, openVersionedData, recordJson } from './fields';

export const getCurrent: ItemOperation = {
	option: {
		name: 'Get Current',
		value: 'getCurrent',
		description:
			'Read the version a branch is at: its number, summary and data. Before the first save, exists is false and data is null.',
		action: 'Get the current version of the data',
	},
	properties: [],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { workflowId, conversationId, versions } = await openVersionedData(ctx, i);
		const branch = branchOf(ctx, i);
		const record = await versions.getCurrent(branch);
		const where = { workflowId, conversationId, branch };
		if (!record)
			return [
				{
					json: {
						...where,
						exists: false,
						version: null,
						parent: null,
						summary: null,
						createdAt: null,
						messageId: null,
						data: null,
					},
				},
			];
		return [{ json: { ...where, exists: true, ...recordJson(record) } }];
	},
};
