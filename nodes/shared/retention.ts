import type { IExecuteFunctions, INodeProperties, ISupplyDataFunctions } from 'n8n-workflow';

import { MAX_KEEP_LAST } from '../../src/snapshots/types';
import { MAX_EXPIRE_AFTER_DAYS } from '../../src/store/retention';
import { nodeError } from './errors';

type Ctx = IExecuteFunctions | ISupplyDataFunctions;

/** Options → Expire After (Days), the same in every node that writes memory; `what` names that memory. */
export function expireAfterDaysOption(what: string): INodeProperties {
	return {
		displayName: 'Expire After (Days)',
		name: 'expireAfterDays',
		type: 'number',
		default: 30,
		typeOptions: { minValue: 0, maxValue: MAX_EXPIRE_AFTER_DAYS, numberPrecision: 2 },
		description: `Delete ${what} once it has not been written for this many days. The rule is stored with the memory and counted from its last write, so every workflow, the LLM Memory Manager and its Prune Expired apply it; expired memory is never given to a model. 0 removes a stored rule. Not added: a stored rule stays as it is.`,
	};
}

/** Versioned Data Options → Keep Last N Versions, in LLM with Memory and the Manager's Save Version. */
export const keepLastVersionsOption: INodeProperties = {
	displayName: 'Keep Last N Versions',
	name: 'keepLastVersions',
	type: 'number',
	default: 20,
	typeOptions: { minValue: 0, maxValue: MAX_KEEP_LAST },
	description:
		'After each save, delete the branch’s versions older than its newest N (versions another branch still shows stay); History then says where it was cut. Stored with the branch, so later saves apply it too. 0 removes a stored number (keep every version).',
};

/**
 * A number option that may be left out: undefined when it is, else a finite number ≥ 0 (whole with
 * `whole`) up to `max`, or an error naming the field.
 */
function optionalCount(
	ctx: Ctx,
	i: number,
	path: string,
	label: string,
	max: number,
	whole: boolean,
): number | undefined {
	// null, not undefined: n8n treats an undefined fallback as none and throws for a missing option.
	const value: unknown = ctx.getNodeParameter(path, i, null);
	if (value === undefined || value === null || value === '') return undefined;
	const ok = typeof value === 'number' && (whole ? Number.isSafeInteger(value) : isFinite(value));
	if (!ok || (value as number) < 0 || (value as number) > max)
		throw nodeError(
			ctx,
			`${label} must be a ${whole ? 'whole number' : 'number'} from 0 to ${max}, got ${JSON.stringify(value)}`,
			i,
		);
	return value as number;
}

/** The item's Expire After (Days) at `path`; undefined when the option is not added. */
export function expireAfterDaysOf(
	ctx: Ctx,
	i: number,
	path = 'options.expireAfterDays',
): number | undefined {
	return optionalCount(ctx, i, path, 'Expire After (Days)', MAX_EXPIRE_AFTER_DAYS, false);
}

/** The item's Keep Last N Versions at `path`; undefined when the option is not added. */
export function keepLastVersionsOf(ctx: Ctx, i: number, path: string): number | undefined {
	return optionalCount(ctx, i, path, 'Keep Last N Versions', MAX_KEEP_LAST, true);
}
