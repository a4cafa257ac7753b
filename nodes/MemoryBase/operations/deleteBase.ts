import { showForOperations } from '../../shared/display';
import { numberParameter } from '../../shared/parameters';
import { onItemBase } from '../methods/base';
import type { MemoryBaseOperation } from './types';

const show = showForOperations('deleteBase');

export const deleteBase: MemoryBaseOperation = {
	option: {
		name: 'Delete Memory Base',
		value: 'deleteBase',
		description:
			'Delete everything of the memory base: captured outputs, cursors, its knowledge base and vectors. A running sync is cancelled or waited for.',
		action: 'Delete the memory base',
	},
	needsEmbedder: false,
	properties: [
		{
			displayName: 'If a Sync Is Running',
			name: 'ifSyncRunning',
			type: 'options',
			options: [
				{
					name: 'Cancel It',
					value: 'cancel',
					description: 'Stop it after its current batch (its cursor is not moved), then delete',
				},
				{
					name: 'Wait for It',
					value: 'wait',
					description: 'Let it finish, then delete',
				},
			],
			default: 'cancel',
			displayOptions: { show },
		},
		{
			displayName: 'Wait at Most (Seconds)',
			name: 'waitSeconds',
			type: 'number',
			default: 130,
			typeOptions: { minValue: 1 },
			description:
				'How long to wait for running syncs to stop; then the deletion fails with "sync already running" and nothing is deleted',
			displayOptions: { show },
		},
	],

	execute: onItemBase(async (base, ctx, i) => {
		const mode = ctx.getNodeParameter('ifSyncRunning', i, 'cancel') === 'wait' ? 'wait' : 'cancel';
		const seconds = numberParameter(ctx, 'waitSeconds', i, 'Wait at Most (Seconds)', 1, 130);
		const result = await base.delete({ mode, timeoutMs: seconds * 1000 });
		return { baseId: result.baseId, deleted: result.deleted, waitedFor: result.waitedFor };
	}),
};
