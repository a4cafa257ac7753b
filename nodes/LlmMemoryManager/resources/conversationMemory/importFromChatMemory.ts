import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { importChat } from '../../../../src/history/chat-import';
import type { SourceMessage } from '../../../../src/history/chat-import';
import { showFor } from '../../../shared/display';
import { requiredIdParameter } from '../../../shared/ids';
import { scopedMemory } from '../../../shared/memory-scope';
import type { MemoryScope } from '../../../shared/memory-scope';
import type { ItemOperation } from '../../../shared/operation';
import { storageFor } from '../../../shared/storage';
import { IMPORT_FROM_CHAT_MEMORY } from '../../methods/inputs';
import { workflowIdOf } from '../parameters';
import { readChatMemory, sourceMessage } from './chatMemorySource';
import { RESOURCE } from './fields';
import { chosenNode, memoryNodeProperty } from './memoryNode';

const show = showFor(RESOURCE, IMPORT_FROM_CHAT_MEMORY);

const properties: INodeProperties[] = [
	{
		displayName:
			'Connect the chat memory to read (Postgres, Redis or MongoDB Chat Memory, Simple Memory, …) to the Chat Memory input, with the settings of the workflow that wrote the chat. It reads one session per input item: set its Session ID (Key) to give the same session as Session ID below, e.g. Define Below with {{ $json.sessionId }}.',
		name: 'importFromChatMemoryNotice',
		type: 'notice',
		default: '',
		displayOptions: { show },
	},
	{
		displayName: 'Session ID',
		name: 'sourceSessionId',
		type: 'string',
		required: true,
		default: '={{ $json.sessionId }}',
		description:
			'The session this item imports (a string or a number), into our memory under the same ID. One session per input item: to import several, give one item per session (e.g. a Split Out node, or a query listing the sessions).',
		displayOptions: { show },
	},
	{
		displayName: 'Into Memory',
		name: 'importInto',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Conversation',
				value: 'conversation',
				description:
					'The session’s shared memory, which every LLM with Memory node and LLM Memory Store in Conversation mode uses',
			},
			{
				name: 'Node',
				value: 'node',
				description: 'One node’s own memory (Node mode)',
			},
		],
		default: 'conversation',
		displayOptions: { show },
	},
	memoryNodeProperty({ ...show, importInto: ['node'] }),
];

/** Which of our memories an item imports into: the session's shared one, or one node's. */
function scopeOf(
	ctx: IExecuteFunctions,
	i: number,
	workflowId: string,
	conversationId: string,
): MemoryScope {
	if (ctx.getNodeParameter('importInto', i, 'conversation') !== 'node')
		return { workflowId, conversationId, mode: 'conversation' };
	return {
		workflowId,
		conversationId,
		mode: 'node',
		nodeId: chosenNode(ctx, i, workflowId).nodeId,
	};
}

export const importFromChatMemory: ItemOperation = {
	option: {
		name: 'Import From Chat Memory',
		value: IMPORT_FROM_CHAT_MEMORY,
		description:
			'Copy a session from the chat memory on the Chat Memory input (n8n’s Postgres, Redis or MongoDB Chat Memory, Simple Memory, …) into this memory, with roles, tool calls and order. A re-run copies only what is new.',
		action: 'Import a session from a chat memory',
	},
	properties,

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const workflowId = workflowIdOf(ctx, i);
		const conversationId = requiredIdParameter(ctx, 'sourceSessionId', i, 'Session ID', {
			message: 'No session ID found',
			help: 'The "Session ID" field is empty for this item: give the session to import, e.g. {{ $json.sessionId }} (a string or a number).',
		});
		const scope = scopeOf(ctx, i, workflowId, conversationId);
		// Opening the memory checks every ID, before the chat memory is read.
		const memory = scopedMemory(scope, {
			storage: await storageFor(ctx, i),
			onWarning: (m: string) => ctx.logger.warn(m),
		});
		const source = await readChatMemory(ctx, i, conversationId);
		const messages = Array.isArray(source.messages)
			? source.messages.map(sourceMessage)
			: (source.messages as SourceMessage[]);
		const report = await importChat(memory, { sessionId: conversationId, messages });
		const json = {
			workflowId,
			conversationId,
			memoryMode: scope.mode,
			nodeId: scope.mode === 'node' ? scope.nodeId : null,
			key: memory.key,
			sourceNode: source.node,
			sourceSession: source.session,
			...report,
		};
		return [{ json }];
	},
};
