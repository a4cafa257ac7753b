import { onItemBase } from '../methods/base';
import { syncOutput } from './syncNow';
import type { MemoryBaseOperation } from './types';

export const regenerate: MemoryBaseOperation = {
	option: {
		name: 'Regenerate',
		value: 'regenerate',
		description:
			'Reset every conversation’s cursor and rebuild the knowledge base from the capture log (after a mismatch, or to switch embedding model)',
		action: 'Regenerate the knowledge base',
	},
	needsEmbedder: true,
	properties: [],

	execute: onItemBase(async (base) => syncOutput(await base.regenerate())),
};
