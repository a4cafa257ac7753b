// Before a search answers: are the indexes it reads there, and do they hold what the capture logs say
// they should? A search of a missing or lagging index would return too little without saying so.
import { IndexMismatchError } from '../errors';
import type { ChunkFilter } from '../indexes';
import { knowledgeBaseMetadataKey } from './keys';
import type { BaseParts } from './parts';
import { vectorsElsewhere } from './settings';
import type { MemoryBaseConfig } from './records';
import type { SearchMode } from './types';

/** Throws IndexMismatchError when an index the search needs is missing or behind its capture log. */
export async function checkIndexes(
	p: BaseParts,
	config: MemoryBaseConfig | null,
	kbId: string,
	mode: SearchMode,
	filter: ChunkFilter,
): Promise<void> {
	if (!config) return; // nothing was ever captured: an empty answer is the truth
	const lexicalNeeded = mode !== 'vector';
	const vectorsNeeded = mode !== 'lexical';
	const vectorNeeded = vectorsNeeded && !p.options.vectorStore;
	if (lexicalNeeded && config.lexical_since === undefined)
		throw new IndexMismatchError(
			p.baseId,
			'it was created before captures went into a lexical index, so that index does not hold its older captures',
		);
	// Independent reads, side by side: a search waits for one round of them, not four.
	const [session, lexical, meta, manifest] = await Promise.all([
		filter.sessionId === undefined ? undefined : p.logs.read(p.logKey(filter.sessionId)),
		lexicalNeeded ? p.lexical().readManifest() : undefined,
		vectorsNeeded ? p.metadata.read(knowledgeBaseMetadataKey(kbId, p.keyPrefix)) : undefined,
		vectorNeeded ? p.index(kbId).readManifest() : undefined,
	]);
	if (lexical && lexical.version === null)
		throw new IndexMismatchError(p.baseId, 'its lexical index is missing');
	if (meta?.version != null && meta.doc.dimensions !== null)
		if (meta.doc.vector_store !== p.vectorStoreKind)
			throw vectorsElsewhere(p, meta.doc.vector_store);
	if (!meta || !manifest) return;
	const ingested = meta.version !== null && meta.doc.dimensions !== null;
	if (ingested && manifest.version === null)
		throw new IndexMismatchError(
			p.baseId,
			'metadata says messages were embedded, but the vector index is missing',
		);
	const log = session?.doc;
	if (log && log.total_processed > 0) {
		const listed =
			manifest.version !== null &&
			manifest.doc.segments.some((s) => s.sessions.includes(log.session_id));
		if (!listed)
			throw new IndexMismatchError(
				p.baseId,
				`conversation "${log.session_id}" has ${log.total_processed} message(s) marked indexed, but the vector index holds none of them`,
			);
	}
}
