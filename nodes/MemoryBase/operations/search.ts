import type {
	IDisplayOptions,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import { MAX_TOP_K } from '../../../src/indexes/vector/vector-segment';
import type { MemoryBase } from '../../../src/knowledge/memory-base';
import type { SearchMode } from '../../../src/knowledge/types';
import { showForOperations } from '../../shared/display';
import { nodeError } from '../../shared/errors';
import { minSimilarityOf } from '../../shared/long-term/long-term';
import { minSimilarityProperty } from '../../shared/long-term/properties';
import { numberParameter } from '../../shared/parameters';
import { existingBaseFor, scopeOf } from '../methods/base';
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
			description: 'How many matching captured messages to return, best first',
			...displayOptions,
		},
		{
			displayName: 'Search Mode',
			name: 'searchMode',
			type: 'options',
			options: [
				{
					name: 'Hybrid',
					value: 'hybrid',
					description:
						'Word matching and semantic similarity, fused (lexical only when no embedding model is connected)',
				},
				{
					name: 'Lexical',
					value: 'lexical',
					description: 'Word matching (BM25), any language; needs no embedding model',
				},
				{
					name: 'Vector',
					value: 'vector',
					description: 'Semantic similarity of embeddings only; needs an embedding model',
				},
			],
			default: 'hybrid',
			...displayOptions,
		},
		minSimilarityProperty(
			'Only return matches at least this similar to the query: the cosine similarity of their embeddings (−1 … 1; each match carries its own as "similarity"). Needs an embedding model; a word match a connected vector store did not return has no similarity and is left out. 0: no minimum.',
			displayOptions,
		),
		{
			displayName: 'Recency Half-Life (Days)',
			name: 'halfLifeDays',
			type: 'number',
			default: 0,
			typeOptions: { minValue: 0 },
			description:
				'Newer statements weigh more: the recency bonus (up to 0.3) halves every this many days, so a statement this old counts 0.85 of a new one of the same relevance and a very old one 0.7; and of two close matches naming the same thing, the newer comes first. 0: no recency.',
			...displayOptions,
		},
	];
}

/** One item's search: its query, Top K, mode, half-life and scope. */
export async function searchItem(
	ctx: IExecuteFunctions,
	i: number,
	connections: Connections,
): Promise<INodeExecutionData[]> {
	const query = ctx.getNodeParameter('query', i, '');
	if (typeof query !== 'string' || query.trim() === '')
		throw nodeError(ctx, 'The query is empty', i, 'Give the text to look for in "Query".');
	const scope = scopeOf(ctx, i); // checked before anything is read
	const base = await existingBaseFor(ctx, i, connections);
	const chosen = ctx.getNodeParameter('searchMode', i, 'hybrid') as SearchMode;
	// Hybrid without an embedding model is lexical: the panel's default works with nothing connected.
	const mode =
		chosen === 'hybrid' && !connections.embedder && !connections.vectorStore ? 'lexical' : chosen;
	const halfLife = numberParameter(ctx, 'halfLifeDays', i, 'Recency Half-Life (Days)', 0, 0);
	const floor = minSimilarityOf(ctx, 'minSimilarity', i);
	if (floor.minSimilarity !== undefined && mode === 'lexical')
		throw nodeError(
			ctx,
			'Minimum Similarity needs an embedding model',
			i,
			'Connect an embedding model to the Embedding input, or set Minimum Similarity to 0.',
		);
	// A search of every conversation also says what it read (the base-wide index, up to which capture).
	const { matches, fusion, coverage } = await base.searchReport(query, {
		k: numberParameter(ctx, 'topK', i, 'Top K', 1, 4),
		mode,
		...scope,
		...(halfLife > 0 ? { halfLifeDays: halfLife } : {}),
		...floor,
	});
	if (matches.length === 0)
		ctx.addExecutionHints?.({ message: await emptySearchMessage(base), location: 'outputPane' });
	// Each match says how the search weighed words and vectors (the same for all), so a user sees why,
	// and in a search of every conversation what it read.
	return matches.map((m) => ({
		json: { ...m, search: { ...fusion }, ...(coverage ? { coverage: { ...coverage } } : {}) },
	}));
}

/** Why a search found nothing, in words: a base that holds nothing is not "no match". */
export async function emptySearchMessage(base: MemoryBase): Promise<string> {
	// One read: a base whose conversations were all forgotten (or never captured) holds nothing.
	return (await base.isEmpty())
		? `Nothing captured yet: memory base "${base.baseId}" is empty, so there is nothing to search.`
		: 'No memories matched.';
}

export const search: MemoryBaseOperation = {
	option: {
		name: 'Search',
		value: 'search',
		description:
			'Find the captured messages that best match a query: word matching and, with an embedding model, semantic similarity (one output item per match, with score, conversation, user, role, time, and how the search weighed words and vectors)',
		action: 'Search long-term memory',
	},
	needsEmbedder: false,
	properties: [
		...searchProperties('={{ $json.chatInput }}', showForOperations('search')),
		sessionScopeProperty('session', ['search'], true),
	],

	/** The matches of one item's search, one output item each: text, score, conversation, run and time. */
	execute: searchItem,
};
