import type { IExecuteFunctions, ISupplyDataFunctions } from 'n8n-workflow';

import { ConversationMemory, NodeMemory } from '../../src/history/scopes';
import type { MemoryAddress } from '../../src/admin/conversation-memory';
import type { BufferMemory } from '../../src/history/buffer-memory';
import type { MemoryOptions } from '../../src/history/memory-types';
import { nodeError } from './errors';
import { storageFor } from './storage';

type Ctx = IExecuteFunctions | ISupplyDataFunctions;

/** The two memory scopes: one history per conversation, or one node's own history per conversation. */
export type ScopeMode = 'conversation' | 'node';

/** Which memory document: the conversation's shared one, or one node's own (Node mode). */
export type MemoryScope = { workflowId: string; conversationId: string } & (
	{ mode: 'conversation' } | { mode: 'node'; nodeId: string }
);

/** The scope's document as the engine addresses it (no node ID: the conversation's memory). */
export function memoryAddress(scope: MemoryScope): MemoryAddress {
	const { workflowId: appId, conversationId } = scope;
	return scope.mode === 'node'
		? { appId, conversationId, nodeId: scope.nodeId }
		: { appId, conversationId };
}

/** The scope's memory, opened with `options`. */
export function scopedMemory(scope: MemoryScope, options: MemoryOptions): BufferMemory {
	const { appId, conversationId, nodeId } = memoryAddress(scope);
	return nodeId === undefined
		? new ConversationMemory(appId, conversationId, options)
		: new NodeMemory(appId, conversationId, nodeId, options);
}

/** This workflow's ID: memory is kept per workflow, so an unsaved workflow (no ID) has none. */
export function savedWorkflowId(ctx: Ctx, itemIndex: number): string {
	const workflowId = ctx.getWorkflow().id;
	if (!workflowId)
		throw nodeError(ctx, 'Save the workflow first: memory is kept per workflow ID', itemIndex);
	return workflowId;
}

/**
 * The memory this node keeps for a conversation in `mode` (Node mode: its own, by its node ID), on the
 * storage the item names; the engine's warnings go to n8n's log.
 */
export async function openNodeMemory(
	ctx: Ctx,
	itemIndex: number,
	mode: ScopeMode,
	at: { workflowId: string; conversationId: string },
	options: Pick<
		MemoryOptions,
		'gzip' | 'model' | 'files' | 'expireAfterDays' | 'toolResults' | 'maxToolOutputChars'
	>,
): Promise<BufferMemory> {
	const scope: MemoryScope = { ...at, mode, nodeId: ctx.getNode().id };
	return scopedMemory(scope, {
		storage: await storageFor(ctx, itemIndex),
		...options,
		onWarning: (m: string) => ctx.logger.warn(m),
	});
}
