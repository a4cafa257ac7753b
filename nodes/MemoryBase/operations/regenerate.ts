import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { memoryBaseFor } from '../methods/base';
import type { Connections } from '../methods/base';
import { perItem } from './per-item';
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

	async execute(ctx: IExecuteFunctions, connections: Connections): Promise<INodeExecutionData[]> {
		return perItem(ctx, async (i) => {
			const base = await memoryBaseFor(ctx, i, connections);
			return [syncOutput(await base.regenerate())];
		});
	},
};
