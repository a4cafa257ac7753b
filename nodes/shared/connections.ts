import { NodeConnectionTypes } from 'n8n-workflow';
import type { AINodeConnectionType, IExecuteFunctions, ISupplyDataFunctions } from 'n8n-workflow';

import { isExternalVectorStore } from '../../src/indexes/vector/external-store';
import type { ExternalVectorStore } from '../../src/indexes/vector/external-store';
import { nodeError } from './errors';

/** The sub-node connected to an AI input (n8n hands a single connection over alone or in an array). */
export async function connectedSubNode(
	ctx: IExecuteFunctions,
	type: AINodeConnectionType,
): Promise<unknown> {
	const connected: unknown = await ctx.getInputConnectionData(type, 0);
	return Array.isArray(connected) ? connected[0] : connected;
}

/**
 * The sub-node on an optional AI input, or undefined when none is connected (n8n throws then) or it is
 * not what `accepts` checks for.
 */
export async function optionalSubNode<T>(
	ctx: IExecuteFunctions | ISupplyDataFunctions,
	type: AINodeConnectionType,
	i: number,
	accepts: (value: unknown) => value is T,
): Promise<T | undefined> {
	let connected: unknown;
	try {
		connected = await ctx.getInputConnectionData(type, i);
	} catch {
		return undefined; // nothing connected to an optional input
	}
	const node = Array.isArray(connected) ? connected[0] : connected;
	return accepts(node) ? node : undefined;
}

/**
 * The connected vector store sub-node's store, or undefined when none is connected (the embedded index
 * is used then). n8n's vector store nodes hand it over behind a log proxy, or inside { vectorStore }
 * with a reranker.
 */
export async function connectedVectorStore(
	ctx: IExecuteFunctions,
): Promise<ExternalVectorStore | undefined> {
	let store = await connectedSubNode(ctx, NodeConnectionTypes.AiVectorStore);
	if (store === undefined || store === null) return undefined;
	if (
		!isExternalVectorStore(store) &&
		isExternalVectorStore((store as { vectorStore?: unknown }).vectorStore)
	)
		store = (store as { vectorStore: unknown }).vectorStore;
	if (!isExternalVectorStore(store))
		throw nodeError(
			ctx,
			'The connected vector store cannot be used: it has no addVectors and similaritySearchVectorWithScore',
			undefined,
			'Connect one of n8n’s vector store nodes in "Retrieve Documents (As Vector Store for Chain/Tool)" mode, or disconnect it to use the embedded index.',
		);
	return store;
}
