import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ItemOperation } from '../../../shared/operation';
import { versionOf, versionProperty } from '../versions';
import { openVersionedData, recordJson, RESOURCE } from './fields';

export const getVersion: ItemOperation = {
	option: {
		name: 'Get Version',
		value: 'getVersion',
		description: 'Read one version by its number (on any branch): its summary, parent and data',
		action: 'Get a version of the data',
	},
	properties: [
		versionProperty(
			RESOURCE,
			'version',
			'Version',
			'The version number, as History lists them',
			'getVersion',
		),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { workflowId, conversationId, versions } = await openVersionedData(ctx, i);
		const record = await versions.getVersion(versionOf(ctx, i, 'version', 'Version'));
		return [{ json: { workflowId, conversationId, ...recordJson(record) } }];
	},
};
