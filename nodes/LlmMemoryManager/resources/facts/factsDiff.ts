import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ItemOperation } from '../../../shared/operation';
import { diffJson, diffProperties } from '../versions';
import { openFacts, RESOURCE } from './fields';

export const factsDiff: ItemOperation = {
	option: {
		name: 'Facts Diff',
		value: 'factsDiff',
		description:
			'What changed in the facts from one version to another: one line per change and the JSON Patch (RFC 6902)',
		action: 'Compare two versions of the facts',
	},
	properties: diffProperties(RESOURCE, 'factsDiff'),

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { where, facts } = await openFacts(ctx, i);
		const changes = await diffJson(ctx, i, async (from, to) => await facts.diff(from, to));
		return [{ json: { ...where, ...changes } }];
	},
};
