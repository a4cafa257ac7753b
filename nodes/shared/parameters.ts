import type { IExecuteFunctions, ISupplyDataFunctions } from 'n8n-workflow';

import { nodeError } from './errors';
import { requiredIdParameter } from './ids';

/** What to do about a missing session ID, for the source the node's Session ID field names. */
export function missingSessionIdHelp(ctx: IExecuteFunctions | ISupplyDataFunctions, i: number) {
	const source = ctx.getNodeParameter('conversationIdType', i, 'fromInput');
	return source === 'customKey'
		? 'The "Session ID" field is empty for this item: give it a value or an expression that yields one, such as {{ $json.userId }} (a string or a number).'
		: 'Expected a \'sessionId\' field from a directly connected Chat Trigger. Connect one, or set "Session ID" to "Define Below" and give an expression such as {{ $json.userId }}.';
}

/** The item's session ID (n8n passes objects and arrays through: refused by name). */
export function conversationIdOf(ctx: IExecuteFunctions, i: number): string {
	return requiredIdParameter(ctx, 'conversationId', i, 'Session ID', {
		message: 'No session ID found',
		help: missingSessionIdHelp(ctx, i),
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
