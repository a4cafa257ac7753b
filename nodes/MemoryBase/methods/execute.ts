import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { nodeError } from '../../shared/errors';
import { runOperation } from '../../shared/operation';
import { findOperation } from '../operations';
import type { Connections } from './base';
import { connectedEmbedder, connectedVectorStore } from './connections';

/** Fetches the sub-nodes the operation needs (once per execution), then runs it over the items. */
export async function executeMemoryBase(ctx: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const value = ctx.getNodeParameter('operation', 0);
	const op = findOperation(value);
	if (!op) throw nodeError(ctx, `The operation "${String(value)}" is not known`);
	const wantsEmbedder =
		op.needsEmbedder === true ||
		(op.needsEmbedder === 'capture' &&
			ctx.getInputData().some((_, i) => ctx.getNodeParameter('autoCapture', i, true) === true));
	const connections: Connections = {
		embedder: wantsEmbedder ? await connectedEmbedder(ctx) : undefined,
		vectorStore: await connectedVectorStore(ctx),
	};
	return [await runOperation(ctx, op, connections)];
}
