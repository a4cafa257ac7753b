import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { nodeError } from '../../shared/errors';
import { idParameter } from '../../shared/ids';
import type { Show } from './types';

/** Workflow ID: memory is kept per workflow (the engine's app ID); this workflow unless told otherwise. */
export function workflowIdProperty(show: Show): INodeProperties {
	return {
		displayName: 'Workflow ID',
		name: 'workflowId',
		type: 'string',
		default: '={{ $workflow.id }}',
		description:
			'Memory is kept per workflow: the ID of the workflow whose memory to manage. By default this workflow; give another workflow’s ID to manage its memory.',
		displayOptions: { show },
	};
}

export function workflowIdOf(ctx: IExecuteFunctions, i: number): string {
	const id = idParameter(ctx, 'workflowId', i, 'Workflow ID');
	if (id === undefined)
		throw nodeError(
			ctx,
			'No workflow ID',
			i,
			'Save the workflow first (memory is kept per workflow ID), or set "Workflow ID" to the ID of the workflow whose memory to manage.',
		);
	return id;
}

/** The item's conversation ID (n8n passes objects and arrays through: refused by name). */
export function conversationIdOf(ctx: IExecuteFunctions, i: number): string {
	const id = idParameter(ctx, 'conversationId', i, 'Conversation ID');
	if (id === undefined)
		throw nodeError(
			ctx,
			'No conversation ID found',
			i,
			'Expected a \'sessionId\' field from a Chat Trigger, or set "Conversation ID" to "Define Below" and give the conversation\'s ID.',
		);
	return id;
}

/** A whole-number parameter ≥ min; anything else (text, fractions, NaN) is an error naming the field. */
export function numberParameter(
	ctx: IExecuteFunctions,
	name: string,
	i: number,
	label: string,
	min: number,
	fallback: number,
): number {
	const value: unknown = ctx.getNodeParameter(name, i, fallback);
	if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
		throw nodeError(
			ctx,
			`${label} must be a whole number ≥ ${min}, got ${JSON.stringify(value)}`,
			i,
		);
	return value;
}

/** Options: n8n's collection of an operation's rarely used settings. */
export function optionsProperty(show: Show, options: INodeProperties[]): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show },
		options,
	};
}

/** Return All, Limit: n8n's idiom for lists. The offset lives in the operation's options. */
export function pageProperties(show: Show, what: string): INodeProperties[] {
	return [
		{
			displayName: 'Return All',
			name: 'returnAll',
			type: 'boolean',
			default: false,
			description: 'Whether to return all results or only up to a given limit',
			displayOptions: { show },
		},
		{
			displayName: 'Limit',
			name: 'limit',
			type: 'number',
			default: 50,
			typeOptions: { minValue: 1 },
			description: `Max number of ${what} to return`,
			displayOptions: { show: { ...show, returnAll: [false] } },
		},
	];
}

export const offsetOption: INodeProperties = {
	displayName: 'Offset',
	name: 'offset',
	type: 'number',
	default: 0,
	typeOptions: { minValue: 0 },
	description:
		'How many results to skip, for paging: the next page starts at offset + limit (with Group Messages, the output’s nextOffset; null after the last page)',
};

/** The page an item asks for: Return All or Limit, and Options → Offset. */
export function pageOf(ctx: IExecuteFunctions, i: number): { offset: number; limit?: number } {
	const offset = numberParameter(ctx, 'options.offset', i, 'Offset', 0, 0);
	if (ctx.getNodeParameter('returnAll', i, false) === true) return { offset };
	return { offset, limit: numberParameter(ctx, 'limit', i, 'Limit', 1, 50) };
}
