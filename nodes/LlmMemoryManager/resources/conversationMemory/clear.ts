import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { clearConversationMemories } from '../../../../src/admin/conversation-memories';
import { clearMemory } from '../../../../src/admin/conversation-memory';
import type { MemoryStorage } from '../../../../src/store/storage';
import type { ItemOperation } from '../../../shared/operation';
import { storageFor } from '../../../shared/storage';
import { targetOf } from './fields';
import type { MemoryTarget, OneMemory } from './fields';
import { nodeNamesOf } from './memoryNode';
import { memoryJson } from './messageItems';

/** Every memory of the conversation: one item listing what was deleted. */
async function clearAll(
	ctx: IExecuteFunctions,
	storage: MemoryStorage,
	target: MemoryTarget,
): Promise<IDataObject> {
	const { workflowId, conversationId } = target;
	const { exists, cleared } = await clearConversationMemories(storage, workflowId, conversationId);
	const names = nodeNamesOf(ctx, workflowId);
	const memories = cleared
		.filter((c) => c.existed)
		.map((c) => ({ ...memoryJson(c, names), key: c.key }));
	return {
		workflowId,
		conversationId,
		memoryMode: 'all',
		conversationExists: exists,
		cleared: memories.length > 0,
		memories,
	};
}

async function clearOne(storage: MemoryStorage, target: OneMemory): Promise<IDataObject> {
	const { key, existed } = await clearMemory(storage, target.address);
	return {
		workflowId: target.workflowId,
		conversationId: target.conversationId,
		memoryMode: target.mode,
		nodeId: target.address.nodeId ?? null,
		key,
		cleared: existed,
	};
}

export const clear: ItemOperation = {
	option: {
		name: 'Clear',
		value: 'clear',
		description:
			'Delete memory of a conversation: with All of This Conversation, all of it (its shared memory and every node’s memory); or the shared memory only, or one node’s memory only. Copied files and versioned data stay.',
		action: 'Clear a memory',
	},
	properties: [],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const target = targetOf(ctx, i);
		const storage = await storageFor(ctx, i);
		const json =
			target.mode === 'all'
				? await clearAll(ctx, storage, target)
				: await clearOne(storage, target);
		return [{ json }];
	},
};
