import type { IDataObject } from 'n8n-workflow';

import { onExistingBase, sessionOf } from '../methods/base';
import { sessionScopeProperty } from './fields';
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

	execute: onExistingBase(async (base, ctx, i) => {
		const result = await base.status({ sessionId: sessionOf(ctx, i, false) });
		return result as unknown as IDataObject;
	}),
};
