import { InvalidIdError } from './errors';

export const MAX_ID_BYTES = 200;

// C0 controls, DEL and C1 controls (NUL included).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A short, escaped rendering of a rejected value for error messages. */
function preview(value: string): string {
	const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
	return JSON.stringify(shown);
}

/** Why `value` cannot be one path segment / key segment, or undefined when it can. */
function problem(value: unknown): string | undefined {
	if (typeof value !== 'string') return `must be a string, got ${value === null ? 'null' : typeof value}`;
	if (value.length === 0) return 'must not be empty';
	if (Buffer.byteLength(value, 'utf8') > MAX_ID_BYTES)
		return `must be at most ${MAX_ID_BYTES} bytes, got ${Buffer.byteLength(value, 'utf8')}`;
	if (CONTROL.test(value)) return `${preview(value)} contains a control character`;
	if (value.includes('/')) return `${preview(value)} contains "/"`;
	if (value.includes('\\')) return `${preview(value)} contains "\\"`;
	if (value.includes('..')) return `${preview(value)} contains ".."`;
	if (value === '.') return 'must not be "."';
	return undefined;
}

/**
 * Checks that an ID can be used as one segment of a storage key and returns it unchanged.
 * Never rewrites an ID: a bad ID is an error naming the field.
 */
export function validateId(field: string, value: unknown): string {
	const why = problem(value);
	if (why) throw new InvalidIdError(field, why);
	return value as string;
}

/** Normalises an optional key prefix ("a/b" or "a/b/") to "a/b/"; each segment must be a valid ID. */
export function validateKeyPrefix(field: string, value: string | undefined): string {
	if (value === undefined || value === '') return '';
	const trimmed = value.endsWith('/') ? value.slice(0, -1) : value;
	if (trimmed.startsWith('/')) throw new InvalidIdError(field, 'must not start with "/"');
	for (const segment of trimmed.split('/')) {
		const why = problem(segment);
		if (why) throw new InvalidIdError(field, `segment ${why}`);
	}
	return `${trimmed}/`;
}
