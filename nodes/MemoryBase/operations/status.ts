import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { memoryBaseFor, sessionOf } from '../methods/base';
import type { Connections } from '../methods/base';
import { sessionScopeProperty } from './fields';
import { perItem } from './per-item';
import type { MemoryBaseOperation } from './types';

export const status: MemoryBaseOperation = {
	option: {
		name: 'Status',
		value: 'status',
		description:
			'Per conversation: cursor, total processed, last sync time and pending count; "mismatch" when the index lost what metadata says was processed',
		action: 'Get the status of the memory base',
	},
	needsEmbedder: false,
	properties: [sessionScopeProperty('all', ['status'])],

	async execute(ctx: IExecuteFunctions, connections: Connections): Promise<INodeExecutionData[]> {
		return perItem(ctx, async (i) => {
			const base = await memoryBaseFor(ctx, i, connections);
			const result = await base.status({ sessionId: sessionOf(ctx, i, false) });
			return [result as unknown as IDataObject];
		});
	},
};
