// What a search reads ahead of its configuration: once the process has read the configuration, the
// manifests and the metadata a search opens with are read beside the configuration's own conditional
// read instead of after it (on a remote store, one round trip fewer), into the search's reads, which
// it keeps only if the configuration read is the one guessed on.
import { SearchReads } from '../indexes';
import type { ChunkFilter } from '../indexes';
import type { Versioned } from '../store/document-store';
import { BaseIndexes } from './base-indexes';
import { knowledgeBaseMetadataKey } from './keys';
import type { BaseParts } from './parts';
import { partsOfFilter } from './partitions';
import type { KnowledgeBaseMetadata, MemoryBaseConfig } from './records';
import type { SearchMode } from './types';

/** The knowledge base's metadata (its model, where its vectors are): the search's read of it. */
export function metadataOf(
	p: BaseParts,
	indexes: BaseIndexes,
): Promise<Versioned<KnowledgeBaseMetadata>> {
	const key = knowledgeBaseMetadataKey(indexes.kbId, p.keyPrefix);
	const read = () => p.metadata.read(key);
	return indexes.reads ? indexes.reads.once(key, read) : read();
}

/**
 * Reads what a search of `filter` opens with (the manifests in scope, the metadata) into its reads,
 * where they are found without a listing (partitioned bases only: every partition of a base whose
 * base-wide index is not built is found by listing, and nothing is read ahead then).
 */
async function readFirstReads(
	p: BaseParts,
	indexes: BaseIndexes,
	filter: ChunkFilter,
	mode: SearchMode,
): Promise<void> {
	if (indexes.kind !== 'partitioned') return;
	if (partsOfFilter(filter, []) === null && indexes.wide !== 'ready') return;
	const vectors = mode !== 'lexical';
	const words = mode !== 'vector' ? await indexes.lexicalFor(filter) : [];
	const embedded = vectors && !p.options.vectorStore ? await indexes.vectorsFor(filter) : [];
	await Promise.all([
		...(vectors ? [metadataOf(p, indexes)] : []),
		...[...words, ...embedded].map((i) => i.readManifest()),
	]);
}

/**
 * Starts a search's first reads on the configuration as this process last read it (nothing for a
 * search of one conversation, which reads its log before any manifest); returns the reads a search on
 * `config` uses: those, if `config` is the configuration guessed on, else new ones.
 */
export function readAhead(p: BaseParts, filter: ChunkFilter, mode: SearchMode) {
	const guess = filter.sessionId === undefined ? p.cachedConfig() : undefined;
	const reads = new SearchReads();
	if (guess)
		BaseIndexes.open(p, guess, reads)
			.then((indexes) => readFirstReads(p, indexes, filter, mode))
			// A failed read is the search's own when it uses it (one held in its reads).
			.catch(() => undefined);
	return (config: MemoryBaseConfig | null) =>
		guess !== undefined && config === guess ? reads : new SearchReads();
}
