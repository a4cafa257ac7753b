import type { INode } from 'n8n-workflow';

/** This package's nodes that keep chat memory, by the last part of their type. */
const MEMORY_NODE_TYPES = new Set(['llmWithMemory', 'llmMemoryStore']);

/** Whether a node keeps chat memory: an LLM with Memory node or an LLM Memory Store. */
export function keepsMemory(node: Pick<INode, 'type'>): boolean {
	return MEMORY_NODE_TYPES.has(node.type.slice(node.type.lastIndexOf('.') + 1));
}

function isNode(value: unknown): value is INode {
	const n = value as Partial<INode> | null;
	return (
		typeof n === 'object' &&
		n !== null &&
		typeof n.id === 'string' &&
		typeof n.name === 'string' &&
		typeof n.type === 'string'
	);
}

/**
 * The nodes of the workflow that is running. n8n's node interfaces offer no list of them, but the
 * execution context of n8n-core holds the workflow it runs (its public `workflow` field, in n8n 2.8 and
 * 2.40 alike). Where that is missing the list is empty, and callers do without node names.
 */
export function workflowNodes(ctx: object): INode[] {
	const nodes = (ctx as { workflow?: { nodes?: unknown } }).workflow?.nodes;
	if (typeof nodes !== 'object' || nodes === null) return [];
	return Object.values(nodes).filter(isNode);
}
