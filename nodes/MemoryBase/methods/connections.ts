import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

import { isEmbedder } from '../../../src/knowledge/types';
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

// The Vector Store input's store: the Memory Base's, and the LLM Memory Manager's Forget User's.
export { connectedVectorStore } from '../../shared/connections';
