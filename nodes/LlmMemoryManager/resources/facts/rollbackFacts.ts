import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ItemOperation } from '../../../shared/operation';
import { versionOf, versionProperty } from '../versions';
import { openFacts, RESOURCE, textOf, viewJson } from './fields';

export const rollbackFacts: ItemOperation = {
	option: {
		name: 'Roll Back Facts',
		value: 'rollbackFacts',
		description:
			'Restore the beliefs of an earlier version as a new version ("Rolled back to vN by …"). Nothing is deleted: later versions stay in Facts History. The turns read since stay read.',
		action: 'Roll back the facts to a version',
	},
	properties: [
		versionProperty(
			RESOURCE,
			'factsVersion',
			'Version',
			'The version whose facts come back, as Facts History lists them',
			'rollbackFacts',
		),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { where, facts } = await openFacts(ctx, i);
		const target = versionOf(ctx, i, 'factsVersion', 'Version');
		const view = await facts.rollback(target, { by: textOf(ctx, i, 'editedBy') });
		return [{ json: { ...where, rolledBackTo: target, ...viewJson(view) } }];
	},
};
