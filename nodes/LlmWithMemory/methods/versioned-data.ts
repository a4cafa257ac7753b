import type { IExecuteFunctions } from 'n8n-workflow';

import { MAIN_BRANCH, MAX_HISTORY_PAGE } from '../../../src/snapshots/types';
import type { VersionedSettings } from '../../../src/turn/versioned';
import { nodeError } from '../../shared/errors';
import { idParameter } from '../../shared/ids';
import { optionalJsonParameter } from '../../shared/json-parameter';
import { keepLastVersionsOf } from '../../shared/retention';

interface RawOptions {
	changeMethod?: string;
	historyEntries?: unknown;
}

/** Step 1: the Versioned Data settings of an item, checked before anything is read; undefined when off. */
export function versionedSettings(
	ctx: IExecuteFunctions,
	i: number,
	expireAfterDays: number | undefined,
): VersionedSettings | undefined {
	if (ctx.getNodeParameter('versionedData', i, false) !== true) return undefined;
	const options = ctx.getNodeParameter('versionedDataOptions', i, {}) as RawOptions;
	const entries = options.historyEntries ?? 5;
	if (typeof entries !== 'number' || !Number.isSafeInteger(entries) || entries < 0)
		throw nodeError(
			ctx,
			`History Entries In Prompt must be a whole number ≥ 0, got ${JSON.stringify(entries)}`,
			i,
		);
	return {
		branch: idParameter(ctx, 'versionedDataOptions.branch', i, 'Branch') ?? MAIN_BRANCH,
		initialData: optionalJsonParameter(ctx, 'initialData', i, 'Initial Data'),
		schema: optionalJsonParameter(ctx, 'versionedDataOptions.jsonSchema', i, 'JSON Schema'),
		historyEntries: Math.min(entries, MAX_HISTORY_PAGE),
		method: options.changeMethod === 'json' ? 'json' : 'auto',
		rules: {
			expireAfterDays,
			keepLastVersions: keepLastVersionsOf(ctx, i, 'versionedDataOptions.keepLastVersions'),
		},
	};
}
