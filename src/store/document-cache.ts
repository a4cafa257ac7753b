import { BoundedCache } from '../common/bounded-cache';

/**
 * Decoded documents of this process, each valid for one stored version only (or, for write-once
 * objects under random names, for good). Entries are deeply frozen because every reader in the process
 * shares them. Weight: about twice the stored bytes (the decoded heap size).
 */
export interface CachedDocument {
	version: string;
	doc: unknown;
}

export function deepFreeze<T>(value: T): T {
	if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
	for (const v of Object.values(value)) deepFreeze(v);
	return Object.freeze(value);
}

/** The process-wide cache every document store uses: 128 MiB of decoded documents at most. */
export const documentCache = new BoundedCache<CachedDocument>({
	name: 'documents',
	maxWeight: 128 * 2 ** 20,
});
