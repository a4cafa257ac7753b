import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { optionsCollection } from '../../../shared/descriptions';
import { showFor } from '../../../shared/display';
import type { ItemOperation } from '../../../shared/operation';
import { factJson, openFacts, RESOURCE, textOf, textProperty } from './fields';

/** Options → Note: why a person changed a fact, kept with the change. */
export const noteOption: INodeProperties = {
	displayName: 'Note',
	name: 'note',
	type: 'string',
	default: '',
	placeholder: 'e.g. confirmed on the phone',
	description: 'Why, or where the person learned it: kept with the change as part of its evidence',
};

/** The Fact ID field of the operations on one fact. */
export function factIdProperty(...operations: string[]): INodeProperties {
	return textProperty(
		'factId',
		'Fact ID',
		'The ID of a current fact, as Get Facts lists them',
		'e.g. f3',
		...operations,
	);
}

export const editFact: ItemOperation = {
	option: {
		name: 'Edit Fact',
		value: 'editFact',
		description:
			'Correct a current fact: a new fact with the text given replaces it (the old one stays in the facts, superseded, and in History). The model sees the correction from the next turn on.',
		action: 'Correct a fact about a user',
	},
	properties: [
		factIdProperty('editFact'),
		textProperty(
			'factText',
			'Fact',
			'What is true instead, as one short statement',
			'e.g. Lives in Bergen',
			'editFact',
		),
		optionsCollection([noteOption], showFor(RESOURCE, 'editFact')),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { where, facts } = await openFacts(ctx, i);
		const note = (ctx.getNodeParameter('options', i, {}) as { note?: string }).note;
		const { from, to } = await facts.edit(textOf(ctx, i, 'factId').trim(), {
			text: textOf(ctx, i, 'factText'),
			by: textOf(ctx, i, 'editedBy'),
			...(note ? { note } : {}),
		});
		const { version } = await facts.read();
		return [{ json: { ...where, version, replaced: factJson(from), fact: factJson(to) } }];
	},
};
