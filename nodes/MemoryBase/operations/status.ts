import type { IDataObject } from 'n8n-workflow';

import { STATUS_PAGE, STATUS_PAGE_MAX } from '../../../src/knowledge/status';
import { showForOperations } from '../../shared/display';
import { idParameter } from '../../shared/ids';
import { numberParameter } from '../../shared/parameters';
import { onExistingBase, sessionOf } from '../methods/base';
import { sessionScopeProperty } from './fields';
import type { MemoryBaseOperation } from './types';

/** Shown for a Status of every conversation, which checks a page of them. */
const everyConversation = { ...showForOperations('status'), sessionScope: ['all'] };

export const status: MemoryBaseOperation = {
	option: {
		name: 'Status',
		value: 'status',
		description:
			'Per conversation: cursor, total processed, last sync time and pending count; "mismatch" when the index lost what metadata says was processed',
		action: 'Get the status of the memory base',
	},
	needsEmbedder: false,
	properties: [
		sessionScopeProperty('all', ['status']),
		{
			displayName: 'Conversations per Page',
			name: 'statusLimit',
			type: 'number',
			default: STATUS_PAGE,
			typeOptions: { minValue: 1, maxValue: STATUS_PAGE_MAX },
			description:
				'How many conversations to check, in order of their IDs; the base’s figures and the base-wide index are given on every page',
			displayOptions: { show: everyConversation },
		},
		{
			displayName: 'After Conversation',
			name: 'statusAfter',
			type: 'string',
			default: '',
			placeholder: 'e.g. {{ $json.nextAfter }}',
			description:
				'For the next page: the previous output’s nextAfter (null after the last page). Empty: from the first conversation.',
			displayOptions: { show: everyConversation },
		},
	],

	execute: onExistingBase(async (base, ctx, i) => {
		const sessionId = sessionOf(ctx, i, false);
		const result = await base.status(
			sessionId !== undefined
				? { sessionId }
				: {
						after: idParameter(ctx, 'statusAfter', i, 'After Conversation'),
						limit: numberParameter(ctx, 'statusLimit', i, 'Conversations per Page', 1, STATUS_PAGE),
					},
		);
		return result as unknown as IDataObject;
	}),
};
