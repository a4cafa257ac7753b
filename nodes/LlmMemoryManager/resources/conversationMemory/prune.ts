import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { pruneMemory } from '../../../../src/admin/housekeeping';
import { showFor } from '../../../shared/display';
import type { Show } from '../../../shared/display';
import type { ItemOperation } from '../../../shared/operation';
import { numberParameter } from '../../../shared/parameters';
import { storageFor } from '../../../shared/storage';
import { workflowIdOf, workflowIdProperty } from '../parameters';
import { RESOURCE } from './fields';

const show = showFor(RESOURCE, 'prune');

/** Scope (one workflow or all) and the workflow's ID: the same for Prune and Prune Expired. */
export function pruneScopeProperties(show: Show): INodeProperties[] {
	return [
		{
			displayName: 'Scope',
			name: 'pruneScope',
			type: 'options',
			noDataExpression: true,
			options: [
				{
					name: 'One Workflow',
					value: 'workflow',
					description: 'Only the memory of one workflow',
				},
				{
					name: 'All Workflows',
					value: 'all',
					description: 'The memory of every workflow kept in this storage (folder or bucket)',
				},
			],
			default: 'workflow',
			displayOptions: { show },
		},
		workflowIdProperty({ ...show, pruneScope: ['workflow'] }),
	];
}

/** The workflow an item's Scope names; undefined for All Workflows. */
export function pruneWorkflowOf(ctx: IExecuteFunctions, i: number): string | undefined {
	return ctx.getNodeParameter('pruneScope', i, 'workflow') === 'all'
		? undefined
		: workflowIdOf(ctx, i);
}

export const prune: ItemOperation = {
	option: {
		name: 'Prune',
		value: 'prune',
		description: 'Delete memory that was not written for a number of days, with its copied files',
		action: 'Prune old memory',
	},
	properties: [
		...pruneScopeProperties(show),
		{
			displayName: 'Older Than (Days)',
			name: 'olderThanDays',
			type: 'number',
			default: 30,
			typeOptions: { minValue: 0 },
			description:
				'Delete each memory (a conversation’s, or one node’s) last written more than this many days ago. A conversation’s files go once none of its memories remain.',
			displayOptions: { show },
		},
		{
			displayName: 'Dry Run',
			name: 'dryRun',
			type: 'boolean',
			default: false,
			description: 'Whether to only report what would be deleted, deleting nothing',
			displayOptions: { show },
		},
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const workflowId = pruneWorkflowOf(ctx, i);
		const olderThanDays = numberParameter(ctx, 'olderThanDays', i, 'Older Than (Days)', 0, 30);
		const dryRun = ctx.getNodeParameter('dryRun', i, false) === true;
		const { deleted, skipped } = await pruneMemory(await storageFor(ctx, i), {
			olderThanDays,
			appId: workflowId,
			dryRun,
		});
		return [
			{
				json: {
					workflowId: workflowId ?? null,
					olderThanDays,
					dryRun,
					deletedCount: deleted.length,
					deleted,
					skipped,
				},
			},
		];
	},
};
