import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { Show } from './display';
import { numberParameter } from './parameters';

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
