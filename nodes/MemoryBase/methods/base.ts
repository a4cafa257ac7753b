import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { MemoryBase } from '../../../src/knowledge/memory-base';
import type { ExternalVectorStore } from '../../../src/indexes/vector/external-store';
import type { Embedder } from '../../../src/knowledge/types';
import { chatTriggerField } from '../../shared/chat-trigger';
import { nodeError } from '../../shared/errors';
import { idParameter, idValue, requiredIdParameter } from '../../shared/ids';
import { conversationIdOf, numberParameter } from '../../shared/parameters';
import { unknownBase } from '../../shared/memory-bases';
import { storageFor } from '../../shared/storage';

/** What every item's memory base is built from: connected sub-nodes, fetched once per execution. */
export interface Connections {
	embedder?: Embedder;
	vectorStore?: ExternalVectorStore;
}

/** The item's memory base ID (by default the workflow's ID: Flow = workflow). */
export function baseIdOf(ctx: IExecuteFunctions, i: number): string {
	return requiredIdParameter(ctx, 'baseId', i, 'Memory Base ID', {
		message: 'No memory base ID',
		help: 'Save the workflow first (a memory base is kept per workflow ID by default), or set "Memory Base ID".',
	});
}

/**
 * "Connected Chat Trigger Node" behind other nodes (an AI Agent's output has no sessionId): the
 * session of the workflow's Chat Trigger, as n8n's own memory nodes find it.
 */
function chatTriggerSession(ctx: IExecuteFunctions, i: number): string | undefined {
	if (ctx.getNodeParameter('conversationIdType', i, 'fromInput') !== 'fromInput') return undefined;
	return idValue(ctx, chatTriggerField(ctx, i, 'sessionId'), i, 'Session ID');
}

/** The item's conversation (session) ID; undefined when the operation covers all conversations. */
export function sessionOf(
	ctx: IExecuteFunctions,
	i: number,
	required: boolean,
): string | undefined {
	if (!required && ctx.getNodeParameter('sessionScope', i, 'all') === 'all') return undefined;
	const id = idParameter(ctx, 'conversationId', i, 'Session ID') ?? chatTriggerSession(ctx, i);
	// Without one, the shared check raises n8n's familiar "No session ID found".
	return id ?? conversationIdOf(ctx, i);
}

/** What an item's search or listing reads: one conversation, one user, or every user on purpose. */
export function scopeOf(
	ctx: IExecuteFunctions,
	i: number,
): { sessionId?: string; userId?: string; allUsers?: true } {
	const scope = ctx.getNodeParameter('sessionScope', i, 'all');
	if (scope === 'user')
		return { userId: requiredIdParameter(ctx, 'userId', i, 'User ID', NO_USER) };
	if (scope === 'session') return { sessionId: sessionOf(ctx, i, true) };
	// The user chose every conversation of the base, every user's: the engine asks for it by name.
	return { allUsers: true };
}

const NO_USER = {
	message: 'No user ID',
	help: 'Set "User ID" to the user whose memories to read (for example {{ $json.metadata.userId }}), or choose another scope in "Conversations".',
};

/** The memory base an item names, on the storage it names, with the execution's sub-nodes. */
export async function memoryBaseFor(
	ctx: IExecuteFunctions,
	i: number,
	connections: Connections,
): Promise<MemoryBase> {
	const seconds = numberParameter(
		ctx,
		'options.leaseSeconds',
		i,
		'Lock Duration (Seconds)',
		1,
		120,
	);
	return new MemoryBase({
		storage: await storageFor(ctx, i),
		baseId: baseIdOf(ctx, i),
		embedder: connections.embedder,
		vectorStore: connections.vectorStore,
		chunkSize: numberParameter(ctx, 'options.chunkSize', i, 'Chunk Size', 1, 1000),
		chunkOverlap: numberParameter(ctx, 'options.chunkOverlap', i, 'Chunk Overlap', 0, 100),
		embeddingBatchSize: numberParameter(
			ctx,
			'options.embeddingBatchSize',
			i,
			'Embedding Batch Size',
			1,
			64,
		),
		leaseMs: seconds * 1000,
	});
}

/**
 * The item's memory base, which must exist: a mistyped Memory Base ID is an error naming the bases this
 * storage holds, never an empty answer. (A base exists once something was captured into it or its
 * settings were saved; one emptied since keeps existing.)
 */
export async function existingBaseFor(
	ctx: IExecuteFunctions,
	i: number,
	connections: Connections,
): Promise<MemoryBase> {
	const base = await memoryBaseFor(ctx, i, connections);
	const unknown = await unknownBase(base);
	if (!unknown) return base;
	throw nodeError(ctx, unknown.message, i, unknown.help);
}

/** An operation's execute that opens the item's memory base, then gives `run`'s result as its one item. */
export function onItemBase(
	run: (base: MemoryBase, ctx: IExecuteFunctions, i: number) => Promise<IDataObject>,
): (ctx: IExecuteFunctions, i: number, connections: Connections) => Promise<INodeExecutionData[]> {
	return async (ctx, i, connections) => [
		{ json: await run(await memoryBaseFor(ctx, i, connections), ctx, i) },
	];
}

/** The same, for an operation that reads a base that must exist (see existingBaseFor). */
export function onExistingBase(
	run: (base: MemoryBase, ctx: IExecuteFunctions, i: number) => Promise<IDataObject>,
): (ctx: IExecuteFunctions, i: number, connections: Connections) => Promise<INodeExecutionData[]> {
	return async (ctx, i, connections) => [
		{ json: await run(await existingBaseFor(ctx, i, connections), ctx, i) },
	];
}
