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

/** What n8n hands over on an input of `type`, or undefined when nothing is connected (n8n throws then). */
async function connectedData(
	ctx: IExecuteFunctions | ISupplyDataFunctions,
	type: AINodeConnectionType,
	i: number,
): Promise<unknown> {
	try {
		return await ctx.getInputConnectionData(type, i);
	} catch {
		return undefined;
	}
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
	const connected = await connectedData(ctx, type, i);
	const node = Array.isArray(connected) ? connected[0] : connected;
	return accepts(node) ? node : undefined;
}

/** What n8n's execution contexts have, beyond their declared interface, to tell inputs apart. */
interface Wiring {
	getNode(): { name: string };
	getConnections?(node: unknown, type: string): Array<Array<{ node: string }> | null> | undefined;
	getConnectedNodes?(type: string): Array<{ name: string }>;
}

/**
 * The sub-node on the `index`-th input of `type` (a node's inputs of one type are numbered in the order
 * it lists them), or undefined when none is connected there or it is not what `accepts` checks for.
 * n8n hands every sub-node of the type over at once, in the order of its connected nodes; the node
 * connected to that input is picked by name (one node on both inputs is handed over once).
 */
export async function subNodeOnInput<T>(
	ctx: IExecuteFunctions | ISupplyDataFunctions,
	type: AINodeConnectionType,
	i: number,
	index: number,
	accepts: (value: unknown) => value is T,
): Promise<T | undefined> {
	const connected = await connectedData(ctx, type, i);
	if (connected === undefined) return undefined;
	const list: unknown[] = Array.isArray(connected) ? connected : [connected];
	const node = pickInput(ctx as unknown as Wiring, type, index, list);
	return accepts(node) ? node : undefined;
}

/** Which of the handed-over sub-nodes is on input `index` (by name; by position without the wiring). */
function pickInput(wiring: Wiring, type: string, index: number, list: unknown[]): unknown {
	if (!wiring.getConnections || !wiring.getConnectedNodes)
		return list.length === 1 ? list[0] : list[index];
	const wanted = wiring.getConnections(wiring.getNode(), type)?.[index]?.[0]?.node;
	const names = wiring.getConnectedNodes(type).map((n) => n.name);
	if (wanted === undefined || names.length !== list.length) return undefined;
	return list[names.indexOf(wanted)];
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
