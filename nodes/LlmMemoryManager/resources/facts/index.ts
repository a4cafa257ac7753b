import type { Resource } from '../types';
import { addFact } from './addFact';
import { editFact } from './editFact';
import { factsDiff } from './factsDiff';
import { factsHistory } from './factsHistory';
import { fieldProperties, RESOURCE } from './fields';
import { getFacts } from './getFacts';
import { retireFact } from './retireFact';
import { rollbackFacts } from './rollbackFacts';

/** What was learned about a user (Remember Facts in LLM with Memory and the LLM Memory Store). */
export const facts: Resource = {
	option: {
		name: 'Facts',
		value: RESOURCE,
		description:
			'What the bot learned about a user, each fact with its evidence: see, add, correct and retire facts, their history, diff and rollback',
	},
	defaultOperation: 'getFacts',
	properties: fieldProperties,
	operations: [addFact, editFact, factsDiff, factsHistory, getFacts, retireFact, rollbackFacts],
};
