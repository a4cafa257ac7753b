import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { optionsCollection } from '../../../shared/descriptions';
import { showFor } from '../../../shared/display';
import type { ItemOperation } from '../../../shared/operation';
import { noteOption } from './editFact';
import { factJson, openFacts, RESOURCE, textOf, textProperty } from './fields';

interface Options {
	note?: string;
	validFrom?: string;
}

export const addFact: ItemOperation = {
	option: {
		name: 'Add Fact',
		value: 'addFact',
		description:
			'Write a fact about the user by hand: its evidence is who wrote it (Edited By) and when. The model sees it from the next turn on.',
		action: 'Add a fact about a user',
	},
	properties: [
		textProperty(
			'factText',
			'Fact',
			'What is true about the user, as one short statement',
			'e.g. Has a dog named Biscuit',
			'addFact',
		),
		optionsCollection(
			[
				noteOption,
				{
					displayName: 'Valid From',
					name: 'validFrom',
					type: 'dateTime',
					default: '',
					description:
						'Since when the fact holds (the date the model sees beside it). Not set: now.',
				},
			],
			showFor(RESOURCE, 'addFact'),
		),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { where, facts } = await openFacts(ctx, i);
		const options = ctx.getNodeParameter('options', i, {}) as Options;
		const added = await facts.add({
			text: textOf(ctx, i, 'factText'),
			by: textOf(ctx, i, 'editedBy'),
			...(options.note ? { note: options.note } : {}),
			...(options.validFrom ? { validFrom: String(options.validFrom) } : {}),
		});
		const { version } = await facts.read();
		return [{ json: { ...where, version, added: factJson(added) } }];
	},
};
