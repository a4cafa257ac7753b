// Validating stored objects and exported values: one place that turns a failed check into the typed
// error that names where it failed.
import type { z } from 'zod';

import { CorruptDocumentError, InvalidExportError, MemoryError } from '../errors';

/** Validates a stored object with a zod schema: the value itself, or a CorruptDocumentError naming the key. */
export function parse<T>(key: string, schema: z.ZodType, value: unknown): T {
	const result = schema.safeParse(value);
	if (!result.success) {
		const first = result.error.issues[0];
		throw new CorruptDocumentError(key, `${first.path.join('.') || '(root)'}: ${first.message}`);
	}
	// The value itself, not zod's copy: it keeps its key order (export and import reproduce the bytes).
	return value as T;
}

/** An export that does not hold what it must: InvalidExportError naming the path. */
export function invalid(path: string, reason: string): never {
	throw new InvalidExportError(path, reason);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function arrayAt(value: unknown, path: string): unknown[] {
	if (!Array.isArray(value)) invalid(path, 'must be an array');
	return value;
}

/** Runs a check; a MemoryError it throws (corrupt record, bad name, not JSON) becomes an InvalidExportError at `path`. */
export function at<T>(path: string, check: () => T): T {
	try {
		return check();
	} catch (error) {
		if (error instanceof InvalidExportError) throw error;
		if (error instanceof CorruptDocumentError) invalid(path, error.detail);
		if (error instanceof MemoryError) invalid(path, error.message);
		throw error;
	}
}
