import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { HistoryEntry } from '../../../../src/snapshots/types';
import { showFor } from '../../../shared/display';
import type { ItemOperation } from '../../../shared/operation';
import { pageProperties } from '../parameters';
import { historyLimitOf, walkHistory } from '../versions';
import { openFacts, RESOURCE } from './fields';

const entryJson = (e: HistoryEntry) => ({
	version: e.version,
	parent: e.parent,
	summary: e.summary,
	createdAt: e.created_at,
});

export const factsHistory: ItemOperation = {
	option: {
		name: 'Facts History',
		value: 'factsHistory',
		description:
			'Every change of belief, newest first, as one item: each version’s number, summary (e.g. "Read 6 turns: added f4; updated f1 → f5", "f2 retired by ada@example.com") and time',
		action: 'Get the history of the facts',
	},
	properties: pageProperties(showFor(RESOURCE, 'factsHistory'), 'versions'),

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { where, facts } = await openFacts(ctx, i);
		const { entries, truncatedBefore } = await walkHistory(
			async (before, limit) => await facts.history({ before, limit }),
			historyLimitOf(ctx, i),
		);
		return [
			{
				json: {
					...where,
					entries: entries.map(entryJson),
					...(truncatedBefore !== undefined ? { truncatedBefore } : {}),
				},
			},
		];
	},
};
