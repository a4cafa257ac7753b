import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { MAX_HISTORY_PAGE } from '../../../src/snapshots/types';
import type { HistoryEntry, HistoryPage, VersionDiff } from '../../../src/snapshots/types';
import { showFor } from '../../shared/display';
import { numberParameter } from '../../shared/parameters';

// What the resources kept as versions (Versioned Data, Facts) share: version fields, Diff, History.

/** A version number field (1 and up) of some operations of a resource. */
export function versionProperty(
	resource: string,
	name: string,
	displayName: string,
	description: string,
	...operations: string[]
): INodeProperties {
	return {
		displayName,
		name,
		type: 'number',
		required: true,
		default: 1,
		typeOptions: { minValue: 1 },
		description,
		displayOptions: { show: showFor(resource, ...operations) },
	};
}

/** A version number parameter: a whole number ≥ 1, or an error naming the field. */
export function versionOf(ctx: IExecuteFunctions, i: number, name: string, label: string): number {
	return numberParameter(ctx, name, i, label, 1, 1);
}

/** A Diff operation's fields: From Version and To Version. */
export function diffProperties(resource: string, operation: string): INodeProperties[] {
	return [
		versionProperty(
			resource,
			'fromVersion',
			'From Version',
			'The older version to compare',
			operation,
		),
		versionProperty(resource, 'toVersion', 'To Version', 'The newer version to compare', operation),
	];
}

/** Compares the item's From Version and To Version: the output's from, to, changes and patch. */
export async function diffJson(
	ctx: IExecuteFunctions,
	i: number,
	diff: (from: number, to: number) => Promise<VersionDiff>,
): Promise<IDataObject> {
	const result = await diff(
		versionOf(ctx, i, 'fromVersion', 'From Version'),
		versionOf(ctx, i, 'toVersion', 'To Version'),
	);
	return {
		from: result.from,
		to: result.to,
		changes: result.summary,
		patch: structuredClone(result.patch) as unknown as IDataObject[],
	};
}

/** How many history entries an item asks for: Return All (no end), or Limit. */
export function historyLimitOf(ctx: IExecuteFunctions, i: number): number {
	return ctx.getNodeParameter('returnAll', i, false) === true
		? Infinity
		: numberParameter(ctx, 'limit', i, 'Limit', 1, 50);
}

export interface WalkedHistory {
	entries: HistoryEntry[];
	/** Where the next page would start; null at the first version, the cut, or where `stop` ended it. */
	nextBefore: number | null;
	truncatedBefore?: number;
}

/**
 * Reads history pages, newest first, up to `limit` entries, from below `before` if given. The walk
 * ends before the first entry `stop` accepts (then nextBefore is null).
 */
export async function walkHistory(
	page: (before: number | undefined, limit: number) => Promise<HistoryPage>,
	limit: number,
	before?: number,
	stop: (e: HistoryEntry) => boolean = () => false,
): Promise<WalkedHistory> {
	const entries: HistoryEntry[] = [];
	let nextBefore: number | null = null;
	let truncatedBefore: number | undefined;
	for (;;) {
		const got = await page(before, Math.min(limit - entries.length, MAX_HISTORY_PAGE));
		for (const e of got.entries) {
			if (stop(e)) return { entries, nextBefore: null, truncatedBefore };
			entries.push(e);
		}
		nextBefore = got.nextBefore;
		truncatedBefore = got.truncatedBefore;
		if (nextBefore === null || entries.length >= limit) break;
		before = nextBefore;
	}
	return { entries, nextBefore, truncatedBefore };
}
