import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { MAX_HISTORY_PAGE } from '../../../../src/snapshots/types';
import type { HistoryEntry } from '../../../../src/snapshots/types';
import { showFor } from '../../../shared/display';
import type { ItemOperation } from '../../../shared/operation';
import { numberParameter } from '../../../shared/parameters';
import { pageProperties } from '../parameters';
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
		const limit =
			ctx.getNodeParameter('returnAll', i, false) === true
				? Infinity
				: numberParameter(ctx, 'limit', i, 'Limit', 1, 50);
		const entries: HistoryEntry[] = [];
		let before: number | undefined;
		let truncatedBefore: number | undefined;
		for (;;) {
			const page = await facts.history({
				before,
				limit: Math.min(limit - entries.length, MAX_HISTORY_PAGE),
			});
			entries.push(...page.entries);
			truncatedBefore = page.truncatedBefore;
			if (page.nextBefore === null || entries.length >= limit) break;
			before = page.nextBefore;
		}
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
