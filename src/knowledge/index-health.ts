// Before a search answers: are the indexes it reads there, and do they hold what the capture logs say
// they should? A search of a missing or lagging index would return too little without saying so.
import { IndexMismatchError } from '../errors';
import { knowledgeBaseMetadataKey } from '../keys/layout';
import type { ChunkFilter } from './filter';
import type { BaseParts } from './parts';
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
	const session =
		filter.sessionId === undefined
			? undefined
			: (await p.logs.read(p.logKey(filter.sessionId))).doc;
	if (mode !== 'vector') {
		if (config.lexical_since === undefined)
			throw new IndexMismatchError(
				p.baseId,
				'it was created before captures went into a lexical index, so that index does not hold its older captures',
			);
		const lexical = await p.lexical().readManifest();
		if (lexical.version === null)
			throw new IndexMismatchError(p.baseId, 'its lexical index is missing');
	}
	if (mode === 'lexical' || p.options.vectorStore) return;
	const meta = await p.metadata.read(knowledgeBaseMetadataKey(kbId, p.keyPrefix));
	const ingested = meta.version !== null && meta.doc.dimensions !== null;
	const manifest = await p.index(kbId).readManifest();
	if (ingested && manifest.version === null)
		throw new IndexMismatchError(
			p.baseId,
			'metadata says messages were embedded, but the vector index is missing',
		);
	if (session && session.total_processed > 0) {
		const listed =
			manifest.version !== null &&
			manifest.doc.segments.some((s) => s.sessions.includes(session.session_id));
		if (!listed)
			throw new IndexMismatchError(
				p.baseId,
				`conversation "${session.session_id}" has ${session.total_processed} message(s) marked indexed, but the vector index holds none of them`,
			);
	}
}
