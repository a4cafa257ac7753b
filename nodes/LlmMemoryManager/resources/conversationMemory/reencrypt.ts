import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { reencrypt as rewrite } from '../../../../src/admin/reencrypt';
import { EncryptedStorage } from '../../../../src/store/encrypted';
import { showFor } from '../../../shared/display';
import { nodeError } from '../../../shared/errors';
import type { ItemOperation } from '../../../shared/operation';
import { conversationIdOf } from '../../../shared/parameters';
import { storageFor } from '../../../shared/storage';
import { workflowIdOf } from '../parameters';
import { RESOURCE } from './fields';

const show = showFor(RESOURCE, 'reencrypt');

export const reencrypt: ItemOperation = {
	option: {
		name: 'Re-Encrypt',
		value: 'reencrypt',
		description:
			'Rewrite stored memory under the current key of the Encryption credential: after a key rotation, or for memory written before Encryption was turned on',
		action: 'Re-encrypt memory',
	},
	properties: [
		{
			displayName: 'Scope',
			name: 'reencryptScope',
			type: 'options',
			noDataExpression: true,
			options: [
				{
					name: 'This Conversation',
					value: 'conversation',
					description: 'Every memory, file and version of one session of the workflow',
				},
				{
					name: 'This Workflow',
					value: 'workflow',
					description: 'Every conversation of the workflow (Memory Bases not included)',
				},
				{
					name: 'Everything in This Storage',
					value: 'all',
					description: 'Every object of this storage: all workflows and Memory Bases',
				},
			],
			default: 'conversation',
			displayOptions: { show },
		},
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const storage = await storageFor(ctx, i);
		if (!(storage instanceof EncryptedStorage) || !storage.currentKeyId)
			throw nodeError(
				ctx,
				'Re-encrypt needs Encryption = Encrypt with a Key',
				i,
				'Set Encryption to Encrypt with a Key in the storage settings and choose the LLM Memory Encryption Key credential: its Key is the one memory is rewritten under.',
			);
		const scope = ctx.getNodeParameter('reencryptScope', i, 'conversation') as string;
		const appId = scope === 'all' ? undefined : workflowIdOf(ctx, i);
		const conversationId = scope === 'conversation' ? conversationIdOf(ctx, i) : undefined;
		const r = await rewrite(storage, { appId, conversationId });
		return [
			{ json: { scope, workflowId: appId ?? null, conversationId: conversationId ?? null, ...r } },
		];
	},
};
