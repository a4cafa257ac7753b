// Hooks for tests and benchmarks only: nothing in the engine depends on them.
import { CANDIDATE_LIMITS } from './indexes/lexical/candidates';
import { documentCache } from './store/document-cache';

export { clearAllCaches } from './common/bounded-cache';
export { tokenizerStats } from './tokens/tokens';

/** Empties the process-wide document cache (benchmarks of cold reads, tests). */
export function clearDocumentCache(): void {
	documentCache.clear();
}

/** Sets how much a streamed word search may note while taking its statistics; returns the limits before. */
export function setCandidateLimits(
	limits: Partial<typeof CANDIDATE_LIMITS>,
): typeof CANDIDATE_LIMITS {
	const before = { ...CANDIDATE_LIMITS };
	Object.assign(CANDIDATE_LIMITS, limits);
	return before;
}
