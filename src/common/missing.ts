/** An optional ID that was not given: undefined, null or the empty string. */
export function isMissing(value: unknown): value is undefined | null | '' {
	return value === undefined || value === null || value === '';
}
