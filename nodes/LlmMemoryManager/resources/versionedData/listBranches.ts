import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ItemOperation } from '../../../shared/operation';
import { openVersionedData } from './fields';

export const listBranches: ItemOperation = {
	option: {
		name: 'List Branches',
		value: 'listBranches',
		description:
			'List the branches with the version each is at, one item each, by name ("main" once something was saved on it)',
		action: 'List the branches of the data',
	},
	properties: [],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { workflowId, conversationId, versions } = await openVersionedData(ctx, i);
		return (await versions.listBranches()).map((h) => ({
			json: {
				workflowId,
				conversationId,
				branch: h.branch,
				version: h.version,
				updatedAt: h.updated_at,
			},
		}));
	},
};
