import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { clearMemory } from '../../../../src';
import type { ItemOperation } from '../../../shared/operation';
import { storageFor } from '../../../shared/storage';
import { addressOf } from './fields';

export const clear: ItemOperation = {
	option: {
		name: 'Clear',
		value: 'clear',
		description:
			'Delete one memory: the conversation’s shared memory, or one node’s memory. The conversation’s other memories stay.',
		action: 'Clear a memory',
	},
	properties: [],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { mode, ...address } = addressOf(ctx, i);
		const { key, existed } = await clearMemory(await storageFor(ctx, i), address);
		return [
			{
				json: {
					workflowId: address.appId,
					conversationId: address.conversationId,
					memoryMode: mode,
					nodeId: address.nodeId ?? null,
					key,
					cleared: existed,
				},
			},
		];
	},
};
