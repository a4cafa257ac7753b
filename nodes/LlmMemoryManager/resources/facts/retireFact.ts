import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ItemOperation } from '../../../shared/operation';
import { factIdProperty } from './editFact';
import { factJson, openFacts, textOf, textProperty } from './fields';

export const retireFact: ItemOperation = {
	option: {
		name: 'Retire Fact',
		value: 'retireFact',
		description:
			'Say that a current fact no longer holds, with nothing in its place: it stays in the facts, retired with the reason, who and when, and the model no longer sees it',
		action: 'Retire a fact about a user',
	},
	properties: [
		factIdProperty('retireFact'),
		textProperty(
			'retireReason',
			'Reason',
			'Why the fact no longer holds',
			'e.g. the user asked to forget it',
			'retireFact',
		),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { where, facts } = await openFacts(ctx, i);
		const retired = await facts.retire(textOf(ctx, i, 'factId').trim(), {
			reason: textOf(ctx, i, 'retireReason'),
			by: textOf(ctx, i, 'editedBy'),
		});
		const { version } = await facts.read();
		return [{ json: { ...where, version, retired: factJson(retired) } }];
	},
};
