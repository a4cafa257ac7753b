import { onItemBase } from '../methods/base';
import { syncOutput } from './syncNow';
import type { MemoryBaseOperation } from './types';

export const regenerate: MemoryBaseOperation = {
	option: {
		name: 'Regenerate',
		value: 'regenerate',
		description:
			'Rebuild the indexes from the capture log: the lexical index always, the vectors when an embedding model is connected (after a mismatch, or to switch embedding model)',
		action: 'Regenerate the knowledge base',
	},
	needsEmbedder: false,
	properties: [],

	execute: onItemBase(async (base) => syncOutput(await base.regenerate())),
};
