import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { forgetUser as forget } from '../../../../src/admin/forget-user';
import { connectedVectorStore } from '../../../shared/connections';
import { showFor } from '../../../shared/display';
import { requiredIdParameter } from '../../../shared/ids';
import type { ItemOperation } from '../../../shared/operation';
import { storageFor } from '../../../shared/storage';
import { RESOURCE } from './fields';

const show = showFor(RESOURCE, 'forgetUser');

export const forgetUser: ItemOperation = {
	option: {
		name: 'Forget User',
		value: 'forgetUser',
		description:
			'Delete everything stored about one user, or one conversation, in every workflow and Memory Base of this storage: chat memory, copied files, versioned data and captured messages with their index entries (and their vectors in the connected vector store, for Memory Bases that keep theirs in one)',
		action: 'Forget a user',
	},
	properties: [
		{
			displayName: 'Forget',
			name: 'forgetBy',
			type: 'options',
			noDataExpression: true,
			options: [
				{
					name: 'User',
					value: 'user',
					description:
						'Every conversation in which a Memory Base captured this user’s messages (the User ID given to Long-Term Memory or the Memory Base)',
				},
				{
					name: 'Conversation',
					value: 'conversation',
					description: 'One conversation (session ID), in every workflow and Memory Base',
				},
			],
			default: 'user',
			displayOptions: { show },
		},
		{
			displayName: 'User ID',
			name: 'forgetUserId',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'e.g. {{ $json.userId }}',
			displayOptions: { show: { ...show, forgetBy: ['user'] } },
		},
		{
			displayName: 'Session ID',
			name: 'forgetConversationId',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'e.g. {{ $json.sessionId }}',
			displayOptions: { show: { ...show, forgetBy: ['conversation'] } },
		},
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const byUser = ctx.getNodeParameter('forgetBy', i, 'user') === 'user';
		const target = byUser
			? {
					userId: requiredIdParameter(ctx, 'forgetUserId', i, 'User ID', {
						message: 'Forget User needs a User ID',
						help: 'Give the user ID their messages were captured with (Long-Term Memory’s or the Memory Base’s User ID).',
					}),
				}
			: {
					conversationId: requiredIdParameter(ctx, 'forgetConversationId', i, 'Session ID', {
						message: 'Forget User needs a Session ID',
						help: 'Give the session ID of the conversation to forget.',
					}),
				};
		// Memory Bases that keep their vectors in a connected store: their rows go from this one. (As an
		// AI Agent's tool the node has no inputs.)
		const hasInput = ctx
			.getNodeInputs()
			.some((input) => input.type === NodeConnectionTypes.AiVectorStore);
		const vectorStore = hasInput ? await connectedVectorStore(ctx) : undefined;
		const r = await forget(await storageFor(ctx, i), target, { vectorStore });
		return [
			{
				json: {
					...(byUser ? { userId: r.userId } : { conversationId: target.conversationId ?? null }),
					conversationIds: r.conversationIds,
					workflows: r.workflows,
					...r.counts,
					deletedCount: r.deleted.length,
					deleted: r.deleted,
					rewrittenCount: r.rewritten.length,
					rewritten: r.rewritten,
				},
			},
		];
	},
};
