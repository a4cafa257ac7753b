import type {
	IDisplayOptions,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import { MAX_TOP_K } from '../../../src';
import { showForOperations } from '../../shared/display';
import { nodeError } from '../../shared/errors';
import { numberParameter } from '../../shared/parameters';
import { memoryBaseFor, sessionOf } from '../methods/base';
import type { Connections } from '../methods/base';
import { sessionScopeProperty } from './fields';
import type { MemoryBaseOperation } from './types';

/** Query and Top K (the tool node uses them too, with the query from the model). */
export function searchProperties(
	queryDefault: string,
	showFor?: IDisplayOptions['show'],
): INodeProperties[] {
	const displayOptions = showFor ? { displayOptions: { show: showFor } } : {};
	return [
		{
			displayName: 'Query',
			name: 'query',
			type: 'string',
			default: queryDefault,
			required: true,
			typeOptions: { rows: 2 },
			description: 'What to look for in long-term memory',
			...displayOptions,
		},
		{
			displayName: 'Top K',
			name: 'topK',
			type: 'number',
			default: 4,
			typeOptions: { minValue: 1, maxValue: MAX_TOP_K },
			description: 'How many matching captured outputs to return, best first',
			...displayOptions,
		},
	];
}

export const search: MemoryBaseOperation = {
	option: {
		name: 'Search',
		value: 'search',
		description:
			'Find the captured outputs most similar to a query (one output item per match, with score, conversation, run and time)',
		action: 'Search long-term memory',
	},
	needsEmbedder: true,
	properties: [
		...searchProperties('={{ $json.chatInput }}', showForOperations('search')),
		sessionScopeProperty('session', ['search']),
	],

	/** The matches of one item's search, one output item each: text, score, conversation, run and time. */
	async execute(
		ctx: IExecuteFunctions,
		i: number,
		connections: Connections,
	): Promise<INodeExecutionData[]> {
		const query = ctx.getNodeParameter('query', i, '');
		if (typeof query !== 'string' || query.trim() === '')
			throw nodeError(ctx, 'The query is empty', i, 'Give the text to look for in "Query".');
		const base = await memoryBaseFor(ctx, i, connections);
		const matches = await base.search(query, {
			k: numberParameter(ctx, 'topK', i, 'Top K', 1, 4),
			sessionId: sessionOf(ctx, i, false),
		});
		return matches.map((m) => ({ json: { ...m } }));
	},
};
