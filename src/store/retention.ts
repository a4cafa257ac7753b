// Retention stored with the memory it governs: "expire N days after the last write". Every memory kind
// (chat documents, versioned data's branch heads, Memory Base capture logs) keeps the same two fields,
// so any reader (another workflow, the LLM Memory Manager, a nightly sweep) knows the rule without
// node parameters.
import { z } from 'zod';

import { ConflictError, InvalidOptionError } from '../errors';
import type { MemoryStorage } from './storage';

export const DAY_MS = 86_400_000;
/**
 * Temporary copies and unreferenced write-once objects younger than this may belong to a write in
 * progress, so housekeeping leaves them (no write takes that long).
 */
export const LEFTOVER_SAFE_AGE_MS = 15 * 60_000;
/** The longest expiry a memory may carry (100 years): longer is "never", say so with 0. */
export const MAX_EXPIRE_AFTER_DAYS = 36_500;

/** The stored fields: the rule and the time of the last write it is counted from. */
export interface RetentionFields {
	/** Days after `updated_at` from which the memory counts as gone. Absent: it never expires. */
	expire_after_days?: number;
	updated_at?: string;
}

/** The stored rule as schemas check it: a positive number of days (fractions allowed). */
export const expireAfterDaysSchema = z.number().positive().max(MAX_EXPIRE_AFTER_DAYS);

/**
 * A caller's Expire After setting, checked: undefined leaves what is stored as it is, 0 removes the
 * rule (the memory never expires), a positive number of days sets it.
 */
export function checkExpireAfterDays(
	value: unknown,
	option = 'expireAfterDays',
): number | undefined {
	if (value === undefined || value === null) return undefined;
	if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
		throw new InvalidOptionError(option, 'must be a number of days ≥ 0 (0: never expire)');
	if (value > MAX_EXPIRE_AFTER_DAYS)
		throw new InvalidOptionError(
			option,
			`must be at most ${MAX_EXPIRE_AFTER_DAYS} days (0: never expire)`,
		);
	return value;
}

/** When the stored rule makes the memory gone; undefined when it has no rule (or no time to count from). */
export function expiresAt(fields: RetentionFields): number | undefined {
	const days = fields.expire_after_days;
	if (days === undefined || fields.updated_at === undefined) return undefined;
	return Date.parse(fields.updated_at) + days * DAY_MS;
}

/** Whether the memory is past its stored rule at `now`. */
export function isExpired(fields: RetentionFields, now: Date): boolean {
	const at = expiresAt(fields);
	return at !== undefined && at <= now.getTime();
}

/**
 * The rule a write stores: the caller's setting (see checkExpireAfterDays) or, when it has none, the
 * rule already stored. Undefined: no rule (0 removes one).
 */
export function ruleOnWrite(
	stored: RetentionFields,
	setting: number | undefined,
): number | undefined {
	const days = setting === undefined ? stored.expire_after_days : setting;
	return days === undefined || days === 0 ? undefined : days;
}

/**
 * `doc` with the rule a write stores (see ruleOnWrite), set or removed. With `stamp`, the write time
 * goes with a rule as `updated_at` (chat documents, which keep no write time otherwise; memory written
 * without retention keeps its exact former shape).
 */
export function withRule<T extends RetentionFields>(
	doc: T,
	setting: number | undefined,
	stamp?: Date,
): T {
	const days = ruleOnWrite(doc, setting);
	const rest = { ...doc };
	delete rest.expire_after_days;
	if (stamp) delete rest.updated_at;
	if (days === undefined) return rest;
	return {
		...rest,
		expire_after_days: days,
		...(stamp ? { updated_at: stamp.toISOString() } : {}),
	};
}

/**
 * Deletes `key` only if it is still `version` (and, with `unmodifiedSince`, not written after that
 * time): true when deleted, false when it was written meanwhile (it stays). What every retention and
 * housekeeping delete goes through, so a write after a memory was judged always wins.
 */
export async function deleteIfUnchanged(
	storage: MemoryStorage,
	key: string,
	version: string,
	unmodifiedSince?: Date,
): Promise<boolean> {
	try {
		await storage.delete(key, { ifVersion: version, ifUnmodifiedSince: unmodifiedSince });
		return true;
	} catch (error) {
		if (error instanceof ConflictError) return false;
		throw error;
	}
}
