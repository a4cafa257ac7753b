import type { INodeProperties } from 'n8n-workflow';

import { conversationIdProperties, optionsCollection } from '../../shared/descriptions';
import { showForOperations } from '../../shared/display';

/** Memory Base ID: Flow = workflow, so by default this workflow's ID. */
export const baseIdProperty: INodeProperties = {
	displayName: 'Memory Base ID',
	name: 'baseId',
	type: 'string',
	default: '={{ $workflow.id }}',
	description:
		'Which memory base: by default one per workflow (its ID). Give the same ID in another workflow to capture into or search the same base.',
};

/** Sessions: one conversation, or all of them. Search filters by conversation by default; the others cover all. */
export function sessionScopeProperty(
	defaultScope: 'session' | 'all',
	operations: string[],
): INodeProperties {
	return {
		displayName: 'Conversations',
		name: 'sessionScope',
		type: 'options',
		options: [
			{
				name: 'All Conversations',
				value: 'all',
				description: 'Every conversation (session) of the memory base',
			},
			{
				name: 'One Conversation',
				value: 'session',
				description: 'Only the conversation (session) given below',
			},
		],
		default: defaultScope,
		...(operations.length ? { displayOptions: { show: showForOperations(...operations) } } : {}),
	};
}

/** The conversation ID fields: always for Capture and Forget, with "One Conversation" for the others. */
export const conversationProperties: INodeProperties[] = [
	...conversationIdProperties(showForOperations('capture', 'forgetConversation')),
	...conversationIdProperties({
		...showForOperations('syncNow', 'search', 'status'),
		sessionScope: ['session'],
	}),
];

/** Options shared by every operation that writes or reads the knowledge base. */
export const optionsProperty: INodeProperties = optionsCollection([
	{
		displayName: 'Chunk Overlap',
		name: 'chunkOverlap',
		type: 'number',
		default: 100,
		typeOptions: { minValue: 0 },
		description: 'Characters two neighbouring chunks of a long output share',
	},
	{
		displayName: 'Chunk Size',
		name: 'chunkSize',
		type: 'number',
		default: 1000,
		typeOptions: { minValue: 1 },
		description:
			'Longer outputs are split into chunks of at most this many characters before embedding',
	},
	{
		displayName: 'Embedding Batch Size',
		name: 'embeddingBatchSize',
		type: 'number',
		default: 64,
		typeOptions: { minValue: 1 },
		description: 'Chunks sent to the embedding model per call',
	},
	{
		displayName: 'Lock Duration (Seconds)',
		name: 'leaseSeconds',
		type: 'number',
		default: 120,
		typeOptions: { minValue: 1 },
		description:
			'How long a sync’s lock lasts without renewal (a running sync renews it). A crashed sync blocks the next one at most this long.',
	},
]);
