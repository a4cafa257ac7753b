import { CONTROL_CHARS, LONE_SURROGATE } from '../common/control-chars';
import { InvalidIdError } from '../errors';

/** The most bytes (UTF-8) of an ID a caller gives. */
export const MAX_ID_BYTES = 200;
/** Room for the suffixes the engine derives from a caller's ID (a turn's "<id>:user"). */
export const DERIVED_ID_SUFFIX_BYTES = 16;

/** A short, escaped rendering of a rejected value for error messages. */
function preview(value: string): string {
	const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
	return JSON.stringify(shown);
}

function typeName(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'an array';
	return typeof value === 'object' ? 'an object' : typeof value;
}

/** Why `value` cannot be one segment of a storage key, or undefined when it can. */
function problem(value: unknown, maxBytes: number): string | undefined {
	if (typeof value !== 'string') return `must be a string, got ${typeName(value)}`;
	if (value.length === 0) return 'must not be empty';
	const bytes = Buffer.byteLength(value, 'utf8');
	if (bytes > maxBytes) return `must be at most ${maxBytes} bytes, got ${bytes}`;
	if (CONTROL_CHARS.test(value)) return `${preview(value)} contains a control character`;
	if (LONE_SURROGATE.test(value)) return `${preview(value)} contains an unpaired UTF-16 surrogate`;
	if (value.includes('/')) return `${preview(value)} contains "/"`;
	if (value.includes('\\')) return `${preview(value)} contains "\\"`;
	if (value.includes('..')) return `${preview(value)} contains ".."`;
	if (value === '.') return 'must not be "."';
	return undefined;
}

/**
 * Checks that an ID can be used as one segment of a storage key and returns it unchanged.
 * Never rewrites an ID (so two IDs can never meet in one key): a bad ID is an error naming the field.
 */
export function validateId(field: string, value: unknown): string {
	const why = problem(value, MAX_ID_BYTES);
	if (why) throw new InvalidIdError(field, why);
	return value as string;
}

/** Whether a stored ID (read back from an object) passes validateId: readers refuse objects naming others. */
export function isValidId(value: unknown): value is string {
	return problem(value, MAX_ID_BYTES) === undefined;
}

/** The same check for an ID the engine derived from a valid one (it may carry a short suffix). */
export function validateDerivedId(field: string, value: string): string {
	const why = problem(value, MAX_ID_BYTES + DERIVED_ID_SUFFIX_BYTES);
	if (why) throw new InvalidIdError(field, why);
	return value;
}

/** The most bytes (UTF-8) of a branch name of versioned data: short, since people and models type them. */
export const MAX_BRANCH_BYTES = 100;

/** Checks a branch name of versioned data (the rules of an ID, at most 100 bytes) and returns it unchanged. */
export function validateBranchName(value: unknown): string {
	const why = problem(value, MAX_BRANCH_BYTES);
	if (why) throw new InvalidIdError('branch', why);
	return value as string;
}

/** Normalises an optional key prefix ("a/b" or "a/b/") to "a/b/"; each segment must be a valid ID. */
export function validateKeyPrefix(field: string, value: string | undefined): string {
	if (value === undefined || value === '') return '';
	const trimmed = value.endsWith('/') ? value.slice(0, -1) : value;
	if (trimmed.startsWith('/')) throw new InvalidIdError(field, 'must not start with "/"');
	for (const segment of trimmed.split('/')) {
		const why = problem(segment, MAX_ID_BYTES);
		if (why) throw new InvalidIdError(field, `segment ${why}`);
	}
	return `${trimmed}/`;
}
