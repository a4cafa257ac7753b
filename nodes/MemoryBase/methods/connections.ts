import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

import { isExternalVectorStore } from '../../../src/indexes/vector/external-store';
import { isEmbedder } from '../../../src/knowledge/types';
import type { ExternalVectorStore } from '../../../src/indexes/vector/external-store';
import type { Embedder } from '../../../src/knowledge/types';
import { connectedSubNode } from '../../shared/connections';
import { nodeError } from '../../shared/errors';

/** The connected embedding sub-node's model (n8n hands over LangChain Embeddings behind its log proxy). */
export async function connectedEmbedder(ctx: IExecuteFunctions): Promise<Embedder> {
	const embedder = await connectedSubNode(ctx, NodeConnectionTypes.AiEmbedding);
	if (!isEmbedder(embedder))
		throw nodeError(
			ctx,
			'Please connect an embedding model to the Embedding input',
			undefined,
			'Any of n8n’s embedding nodes works (for example Embeddings OpenAI): it turns captured outputs and search queries into vectors.',
		);
	return embedder;
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
