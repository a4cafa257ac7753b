import type { INodeProperties } from 'n8n-workflow';

import type { Show } from '../display';

/**
 * Who the conversation belongs to: User ID From, User ID and When User ID Is Empty, shown under `show`.
 * Long-Term Memory and Remember Facts read the same fields; each shows them where the other does not
 * (n8n's display conditions cannot say "this switch or that one").
 */
export function userIdProperties(show: Show): INodeProperties[] {
	return [
		{
			displayName: 'User ID From',
			name: 'longTermUserIdSource',
			type: 'options',
			noDataExpression: true,
			options: [
				{
					name: 'Define Below',
					value: 'define',
					description: 'An expression or a value in the User ID field',
				},
				{
					name: 'Chat Widget Metadata',
					value: 'metadata',
					description:
						'{{ $json.metadata.userId }}: what an embedded chat widget sends when created with metadata: { userId }',
				},
				{
					name: 'n8n Login (Hosted Chat)',
					value: 'n8nUser',
					description:
						'{{ $json.user.id }}: the Chat Trigger (version 1.5, n8n 2.40 and later) with n8n User Auth and Include User in Output',
				},
			],
			default: 'define',
			description:
				'Where the ID of the user the conversation belongs to comes from. n8n’s hosted chat page sends no user ID of its own: use the chat widget’s metadata, a webhook field, or the n8n login.',
			displayOptions: { show },
		},
		{
			displayName: 'User ID',
			name: 'longTermUserId',
			type: 'string',
			default: '',
			placeholder: 'e.g. {{ $json.metadata.userId }} or {{ $json.body.userId }}',
			description:
				'Who the conversation belongs to: recall then spans every conversation of this user in the Memory Base (also from other workflows using the same Base ID), never another user’s, and Remember Facts keeps this user’s facts. A string or a number. Empty: recall and facts of this conversation only, and the output says so.',
			displayOptions: { show: { ...show, longTermUserIdSource: ['define'] } },
		},
		{
			displayName: 'When User ID Is Empty',
			name: 'longTermEmptyUserId',
			type: 'options',
			noDataExpression: true,
			options: [
				{
					name: 'Recall This Conversation',
					value: 'conversation',
					description:
						'Run the turn with recall (and facts) of this conversation only, and say so in the output',
				},
				{
					name: 'Fail',
					value: 'fail',
					description:
						'Stop before the model is called: for workflows where every turn must have a user',
				},
			],
			default: 'conversation',
			description:
				'What happens when the User ID is empty and Recall Scope is This User, or Remember Facts is on',
			displayOptions: { show },
		},
	];
}
