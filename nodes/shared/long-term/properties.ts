import type { INodeProperties } from 'n8n-workflow';

import { RECALL_HALF_LIFE_DAYS } from '../../../src/knowledge/types';
import type { Show } from '../display';
import { userIdProperties } from './user-id';

/** Long-Term Memory on: its fields show. */
export const WITH_LONG_TERM: Show = { longTermMemory: [true] };

/**
 * Long-Term Memory in LLM with Memory and the LLM Memory Store: recall from a Memory Base before the
 * model call, and capture each turn into it after. `show` is the condition the switch itself shows under;
 * the store adds a Recall Query (its agent does not hand the user's message to the memory).
 */
export function longTermProperties(show: Show, forStore: boolean): INodeProperties[] {
	const on = { ...show, ...WITH_LONG_TERM };
	return [
		{
			displayName: 'Long-Term Memory',
			name: 'longTermMemory',
			type: 'boolean',
			default: false,
			description:
				'Whether to recall facts from earlier conversations (a Memory Base) before the model answers, and to capture each turn into it afterwards. Without an embedding model connected, recall is lexical (word matching, any language); with one, lexical and semantic rankings are fused.',
			displayOptions: { show },
		},
		...userIdProperties(on),
		...(forStore
			? [
					{
						displayName: 'Recall Query',
						name: 'longTermQuery',
						type: 'string',
						default: '={{ $json.chatInput }}',
						description:
							'What to recall for: the user’s message as the agent receives it (the Chat Trigger’s chatInput). n8n’s AI Agent 3 does not hand it to its memory, so it is read here.',
						displayOptions: { show: on },
					} satisfies INodeProperties,
				]
			: []),
		{
			displayName: 'Long-Term Memory Options',
			name: 'longTermOptions',
			type: 'collection',
			placeholder: 'Add Option',
			default: {},
			displayOptions: { show: on },
			options: [
				{
					displayName: 'Memory Base ID',
					name: 'baseId',
					type: 'string',
					default: '={{ $workflow.id }}',
					description:
						'Which Memory Base to recall from and capture into (the Memory Base nodes use the workflow ID by default). Workflows that share one ID share long-term memory, user by user.',
				},
				{
					displayName: 'Recall Scope',
					name: 'scope',
					type: 'options',
					options: [
						{
							name: 'This User',
							value: 'user',
							description:
								'Every conversation of the User ID (this conversation only when no User ID is set)',
						},
						{
							name: 'This Conversation',
							value: 'conversation',
							description: 'Only what was said earlier in this conversation, beyond the window',
						},
					],
					default: 'user',
				},
				{
					displayName: 'Top K',
					name: 'topK',
					type: 'number',
					default: 5,
					typeOptions: { minValue: 1, maxValue: 50 },
					description: 'Recalled entries at most per model call',
				},
				{
					displayName: 'Recall Token Budget',
					name: 'tokenBudget',
					type: 'number',
					default: 500,
					typeOptions: { minValue: 0 },
					description:
						'Tokens the recalled section may take. They count against Max History Tokens: the history gives way.',
				},
				{
					displayName: 'Recency Half-Life (Days)',
					name: 'halfLifeDays',
					type: 'number',
					default: RECALL_HALF_LIFE_DAYS,
					typeOptions: { minValue: 0 },
					description:
						'Newer statements weigh more: the recency bonus (up to 0.3) halves every this many days, so a statement this old counts 0.85 of a new one of the same relevance and a very old one 0.7; and of two close matches naming the same thing, the newer comes first. 0: no recency.',
				},
				minSimilarityProperty(
					'Only recall entries at least this similar to the user’s message (cosine similarity of their embeddings, −1 … 1; needs an embedding model). Small talk such as “thanks” or “ok” recalls nothing anyway. 0: no minimum.',
				),
				{
					displayName: 'Capture Turns',
					name: 'capture',
					type: 'boolean',
					default: true,
					description:
						'Whether to capture each turn (the user’s message and the answer) into the Memory Base after it is saved',
				},
			],
		},
	];
}

/** Minimum Similarity: a cosine floor on matches (0, the default, is none). */
export function minSimilarityProperty(description: string, extra: Partial<INodeProperties> = {}) {
	return {
		displayName: 'Minimum Similarity',
		name: 'minSimilarity',
		type: 'number',
		default: 0,
		typeOptions: { minValue: -1, maxValue: 1, numberPrecision: 2 },
		description,
		...extra,
	} satisfies INodeProperties;
}
