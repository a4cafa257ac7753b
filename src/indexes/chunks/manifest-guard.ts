// What every index manifest may carry besides its content: the owner of its partition (the user or
// conversation whose chunks it holds), checked on every read and write so two IDs never share one
// partition; and the time it was moved to the partitioned layout, after which it takes no more writes.
import { IndexMovedError, PartitionOwnerError } from '../../errors';
import type { Versioned } from '../../store/document-store';

export interface Guarded {
	/** The partition's owner (partitioned layout); none for a base's single index. */
	owner?: string;
	/** When the index was moved to the partitioned layout: a writer then writes to the partitions. */
	moved_at?: string;
}

/** Refuses a manifest stored for another owner than `owner` (none expected: anything goes). */
export function checkOwner<T extends Guarded>(
	key: string,
	owner: string | undefined,
	read: Versioned<T>,
): Versioned<T> {
	if (owner !== undefined && read.version !== null && read.doc.owner !== owner)
		throw new PartitionOwnerError(key);
	return read;
}

/**
 * A manifest update that refuses another owner's manifest and a moved one (unless `onMoved`), and
 * stamps its result with the owner (an index opened without one keeps the stored one).
 */
export function guarded<T extends Guarded>(
	key: string,
	owner: string | undefined,
	fn: (cur: Versioned<T>) => T | undefined | Promise<T | undefined>,
	onMoved: 'refuse' | 'allow' = 'refuse',
): (cur: Versioned<T>) => Promise<T | undefined> {
	return async (cur) => {
		checkOwner(key, owner, cur);
		if (cur.version !== null && cur.doc.moved_at !== undefined && onMoved === 'refuse')
			throw new IndexMovedError(key);
		const next = await fn(cur);
		const stamp = owner ?? (cur.version === null ? undefined : cur.doc.owner);
		return next === undefined || stamp === undefined ? next : { ...next, owner: stamp };
	};
}
