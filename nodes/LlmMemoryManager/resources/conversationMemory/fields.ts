import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { MemoryAddress } from '../../../../src';
import { sessionIdProperties, MEMORY_MODE_OPTIONS } from '../../../shared/descriptions';
import { showFor } from '../../../shared/display';
import { requiredIdParameter } from '../../../shared/ids';
import { memoryAddress } from '../../../shared/memory-scope';
import type { MemoryScope, ScopeMode } from '../../../shared/memory-scope';
import { conversationIdOf } from '../../../shared/parameters';
import { workflowIdOf, workflowIdProperty } from '../parameters';

export const RESOURCE = 'conversationMemory';

/** Operations on one conversation of one workflow. */
const ONE_CONVERSATION = showFor(RESOURCE, 'getMessages', 'clear', 'deleteConversation', 'export');
/** Operations on one memory document: the conversation's, or one node's. */
const ONE_MEMORY = showFor(RESOURCE, 'getMessages', 'clear');

export const fieldProperties: INodeProperties[] = [
	workflowIdProperty(
		showFor(
			RESOURCE,
			'getMessages',
			'clear',
			'deleteConversation',
			'listConversations',
			'export',
			'import',
		),
	),
	...sessionIdProperties(ONE_CONVERSATION),
	{
		displayName: 'Memory',
		name: 'memoryMode',
		type: 'options',
		noDataExpression: true,
		options: MEMORY_MODE_OPTIONS.map((o) => ({
			...o,
			description:
				o.value === 'conversation'
					? 'The conversation’s shared memory, used by every LLM with Memory node and LLM Memory Store in Conversation mode'
					: 'One node’s own memory (Node mode), chosen by the node’s ID',
		})),
		default: 'conversation',
		displayOptions: { show: ONE_MEMORY },
	},
	{
		displayName: 'Node ID',
		name: 'nodeId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 6f1c2a9e-0d4b-4f7a-9c1e-2b7d5a8e3f10',
		description:
			'The stable ID of the LLM with Memory node (or LLM Memory Store) whose Node-mode memory to use: renaming a node keeps its ID. List Conversations shows the node IDs with memory per conversation; copying the node in the editor shows its "id".',
		displayOptions: { show: { ...ONE_MEMORY, memoryMode: ['node'] } },
	},
];

/** The memory document an item addresses: the same keys LLM with Memory and LLM Memory Store use. */
export function addressOf(ctx: IExecuteFunctions, i: number): MemoryAddress & { mode: ScopeMode } {
	const at = { workflowId: workflowIdOf(ctx, i), conversationId: conversationIdOf(ctx, i) };
	const mode = ctx.getNodeParameter('memoryMode', i, 'conversation') as ScopeMode;
	// The Node ID field only counts (and is only checked) for a node's memory.
	const scope: MemoryScope =
		mode === 'node' ? { ...at, mode, nodeId: nodeIdOf(ctx, i) } : { ...at, mode };
	return { mode, ...memoryAddress(scope) };
}

function nodeIdOf(ctx: IExecuteFunctions, i: number): string {
	return requiredIdParameter(ctx, 'nodeId', i, 'Node ID', {
		message: 'Node memory needs a node ID, but none was given',
		help: 'Give the stable ID of the LLM with Memory node whose memory to use (List Conversations shows the node IDs with memory).',
	});
}
