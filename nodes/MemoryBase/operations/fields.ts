import type { INodeProperties } from 'n8n-workflow';

import { sessionIdProperties, optionsCollection } from '../../shared/descriptions';
import { offsetOption } from '../../shared/paging';
import { expireAfterDaysOption } from '../../shared/retention';
import { showForOperations } from '../../shared/display';
import type { Show } from '../../shared/display';

/** Memory Base ID: Flow = workflow, so by default this workflow's ID. */
export const baseIdProperty: INodeProperties = {
	displayName: 'Memory Base ID',
	name: 'baseId',
	type: 'string',
	default: '={{ $workflow.id }}',
	description:
		'Which memory base: by default one per workflow (its ID). Give the same ID in another workflow to capture into or search the same base.',
};

/**
 * Which conversations: one, one user's (every conversation of theirs), or all of the base (every
 * user's). `withUser` adds the user choice (for searches and listings).
 */
export function sessionScopeProperty(
	defaultScope: 'session' | 'user' | 'all',
	operations: string[],
	withUser = false,
): INodeProperties {
	return {
		displayName: 'Conversations',
		name: 'sessionScope',
		type: 'options',
		options: [
			{
				name: 'All Conversations',
				value: 'all',
				description: 'Every conversation (session) of the memory base, of every user',
			},
			{
				name: 'One Conversation',
				value: 'session',
				description: 'Only the conversation (session) given below',
			},
			...(withUser
				? [
						{
							name: 'One User',
							value: 'user',
							description:
								'Every conversation of the user given below (captured with that User ID), in any workflow using this base',
						},
					]
				: []),
		],
		default: defaultScope,
		...(operations.length ? { displayOptions: { show: showForOperations(...operations) } } : {}),
	};
}

/** User ID: who a captured conversation belongs to, and whose memories a search or listing reads. */
export function userIdProperty(show: Show, required: boolean): INodeProperties {
	return {
		displayName: 'User ID',
		name: 'userId',
		type: 'string',
		default: '',
		placeholder: 'e.g. {{ $json.metadata.userId }}',
		description: required
			? 'The user whose memories to read: every conversation captured with this User ID (a string or a number)'
			: 'Who the conversation belongs to (a string or a number), so searches can recall across every conversation of this user and never another user’s. The Chat Trigger passes the chat’s metadata as $json.metadata.',
		displayOptions: { show },
	};
}

/** The session ID fields: always for Capture and Forget, with "One Conversation" for the others. */
export const conversationProperties: INodeProperties[] = [
	...sessionIdProperties(showForOperations('capture', 'forgetConversation')),
	...sessionIdProperties({
		...showForOperations('syncNow', 'search', 'status', 'listMessages'),
		sessionScope: ['session'],
	}),
	userIdProperty(showForOperations('capture'), false),
	userIdProperty({ ...showForOperations('search', 'listMessages'), sessionScope: ['user'] }, true),
];

const captureExpiry = expireAfterDaysOption(
	'the conversation’s captures (and their index entries)',
);

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
	{ ...captureExpiry, description: `Capture: ${captureExpiry.description}` },
	{ ...offsetOption, description: `List Captured Messages: ${offsetOption.description}` },
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
