import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { showFor } from '../../../shared/display';
import { nodeError } from '../../../shared/errors';
import { idParameter } from '../../../shared/ids';
import type { ItemOperation } from '../../../shared/operation';
import { versionOf, versionProperty } from '../versions';
import { openVersionedData, RESOURCE } from './fields';

export const createBranch: ItemOperation = {
	option: {
		name: 'Create Branch',
		value: 'createBranch',
		description:
			'Start a new branch at a version, e.g. to try changes without touching main. Save Version and Rollback then work on it by name.',
		action: 'Create a branch of the data',
	},
	properties: [
		{
			displayName: 'Branch Name',
			name: 'newBranch',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'e.g. draft',
			description:
				'The new branch’s name: at most 100 bytes, no / \\ .. or control characters. It must not exist yet.',
			displayOptions: { show: showFor(RESOURCE, 'createBranch') },
		},
		versionProperty(
			RESOURCE,
			'fromVersion',
			'From Version',
			'The version the branch starts at',
			'createBranch',
		),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { workflowId, conversationId, versions } = await openVersionedData(ctx, i);
		const name = idParameter(ctx, 'newBranch', i, 'Branch Name');
		if (name === undefined)
			throw nodeError(ctx, 'No branch name given', i, 'Give the new branch a name, e.g. draft.');
		const head = await versions.branch(name, versionOf(ctx, i, 'fromVersion', 'From Version'));
		return [
			{
				json: {
					workflowId,
					conversationId,
					branch: head.branch,
					version: head.version,
					updatedAt: head.updated_at,
				},
			},
		];
	},
};
