// Hooks for tests and benchmarks only: nothing in the engine depends on them.
import { documentCache } from './store/document-cache';

export { clearAllCaches } from './common/bounded-cache';
export { tokenizerStats } from './tokens/tokens';

/** Empties the process-wide document cache (benchmarks of cold reads, tests). */
export function clearDocumentCache(): void {
	documentCache.clear();
}
