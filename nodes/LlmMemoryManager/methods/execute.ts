import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { asNodeError, nodeError } from '../../shared/errors';
import { findOperation } from '../resources';

/**
 * Every input item runs its resource's operation. Each output item is paired with its input item; a
 * failure is an error with the item's index, or with continueOnFail one item holding the error.
 */
export async function executeOperations(ctx: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = ctx.getInputData();
	const out: INodeExecutionData[] = [];
	for (let i = 0; i < items.length; i++) {
		try {
			const resource = ctx.getNodeParameter('resource', i);
			const operation = ctx.getNodeParameter('operation', i);
			const op = findOperation(resource, operation);
			if (!op)
				throw nodeError(
					ctx,
					`The operation "${String(operation)}" is not known for resource "${String(resource)}"`,
					i,
				);
			for (const item of await op.execute(ctx, i)) out.push({ ...item, pairedItem: { item: i } });
		} catch (error) {
			const failure = asNodeError(ctx, error, i);
			if (!ctx.continueOnFail()) throw failure;
			out.push({ json: { error: failure.message }, pairedItem: { item: i } });
		}
	}
	return [out];
}
