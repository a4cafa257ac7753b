// Segments as a manifest lists them: which ones storage no longer holds (one listing of the segments
// folder), and whether one read is the one listed.
import { CorruptDocumentError } from '../../errors';
import { forEachListed } from '../../store/storage';
import type { MemoryStorage } from '../../store/storage';

/** What a manifest says of a segment it lists (both indexes' refs have these). */
export interface ListedSegment {
	key: string;
	/** Chunks stored in it. */
	count: number;
	/** Its stored size. */
	bytes: number;
}

/**
 * Checks that a segment read holds the chunks (and, read from storage now, the bytes) its listing
 * says: a segment replaced by another, valid one (another segment's object copied over it) would
 * otherwise count some chunks twice and lose others without a word.
 */
export function checkListed(ref: ListedSegment, chunks: number, bytes?: number): void {
	if (chunks !== ref.count || (bytes !== undefined && bytes !== ref.bytes))
		throw new CorruptDocumentError(
			ref.key,
			`it holds ${chunks} chunks${bytes === undefined ? '' : ` in ${bytes} bytes`}, but its manifest lists ${ref.count}${bytes === undefined ? '' : ` in ${ref.bytes} bytes`}`,
		);
}

/** The keys of `refs` not among the objects under `prefix`. */
export async function missingFrom(
	storage: MemoryStorage,
	prefix: string,
	refs: ReadonlyArray<{ key: string }>,
): Promise<string[]> {
	if (refs.length === 0) return [];
	// Only the keys listed are held, not the listing (a base-wide index keeps tens of thousands).
	const unseen = new Set(refs.map((r) => r.key));
	await forEachListed(storage, prefix, (o) => {
		unseen.delete(o.key);
	});
	return refs.filter((r) => unseen.has(r.key)).map((r) => r.key);
}
