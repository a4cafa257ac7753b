import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { memoryBaseError } from '../methods/errors';

/**
 * Runs `run` for every input item: its results become output items paired with it; a failure is an
 * error with the item's index, or with continueOnFail one item holding the error.
 */
export async function perItem(
	ctx: IExecuteFunctions,
	run: (i: number) => Promise<IDataObject[]>,
): Promise<INodeExecutionData[]> {
	const out: INodeExecutionData[] = [];
	const items = ctx.getInputData();
	for (let i = 0; i < items.length; i++) {
		try {
			for (const json of await run(i)) out.push({ json, pairedItem: { item: i } });
		} catch (error) {
			const failure = memoryBaseError(ctx, error, i);
			if (!ctx.continueOnFail()) throw failure;
			out.push({ json: { error: failure.message }, pairedItem: { item: i } });
		}
	}
	return out;
}
