import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { optionsCollection } from '../../../shared/descriptions';
import { showFor } from '../../../shared/display';
import { nodeError } from '../../../shared/errors';
import type { ItemOperation } from '../../../shared/operation';
import { numberParameter } from '../../../shared/parameters';
import { pageProperties } from '../parameters';
import { historyLimitOf, walkHistory } from '../versions';
import { branchOf, entryJson, openVersionedData, RESOURCE } from './fields';

const show = showFor(RESOURCE, 'history');

interface Options {
	beforeVersion?: number;
	createdAfter?: string;
	groupEntries?: boolean;
}

export const history: ItemOperation = {
	option: {
		name: 'History',
		value: 'history',
		description:
			'List the versions of a branch, newest first: number, parent, summary (what changed), when, and the chat message that made it',
		action: 'Get the history of the data',
	},
	properties: [
		...pageProperties(show, 'versions'),
		optionsCollection(
			[
				{
					displayName: 'Before Version',
					name: 'beforeVersion',
					type: 'number',
					default: 1,
					typeOptions: { minValue: 1 },
					description:
						'Continue below this version, for paging: the list starts at its parent (pass the previous page’s nextBefore, with Group Entries)',
				},
				{
					displayName: 'Created After',
					name: 'createdAfter',
					type: 'dateTime',
					default: '',
					description:
						'Only versions saved after this moment, e.g. {{ $now.minus(1, "day") }} for "since yesterday"',
				},
				{
					displayName: 'Group Entries',
					name: 'groupEntries',
					type: 'boolean',
					default: false,
					description:
						'Whether to return one item holding the entries (with nextBefore for paging) instead of one item per version. One item per version outputs nothing when there is no version.',
				},
			],
			show,
		),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { workflowId, conversationId, versions } = await openVersionedData(ctx, i);
		const branch = branchOf(ctx, i);
		const options = ctx.getNodeParameter('options', i, {}) as Options;
		const limit = historyLimitOf(ctx, i);
		const before =
			options.beforeVersion === undefined
				? undefined
				: numberParameter(ctx, 'options.beforeVersion', i, 'Before Version', 1, 1);
		let since: number | undefined;
		if (options.createdAfter) {
			since = Date.parse(String(options.createdAfter));
			if (Number.isNaN(since))
				throw nodeError(
					ctx,
					`Created After must be a date and time, got ${JSON.stringify(options.createdAfter)}`,
					i,
				);
		}
		const { entries, nextBefore, truncatedBefore } = await walkHistory(
			async (from, count) => await versions.history({ branch, before: from, limit: count }),
			limit,
			before,
			(e) => since !== undefined && Date.parse(e.created_at) <= since,
		);
		// Keep Last N Versions cut the history there: each item says so.
		const where = {
			workflowId,
			conversationId,
			branch,
			...(truncatedBefore !== undefined ? { truncatedBefore } : {}),
		};
		if (options.groupEntries === true)
			return [{ json: { ...where, entries: entries.map(entryJson), nextBefore } }];
		return entries.map((e) => ({ json: { ...where, ...entryJson(e) } }));
	},
};
