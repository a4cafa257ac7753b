import type { IExecuteFunctions, ISupplyDataFunctions } from 'n8n-workflow';

import { ID_RULES, nodeError } from './errors';

type Ctx = IExecuteFunctions | ISupplyDataFunctions;

/**
 * An ID parameter as a string, or undefined when it is empty. n8n hands expression results through
 * unvalidated, and String() would turn every object into "[object Object]" (two users' chats in one
 * memory) and arrays into "x,y". So only strings and finite numbers (as their decimal string) pass;
 * anything else is an error naming the field, before any model call.
 */
export function idParameter(
	ctx: Ctx,
	name: string,
	itemIndex: number,
	label: string,
): string | undefined {
	return idValue(ctx, ctx.getNodeParameter(name, itemIndex, ''), itemIndex, label);
}

/** An ID parameter the item cannot do without: as idParameter, and when it is empty `missing`, with `help`. */
export function requiredIdParameter(
	ctx: Ctx,
	name: string,
	itemIndex: number,
	label: string,
	missing: { message: string; help: string },
): string {
	const id = idParameter(ctx, name, itemIndex, label);
	if (id === undefined) throw nodeError(ctx, missing.message, itemIndex, missing.help);
	return id;
}

/** The same check for an ID a node finds elsewhere (for example the Chat Trigger's sessionId). */
export function idValue(
	ctx: Ctx,
	value: unknown,
	itemIndex: number,
	label: string,
): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	if (typeof value === 'string') return value;
	if (typeof value === 'number' && Number.isFinite(value)) return String(value);
	const got = Array.isArray(value)
		? 'an array'
		: typeof value === 'object'
			? 'an object'
			: `a ${typeof value} (${String(value)})`;
	throw nodeError(ctx, `${label} must be a string or a number, got ${got}`, itemIndex, ID_RULES);
}
