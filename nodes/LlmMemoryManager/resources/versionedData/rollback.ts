import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ItemOperation } from '../../../shared/operation';
import { versionOf, versionProperty } from '../versions';
import { branchOf, openVersionedData, recordJson, RESOURCE } from './fields';

export const rollback: ItemOperation = {
	option: {
		name: 'Rollback',
		value: 'rollback',
		description:
			'Restore an earlier version’s data as a new version of the branch ("Rolled back to vN"). Nothing is deleted: later versions stay in History.',
		action: 'Roll back the data to a version',
	},
	properties: [
		versionProperty(
			RESOURCE,
			'version',
			'Version',
			'The version whose data the branch goes back to',
			'rollback',
		),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { workflowId, conversationId, versions } = await openVersionedData(ctx, i);
		const branch = branchOf(ctx, i);
		const target = versionOf(ctx, i, 'version', 'Version');
		const record = await versions.rollback(target, branch);
		return [
			{ json: { workflowId, conversationId, branch, rolledBackTo: target, ...recordJson(record) } },
		];
	},
};
