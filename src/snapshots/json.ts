import { DataTooLargeError, NotJsonError } from '../errors';

/** A plain JSON value: what versioned data stores, diffs and patches. */
export type JsonValue =
	null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The most bytes a version's data may take as JSON (UTF-8): 5 MiB. Larger data is refused, never cut. */
export const MAX_DATA_BYTES = 5 * 2 ** 20;

/** Nesting deeper than this is refused: every walk over the data (diff, patch, check) stays far from the stack limit. */
export const MAX_JSON_DEPTH = 1000;

/** One JSON Pointer (RFC 6901) reference token, escaped: "~" → "~0", "/" → "~1". */
export function escapePointerToken(token: string): string {
	return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function hasOwn(obj: object, key: string): boolean {
	return Object.prototype.hasOwnProperty.call(obj, key);
}

/** Sets an own property, also for the key "__proto__" (which a plain assignment would not create). */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
	if (key === '__proto__')
		Object.defineProperty(obj, key, {
			value,
			writable: true,
			enumerable: true,
			configurable: true,
		});
	else obj[key] = value;
}

export function isJsonObject(value: unknown): value is Record<string, JsonValue> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks that `value` is plain JSON, so that storing it and reading it back gives an equal value, and
 * returns its serialization. Refused (NotJsonError naming the JSON Pointer): undefined, functions,
 * symbols, NaN and ±Infinity, BigInt, cycles, sparse arrays, symbol keys, and objects that are not plain
 * (Date, Map, class instances: JSON would silently turn them into something else). Larger than
 * `maxBytes` serialized: DataTooLargeError. `-0` is stored as `0` (JSON has no negative zero).
 */
export function toJsonText(
	field: string,
	value: unknown,
	maxBytes = MAX_DATA_BYTES,
): { text: string; bytes: number } {
	// Strings alone already take at least their length in UTF-8 bytes: huge data stops here, before
	// JSON.stringify builds a string the size of it.
	let lowerBound = 0;
	const stack = new Set<object>();
	const check = (v: unknown, path: string, depth: number): void => {
		const fail = (problem: string): never => {
			throw new NotJsonError(field, path, problem);
		};
		switch (typeof v) {
			case 'string':
				lowerBound += v.length + 2;
				break;
			case 'boolean':
				lowerBound += 4;
				return;
			case 'number':
				if (!Number.isFinite(v)) fail(`is ${String(v)}`);
				lowerBound += 1;
				return;
			case 'undefined':
				return fail('is undefined');
			case 'bigint':
				return fail('is a BigInt');
			case 'function':
				return fail('is a function');
			case 'symbol':
				return fail('is a symbol');
			case 'object': {
				if (v === null) {
					lowerBound += 4;
					return;
				}
				if (depth >= MAX_JSON_DEPTH) fail(`nests deeper than ${MAX_JSON_DEPTH} levels`);
				if (stack.has(v)) fail('refers back to an object that contains it (a cycle)');
				stack.add(v);
				lowerBound += 2;
				if (Array.isArray(v)) {
					if (Object.getPrototypeOf(v) !== Array.prototype) fail('is not a plain array');
					for (let i = 0; i < v.length; i++) {
						if (!(i in v)) fail(`has a hole at index ${i} (a sparse array)`);
						check(v[i], `${path}/${i}`, depth + 1);
					}
				} else {
					const proto = Object.getPrototypeOf(v) as unknown;
					if (proto !== Object.prototype && proto !== null)
						fail(
							`is a ${(v as { constructor?: { name?: string } }).constructor?.name ?? 'non-plain'} object, not a plain object`,
						);
					if (Object.getOwnPropertySymbols(v).length > 0) fail('has symbol keys');
					for (const key of Object.keys(v)) {
						lowerBound += key.length + 3;
						check(
							(v as Record<string, unknown>)[key],
							`${path}/${escapePointerToken(key)}`,
							depth + 1,
						);
					}
				}
				stack.delete(v);
				break;
			}
		}
		if (lowerBound > maxBytes) throw new DataTooLargeError(field, lowerBound, maxBytes, true);
	};
	check(value, '', 0);
	const text = JSON.stringify(value);
	const bytes = Buffer.byteLength(text, 'utf8');
	if (bytes > maxBytes) throw new DataTooLargeError(field, bytes, maxBytes);
	return { text, bytes };
}

/** Deep equality of JSON values: objects by their keys in any order, arrays in order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
	if (a === b) return true;
	if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
	if (Array.isArray(a)) {
		if (!Array.isArray(b) || a.length !== b.length) return false;
		for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
		return true;
	}
	if (Array.isArray(b)) return false;
	const ka = Object.keys(a);
	if (ka.length !== Object.keys(b).length) return false;
	for (const k of ka)
		if (
			!hasOwn(b, k) ||
			!jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])
		)
			return false;
	return true;
}

/** A JSON string that is equal for jsonEqual values (object keys sorted): for comparing many elements. */
export function canonicalJson(value: unknown): string {
	if (typeof value !== 'object' || value === null) return JSON.stringify(value);
	if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
	const keys = Object.keys(value).sort();
	return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

/** A deep copy of a JSON value (mutable, never shared with the original). */
export function cloneJson<T extends JsonValue>(value: T): T {
	return JSON.parse(JSON.stringify(value)) as T;
}

/** A JSON value rendered for a one-line summary: at most `max` characters. */
export function showJson(value: unknown, max = 60): string {
	const text = JSON.stringify(value) ?? String(value);
	return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
