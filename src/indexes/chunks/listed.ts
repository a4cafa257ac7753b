// Which segments a manifest lists that storage no longer holds: one listing of the segments folder.
import type { MemoryStorage } from '../../store/storage';

/** The keys of `refs` not among the objects under `prefix`. */
export async function missingFrom(
	storage: MemoryStorage,
	prefix: string,
	refs: ReadonlyArray<{ key: string }>,
): Promise<string[]> {
	if (refs.length === 0) return [];
	const present = new Set((await storage.list(prefix)).map((o) => o.key));
	return refs.filter((r) => !present.has(r.key)).map((r) => r.key);
}
