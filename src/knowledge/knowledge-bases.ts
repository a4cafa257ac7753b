// Knowledge bases on a storage, as general retrieval sees them: those a memory base created are left out.
import { CorruptDocumentError } from '../errors';
import { validateKeyPrefix } from '../keys/ids';
import { KNOWLEDGE_BASE_ROOT } from './keys';
import { DocumentStore } from '../store/document-store';
import { folderNames } from '../store/storage';
import type { MemoryStorage } from '../store/storage';
import { metadataCodec } from './records';
import type { KnowledgeBaseMetadata } from './records';

export interface ListKnowledgeBasesOptions {
	keyPrefix?: string;
	/**
	 * "retrieval" (default): what general retrieval may search, so knowledge bases flagged
	 * `is_memory_base` (a Memory Base's own) are left out. "all": every knowledge base, for listings.
	 */
	purpose?: 'retrieval' | 'all';
}

/**
 * The knowledge bases stored under `{prefix}knowledge_base/`, by ID. A Memory Base's knowledge base is
 * flagged `is_memory_base: true` and hidden from retrieval, so general retrieval never mixes a base's
 * captured conversations into its answers (it stays in the full listing, and the base's own Search
 * reads it). An unreadable metadata object is skipped.
 */
export async function listKnowledgeBases(
	storage: MemoryStorage,
	options: ListKnowledgeBasesOptions = {},
): Promise<KnowledgeBaseMetadata[]> {
	const root = `${validateKeyPrefix('key prefix', options.keyPrefix)}${KNOWLEDGE_BASE_ROOT}/`;
	const store = new DocumentStore(storage, metadataCodec);
	// Each folder's metadata is read (a folder without is skipped): never a listing of every key.
	const keys = (await folderNames(storage, root)).map(
		(id) => `${root}${id}/embedding_metadata.json`,
	);
	const out: KnowledgeBaseMetadata[] = [];
	for (const key of keys) {
		try {
			const { doc, version } = await store.read(key);
			if (version === null) continue;
			if (options.purpose !== 'all' && doc.is_memory_base) continue;
			out.push(doc);
		} catch (error) {
			if (!(error instanceof CorruptDocumentError)) throw error;
		}
	}
	return out;
}
