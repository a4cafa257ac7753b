import type {
	IExecuteFunctions,
	INodeParameterResourceLocator,
	INodeProperties,
} from 'n8n-workflow';

import type { Show } from '../../../shared/display';
import { nodeError } from '../../../shared/errors';
import { idValue } from '../../../shared/ids';
import { keepsMemory, workflowNodes } from '../../../shared/workflow-nodes';

/**
 * Node: the node whose own memory (Node mode) to use. By Name looks it up in this workflow when the
 * item runs; From List offers the nodes with memory stored for the Workflow ID; By ID takes any
 * node's ID (an expression, or another workflow's node).
 */
export function memoryNodeProperty(show: Show): INodeProperties {
	return {
		displayName: 'Node',
		name: 'memoryNode',
		type: 'resourceLocator',
		default: { mode: 'name', value: '' },
		required: true,
		description:
			'The LLM with Memory node or LLM Memory Store whose own memory (Node mode) to use. Renaming a node keeps its memory: it is kept by the node’s ID.',
		modes: [
			{
				displayName: 'By Name',
				name: 'name',
				type: 'string',
				placeholder: 'e.g. LLM with Memory',
				hint: 'The name of an LLM with Memory node or LLM Memory Store in this workflow',
			},
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				// The S3 credential is only needed on S3: the editor must not wait for one on local disk.
				typeOptions: {
					searchListMethod: 'memoryNodes',
					searchable: true,
					skipCredentialsCheckInRLC: true,
				},
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: 'e.g. 6f1c2a9e-0d4b-4f7a-9c1e-2b7d5a8e3f10',
				hint: 'A node’s ID, e.g. of another workflow’s node (List Conversations shows the IDs with memory)',
			},
		],
		displayOptions: { show },
	};
}

/** A node that keeps memory: its ID, and its name when this workflow has it. */
export interface ChosenNode {
	nodeId: string;
	nodeName?: string;
}

/** The names of this workflow's nodes by ID, when the memory is this workflow's (else none). */
export function nodeNamesOf(ctx: IExecuteFunctions, workflowId: string): Map<string, string> {
	if (ctx.getWorkflow().id !== workflowId) return new Map();
	return new Map(workflowNodes(ctx).map((n) => [n.id, n.name]));
}

const NO_NODE = {
	message: 'Node memory needs a node, but none was given',
	help: 'Choose the LLM with Memory node (or LLM Memory Store) whose memory to use: by its name in this workflow, from the list, or by its ID.',
};

/** The node an item's Node field names; a name is looked up among this workflow's nodes. */
export function chosenNode(ctx: IExecuteFunctions, i: number, workflowId: string): ChosenNode {
	const locator = ctx.getNodeParameter(
		'memoryNode',
		i,
		{},
	) as Partial<INodeParameterResourceLocator>;
	const label = locator.mode === 'name' ? 'Node name' : 'Node ID';
	const value = idValue(ctx, locator.value, i, label);
	if (value === undefined) throw nodeError(ctx, NO_NODE.message, i, NO_NODE.help);
	if (locator.mode !== 'name') return { nodeId: value, ...nameOf(ctx, workflowId, value) };
	if (ctx.getWorkflow().id !== workflowId)
		throw nodeError(
			ctx,
			`A node is found by name in this workflow only, but Workflow ID names workflow "${workflowId}"`,
			i,
			'Choose the other workflow’s node by ID (From List shows the nodes with memory stored for the Workflow ID).',
		);
	return { ...nodeNamed(ctx, i, value), nodeName: value };
}

function nameOf(ctx: IExecuteFunctions, workflowId: string, nodeId: string): { nodeName?: string } {
	const name = nodeNamesOf(ctx, workflowId).get(nodeId);
	return name !== undefined ? { nodeName: name } : {};
}

function nodeNamed(ctx: IExecuteFunctions, i: number, name: string): { nodeId: string } {
	const nodes = workflowNodes(ctx);
	if (nodes.length === 0)
		throw nodeError(
			ctx,
			'This n8n does not let the node look up other nodes by name',
			i,
			'Choose the node by ID, or from the list.',
		);
	const node = nodes.find((n) => n.name === name);
	if (!node)
		throw nodeError(
			ctx,
			`This workflow has no node named "${name}"`,
			i,
			`Give the name of an LLM with Memory node or LLM Memory Store of this workflow. Its nodes that keep memory: ${memoryNodeNames(nodes)}.`,
		);
	if (!keepsMemory(node))
		throw nodeError(
			ctx,
			`Node "${name}" keeps no chat memory`,
			i,
			`Only LLM with Memory nodes and LLM Memory Stores keep memory. This workflow has: ${memoryNodeNames(nodes)}.`,
		);
	return { nodeId: node.id };
}

function memoryNodeNames(nodes: Array<{ name: string; type: string }>): string {
	const names = nodes.filter(keepsMemory).map((n) => `"${n.name}"`);
	return names.length > 0 ? names.join(', ') : 'none';
}
