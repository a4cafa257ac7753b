import type { IDataObject } from 'n8n-workflow';

import type { SyncResult } from '../../../src/knowledge/types';
import { onItemBase, sessionOf } from '../methods/base';
import { sessionScopeProperty } from './fields';
import type { MemoryBaseOperation } from './types';

export function syncOutput(result: SyncResult): IDataObject {
	return {
		baseId: result.baseId,
		messages: result.messages,
		chunks: result.chunks,
		conversations: result.conversations,
		sessions: result.sessions as unknown as IDataObject[],
	};
}

export const syncNow: MemoryBaseOperation = {
	option: {
		name: 'Sync Now',
		value: 'syncNow',
		description:
			'Ingest what is pending into the knowledge base now, whatever the threshold (one conversation, or all). Fails with "sync already running" while another sync of it runs.',
		action: 'Sync pending outputs now',
	},
	needsEmbedder: true,
	properties: [sessionScopeProperty('all', ['syncNow'])],

	execute: onItemBase(async (base, ctx, i) =>
		syncOutput(await base.sync({ sessionId: sessionOf(ctx, i, false) })),
	),
};
