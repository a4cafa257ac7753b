// Errors of the Memory Base (src/knowledge).
import { MemoryError } from './base';

/**
 * A sync of the memory base (one session, or the whole base) is already running: a conflict, not a
 * failure, so the caller can retry once it has finished. Nothing was changed. `sessionId` is null
 * when the whole base is being synced.
 */
export class SyncRunningError extends MemoryError {
	constructor(
		readonly baseId: string,
		readonly sessionId: string | null,
		readonly since: string | undefined,
		readonly expiresAt: string | undefined,
		readonly operation: string | undefined,
	) {
		super(
			`Sync already running: ${operation ?? 'a sync'} of memory base "${baseId}"` +
				`${sessionId === null ? ' (whole base)' : ` (session "${sessionId}")`} holds the lock` +
				`${since ? ` since ${since}` : ''}${expiresAt ? `, until ${expiresAt} at the latest` : ''}. ` +
				'Nothing was changed; try again when it has finished.',
		);
	}
}

/** A running sync stopped because the memory base is being deleted. Its cursor was not moved. */
export class SyncCancelledError extends MemoryError {
	constructor(
		readonly baseId: string,
		readonly sessionId: string,
	) {
		super(
			`The sync of session "${sessionId}" of memory base "${baseId}" was cancelled: the memory base is being deleted. The cursor was not moved.`,
		);
	}
}

/**
 * A sync's lock expired and another sync took it over (the holder stalled longer than the lock's
 * duration). This sync stopped without moving the cursor; the other one carries on from it.
 */
export class LeaseLostError extends MemoryError {
	constructor(readonly key: string) {
		super(
			`The sync lost its lock "${key}" to another sync (it ran past the lock's duration); the cursor was not moved`,
		);
	}
}

/** The memory base is being deleted: nothing new is captured or synced. */
export class MemoryBaseDeletingError extends MemoryError {
	constructor(readonly baseId: string) {
		super(`Memory base "${baseId}" is being deleted; nothing was captured or synced`);
	}
}

/** The embedding model returned something that cannot be indexed (wrong count, no numbers, other dimensions). */
export class EmbeddingError extends MemoryError {
	constructor(readonly reason: string) {
		super(`The embedding model's answer cannot be used: ${reason}`);
	}
}

/** Vectors of another dimension than the knowledge base holds (the embedding model was changed). */
export class DimensionMismatchError extends MemoryError {
	constructor(
		readonly knowledgeBaseId: string,
		readonly stored: number,
		readonly got: number,
	) {
		super(
			`Knowledge base "${knowledgeBaseId}" holds ${stored}-dimensional vectors, but the embedding model returned ${got} dimensions. ` +
				'Use the embedding model (and dimensions) it was built with, or run Regenerate to rebuild it with this one.',
		);
	}
}

/** An index lists a segment that is not in storage (deleted behind the base's back). */
export class IndexDamagedError extends MemoryError {
	constructor(
		readonly knowledgeBaseId: string,
		readonly missing: string[],
		readonly index: 'vector' | 'lexical' = 'vector',
	) {
		super(
			`The ${index} index of ${index === 'vector' ? 'knowledge base' : 'memory base'} "${knowledgeBaseId}" is damaged: ${missing.length} segment(s) are missing ` +
				`(e.g. "${missing[0]}"). Run Regenerate to rebuild it from the capture log.`,
		);
	}
}

/** Tier upkeep took many more steps than settling needs: its merges keep failing and undoing each other. */
export class TiersUnsettledError extends MemoryError {
	constructor(readonly steps: number) {
		super(
			`The index's tiers did not settle after ${steps} steps of upkeep (a merge keeps failing); its segments still hold everything. Run Regenerate if this repeats.`,
		);
	}
}

/**
 * A search found the index missing, or holding less than the capture log says was indexed: it
 * would answer from part of what was captured, so it refuses instead of returning too little.
 */
export class IndexMismatchError extends MemoryError {
	constructor(
		readonly baseId: string,
		readonly reason: string,
	) {
		super(
			`Memory base "${baseId}" cannot be searched: ${reason}. Run Regenerate to rebuild its index from the capture log.`,
		);
	}
}

/**
 * A search without a conversation or a user would return any user's memories: refused unless the
 * caller says so explicitly ({ allUsers: true }).
 */
export class CrossUserSearchError extends MemoryError {
	constructor(readonly baseId: string) {
		super(
			`A search of memory base "${baseId}" needs a conversation or a user ID: without one it would return other users' memories. Pass allUsers: true to search every user on purpose.`,
		);
	}
}

/** A knowledge base ID already used by another memory base (or by a knowledge base that is not one). */
export class KnowledgeBaseInUseError extends MemoryError {
	constructor(
		readonly knowledgeBaseId: string,
		readonly owner: string | undefined,
	) {
		super(
			`Knowledge base "${knowledgeBaseId}" already belongs to ${owner === undefined ? 'something that is not a memory base' : `memory base "${owner}"`}; give this memory base another knowledge base ID`,
		);
	}
}

/**
 * A write reached an index that was moved to the partitioned layout (its base is being, or was,
 * upgraded): the writer looks up the layout again and writes to the partitions.
 */
export class IndexMovedError extends MemoryError {
	constructor(readonly index: string) {
		super(`The index "${index}" was moved to the partitioned layout: write to its partitions.`);
	}
}

/**
 * An index partition whose manifest names another owner than the one asked for: two IDs would share
 * one partition. Refused, so one user's search never reads another's chunks.
 */
export class PartitionOwnerError extends MemoryError {
	constructor(readonly key: string) {
		super(
			`The index partition at "${key}" belongs to another user or conversation than the one asked for; it is left as it is. Run Regenerate to rebuild the index.`,
		);
	}
}
