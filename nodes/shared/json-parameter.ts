import type { IExecuteFunctions } from 'n8n-workflow';

import { nodeError } from './errors';

/**
 * A JSON value from a parameter (type json), a binary file's bytes or text: objects and arrays as n8n
 * passes them (an expression's result), text and bytes parsed. Empty or unparsable is an error naming
 * the field, with the item's index.
 */
export function parseJsonValue(
	ctx: IExecuteFunctions,
	i: number,
	value: unknown,
	label: string,
): unknown {
	const text = Buffer.isBuffer(value) ? value.toString('utf8') : value;
	if (typeof text !== 'string') return text;
	if (text.trim() === '') throw nodeError(ctx, `${label} is empty`, i);
	try {
		return JSON.parse(text) as unknown;
	} catch (error) {
		throw nodeError(ctx, `${label} is not valid JSON: ${(error as Error).message}`, i);
	}
}

/** An optional JSON parameter: undefined when it is not set or empty, else as parseJsonValue. */
export function optionalJsonParameter(
	ctx: IExecuteFunctions,
	name: string,
	i: number,
	label: string,
): unknown {
	const value: unknown = ctx.getNodeParameter(name, i, '');
	if (value === undefined || (typeof value === 'string' && value.trim() === '')) return undefined;
	return parseJsonValue(ctx, i, value, label);
}
