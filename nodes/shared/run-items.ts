import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { asNodeError } from './errors';

/**
 * An item's failure, n8n's way: the error (mapped once, with the item's index) is thrown, or with
 * continueOnFail becomes the one output item in the item's place, paired with it. That item holds
 * `fields` (Capture passes the input's), then the error's `partialResult` (what the item got done
 * before it failed, such as an answer that could not be saved), then the message.
 */
export function failedItem(
	ctx: IExecuteFunctions,
	error: unknown,
	itemIndex: number,
	fields: IDataObject = {},
): INodeExecutionData {
	const failure = asNodeError(ctx, error, itemIndex);
	if (!ctx.continueOnFail()) throw failure;
	const partial = (error as { partialResult?: IDataObject } | undefined)?.partialResult;
	return {
		json: { ...fields, ...partial, error: failure.message },
		pairedItem: { item: itemIndex },
	};
}

/**
 * Runs `run` for every input item, one after the other: each item it returns is paired with the
 * input item; a failure is handled by failedItem.
 */
export async function runItems(
	ctx: IExecuteFunctions,
	run: (itemIndex: number) => Promise<INodeExecutionData[]>,
): Promise<INodeExecutionData[]> {
	const out: INodeExecutionData[] = [];
	const count = ctx.getInputData().length;
	for (let i = 0; i < count; i++) {
		try {
			for (const item of await run(i)) out.push({ ...item, pairedItem: { item: i } });
		} catch (error) {
			out.push(failedItem(ctx, error, i));
		}
	}
	return out;
}
