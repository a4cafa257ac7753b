import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { MemoryBase } from '../../../src';
import type { Embedder, ExternalVectorStore } from '../../../src';
import { idParameter, idValue, requiredIdParameter } from '../../shared/ids';
import { conversationIdOf, numberParameter } from '../../shared/parameters';
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
	const trigger = ctx.getChatTrigger?.();
	if (!trigger) return undefined;
	const name = trigger.name.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
	const value = ctx.evaluateExpression(`{{ $('${name}').first().json.sessionId }}`, i);
	return idValue(ctx, value, i, 'Conversation ID');
}

/** The item's conversation (session) ID; undefined when the operation covers all conversations. */
export function sessionOf(
	ctx: IExecuteFunctions,
	i: number,
	required: boolean,
): string | undefined {
	if (!required && ctx.getNodeParameter('sessionScope', i, 'all') === 'all') return undefined;
	const id = idParameter(ctx, 'conversationId', i, 'Conversation ID') ?? chatTriggerSession(ctx, i);
	// Without one, the shared check raises n8n's familiar "No conversation ID found".
	return id ?? conversationIdOf(ctx, i);
}

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

/** An operation's execute that opens the item's memory base, then gives `run`'s result as its one item. */
export function onItemBase(
	run: (base: MemoryBase, ctx: IExecuteFunctions, i: number) => Promise<IDataObject>,
): (ctx: IExecuteFunctions, i: number, connections: Connections) => Promise<INodeExecutionData[]> {
	return async (ctx, i, connections) => [
		{ json: await run(await memoryBaseFor(ctx, i, connections), ctx, i) },
	];
}
