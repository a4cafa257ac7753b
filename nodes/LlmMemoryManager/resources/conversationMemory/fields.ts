import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { MemoryAddress } from '../../../../src/admin/conversation-memory';
import { sessionIdProperties } from '../../../shared/descriptions';
import { showFor } from '../../../shared/display';
import { requiredIdParameter } from '../../../shared/ids';
import { conversationIdOf } from '../../../shared/parameters';
import { workflowIdOf, workflowIdProperty } from '../parameters';
import { chosenNode, memoryNodeProperty } from './memoryNode';

export const RESOURCE = 'conversationMemory';

/** Operations on one conversation of one workflow. */
const ONE_CONVERSATION = showFor(RESOURCE, 'getMessages', 'clear', 'deleteConversation', 'export');
/** Operations on a conversation's memories: all of them, the shared one, or one node's. */
const ONE_MEMORY = showFor(RESOURCE, 'getMessages', 'clear');

/** The node's first version: Memory defaults to Conversation, and Node memory is given by ID. */
const FIRST_VERSION = { '@version': [1] };
/** Later versions: Memory defaults to All of This Conversation, and the node is chosen. */
const LATER_VERSIONS = { '@version': [{ _cnd: { gte: 1.1 } }] };

/** What Memory can be: every memory of the conversation, its shared one, or one node's. */
export type MemoryChoice = 'all' | 'conversation' | 'node';

const MEMORY_OPTIONS: Array<{ name: string; value: MemoryChoice; description: string }> = [
	{
		name: 'All of This Conversation',
		value: 'all',
		description:
			'Every memory of the conversation: its shared memory and each node’s own memory (Node mode). Each message names its memory and node. Clear deletes all of them.',
	},
	{
		name: 'Conversation',
		value: 'conversation',
		description:
			'Only the conversation’s shared memory, used by every LLM with Memory node and LLM Memory Store in Conversation mode',
	},
	{
		name: 'Node',
		value: 'node',
		description: 'Only one node’s own memory (Node mode)',
	},
];

function memoryModeProperty(defaultValue: MemoryChoice, versions: object): INodeProperties {
	return {
		displayName: 'Memory',
		name: 'memoryMode',
		type: 'options',
		noDataExpression: true,
		options: MEMORY_OPTIONS,
		default: defaultValue,
		displayOptions: { show: { ...ONE_MEMORY, ...versions } },
	};
}

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
			'importFromChatMemory',
			'reencrypt',
		),
	),
	...sessionIdProperties(ONE_CONVERSATION),
	...sessionIdProperties({ ...showFor(RESOURCE, 'reencrypt'), reencryptScope: ['conversation'] }),
	memoryModeProperty('conversation', FIRST_VERSION),
	memoryModeProperty('all', LATER_VERSIONS),
	{
		displayName: 'Node ID',
		name: 'nodeId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 6f1c2a9e-0d4b-4f7a-9c1e-2b7d5a8e3f10',
		description:
			'The stable ID of the LLM with Memory node (or LLM Memory Store) whose Node-mode memory to use: renaming a node keeps its ID. List Conversations shows the node IDs with memory per conversation; copying the node in the editor shows its "id".',
		displayOptions: { show: { ...ONE_MEMORY, memoryMode: ['node'], ...FIRST_VERSION } },
	},
	memoryNodeProperty({ ...ONE_MEMORY, memoryMode: ['node'], ...LATER_VERSIONS }),
];

/** Which memories an item addresses: all of a conversation's, or one document (with its address). */
export type MemoryTarget = { workflowId: string; conversationId: string } & (
	{ mode: 'all' } | { mode: 'conversation' | 'node'; address: MemoryAddress; nodeName?: string }
);

/** One memory document: the conversation's shared memory, or one node's. */
export type OneMemory = Exclude<MemoryTarget, { mode: 'all' }>;

/** The memories an item addresses: the same keys LLM with Memory and LLM Memory Store use. */
export function targetOf(ctx: IExecuteFunctions, i: number): MemoryTarget {
	const at = { workflowId: workflowIdOf(ctx, i), conversationId: conversationIdOf(ctx, i) };
	const fallback: MemoryChoice = ctx.getNode().typeVersion >= 1.1 ? 'all' : 'conversation';
	const mode = ctx.getNodeParameter('memoryMode', i, fallback) as MemoryChoice;
	if (mode === 'all') return { ...at, mode };
	const address: MemoryAddress = { appId: at.workflowId, conversationId: at.conversationId };
	if (mode !== 'node') return { ...at, mode, address };
	// The node only counts (and is only checked) for a node's memory.
	const node = nodeOf(ctx, i, at.workflowId);
	return { ...at, mode, address: { ...address, nodeId: node.nodeId }, nodeName: node.nodeName };
}

function nodeOf(ctx: IExecuteFunctions, i: number, workflowId: string) {
	if (ctx.getNode().typeVersion >= 1.1) return chosenNode(ctx, i, workflowId);
	const nodeId = requiredIdParameter(ctx, 'nodeId', i, 'Node ID', {
		message: 'Node memory needs a node ID, but none was given',
		help: 'Give the stable ID of the LLM with Memory node whose memory to use (List Conversations shows the node IDs with memory).',
	});
	return { nodeId };
}
