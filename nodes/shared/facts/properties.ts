import type { INodeProperties } from 'n8n-workflow';

import { DEFAULT_FACTS_THRESHOLD } from '../../../src/facts/learn';
import type { Show } from '../display';
import { userIdProperties } from '../long-term/user-id';

/** Remember Facts on: its fields show. */
export const WITH_FACTS: Show = { rememberFacts: [true] };

/** The Facts Token Budget a node starts with. */
export const DEFAULT_FACTS_TOKEN_BUDGET = 400;

/**
 * Remember Facts in LLM with Memory and the LLM Memory Store: what was learned about the user, shown
 * before the model call, learned from the turns after they are saved. `show` is the condition the
 * switch itself shows under; `model` says which model reads the turns. The User ID fields are those of
 * Long-Term Memory, shown here while Long-Term Memory is off.
 */
export function factsProperties(show: Show, model: string): INodeProperties[] {
	const on = { ...show, ...WITH_FACTS };
	return [
		{
			displayName: 'Remember Facts',
			name: 'rememberFacts',
			type: 'boolean',
			default: false,
			description: `Whether to keep what the bot learns about the user as facts ("Lives in Lyon"), each with the words it was learned from: the current facts go before the model’s messages, and after the turn is saved the turns not read yet are read for facts, a few turns at a time. ${model} Facts belong to the User ID (to the conversation without one); see and correct them with LLM Memory Manager → Facts.`,
			displayOptions: { show },
		},
		...userIdProperties({ ...on, longTermMemory: [false] }),
		{
			displayName: 'Facts Token Budget',
			name: 'factsTokenBudget',
			type: 'number',
			default: DEFAULT_FACTS_TOKEN_BUDGET,
			typeOptions: { minValue: 0 },
			description:
				'Tokens the facts section may take. They count against Max History Tokens: the history gives way. When not every fact fits, the newest that fit are shown.',
			displayOptions: { show: on },
		},
		{
			displayName: 'Facts Options',
			name: 'factsOptions',
			type: 'collection',
			placeholder: 'Add Option',
			default: {},
			displayOptions: { show: on },
			options: [
				{
					displayName: 'Learn After (Tokens)',
					name: 'learnAfterTokens',
					type: 'number',
					default: DEFAULT_FACTS_THRESHOLD,
					typeOptions: { minValue: 0 },
					description:
						'The turns not read yet are read for facts once they hold this many tokens (or 12 turns, whichever comes first): one model call per few turns. Lower learns sooner, with more calls. 0: after every turn.',
				},
			],
		},
	];
}
