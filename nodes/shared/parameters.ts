import type { IExecuteFunctions, ISupplyDataFunctions } from 'n8n-workflow';

import { nodeError } from './errors';
import { requiredIdParameter } from './ids';

/** The item's conversation ID (n8n passes objects and arrays through: refused by name). */
export function conversationIdOf(ctx: IExecuteFunctions, i: number): string {
	return requiredIdParameter(ctx, 'conversationId', i, 'Conversation ID', {
		message: 'No conversation ID found',
		help: 'Expected a \'sessionId\' field from a Chat Trigger, or set "Conversation ID" to "Define Below" and give the conversation\'s ID.',
	});
}

/**
 * A whole-number parameter ≥ min (with `fractions`, any finite number ≥ min); anything else (text,
 * fractions, NaN) is an error naming the field.
 */
export function numberParameter(
	ctx: IExecuteFunctions | ISupplyDataFunctions,
	name: string,
	i: number,
	label: string,
	min: number,
	fallback: number,
	{ fractions = false } = {},
): number {
	const value: unknown = ctx.getNodeParameter(name, i, fallback);
	const allowed = fractions ? Number.isFinite : Number.isSafeInteger;
	if (typeof value !== 'number' || !allowed(value) || value < min)
		throw nodeError(
			ctx,
			`${label} must be a ${fractions ? 'number' : 'whole number'} ≥ ${min}, got ${JSON.stringify(value)}`,
			i,
		);
	return value;
}
