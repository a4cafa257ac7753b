import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { nodeError } from '../../shared/errors';
import { runOperation } from '../../shared/operation';
import { findOperation } from '../operations';
import type { Connections } from './base';
import { optionalEmbedder } from '../../shared/long-term/long-term';
import { connectedEmbedder, connectedVectorStore } from './connections';

/** Fetches the sub-nodes the operation needs (once per execution), then runs it over the items. */
export async function executeMemoryBase(ctx: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const value = ctx.getNodeParameter('operation', 0);
	const op = findOperation(value);
	if (!op) throw nodeError(ctx, `The operation "${String(value)}" is not known`);
	// Sync needs the model (it writes vectors); everything else uses it when it is connected.
	const connections: Connections = {
		embedder: op.needsEmbedder ? await connectedEmbedder(ctx) : await optionalEmbedder(ctx),
		vectorStore: await connectedVectorStore(ctx),
	};
	return [await runOperation(ctx, op, connections)];
}
