// A base's settings and its knowledge base's metadata: created on first use, changed by compare-and-swap.
import {
	DimensionMismatchError,
	InvalidOptionError,
	KnowledgeBaseInUseError,
	MemoryBaseDeletingError,
} from '../errors';
import { BaseIndexes } from './base-indexes';
import { knowledgeBaseMetadataKey } from './keys';
import { checkPositiveInt } from './parts';
import type { BaseParts } from './parts';
import type { KnowledgeBaseMetadata, MemoryBaseConfig } from './records';
import { DEFAULT_THRESHOLD } from './types';

/**
 * Creates the base (and its knowledge base, flagged is_memory_base) when missing, or changes its
 * settings. `expiring` marks, once and for good, a base where some capture has an Expire After rule
 * (searches of other bases never read capture logs). Costs one conditional read when nothing changes. A new threshold is only compared with
 * the pending count at the next capture: nothing is ingested because of the change itself, and a
 * running sync keeps the range it took.
 */
export async function configure(
	p: BaseParts,
	settings: { threshold?: number; autoCapture?: boolean; expiring?: boolean } = {},
): Promise<MemoryBaseConfig> {
	if (settings.threshold !== undefined) checkPositiveInt('threshold', settings.threshold);
	let created = false;
	const result = await p.configs.update(p.configKey, (cur) => {
		const now = new Date().toISOString();
		if (cur.version === null) {
			created = true;
			return {
				base_id: p.baseId,
				kb_id: p.options.knowledgeBaseId ?? p.baseId,
				threshold: settings.threshold ?? p.options.threshold ?? DEFAULT_THRESHOLD,
				auto_capture: settings.autoCapture ?? p.options.autoCapture ?? true,
				created_at: now,
				updated_at: now,
				lexical_since: now,
				layout: 'partitioned',
				wide: { state: 'ready', since: now },
				...(settings.expiring ? { expiring: true } : {}),
			};
		}
		if (cur.doc.deleting) throw new MemoryBaseDeletingError(p.baseId);
		const threshold = settings.threshold ?? cur.doc.threshold;
		const auto = settings.autoCapture ?? cur.doc.auto_capture;
		const expiring = cur.doc.expiring === true || settings.expiring === true;
		if (
			threshold === cur.doc.threshold &&
			auto === cur.doc.auto_capture &&
			expiring === (cur.doc.expiring === true)
		)
			return undefined;
		return {
			...cur.doc,
			threshold,
			auto_capture: auto,
			updated_at: now,
			...(expiring ? { expiring } : {}),
		};
	});
	const config = result.current.doc;
	// Each partition is made by its first write; the base-wide word index is made now, so that from
	// then on a missing one is a lost one.
	if (created)
		await Promise.all([
			ensureKnowledgeBase(p, config.kb_id),
			(await BaseIndexes.open(p, config)).wideLexical().ensure(),
		]);
	return config;
}

/** Records that the lexical index holds every capture from now on (after Regenerate rebuilt it). */
export async function markLexical(p: BaseParts, since: string): Promise<void> {
	await p.configs.update(p.configKey, (cur) =>
		cur.version === null || cur.doc.lexical_since !== undefined
			? undefined
			: { ...cur.doc, lexical_since: since, updated_at: since },
	);
}

/** The knowledge base's metadata, created when missing; refused when it belongs to something else. */
export async function ensureKnowledgeBase(
	p: BaseParts,
	kbId: string,
): Promise<KnowledgeBaseMetadata> {
	const key = knowledgeBaseMetadataKey(kbId, p.keyPrefix);
	const result = await p.metadata.update(key, (cur) => {
		if (cur.version !== null) {
			if (!cur.doc.is_memory_base || cur.doc.memory_base_id !== p.baseId)
				throw new KnowledgeBaseInUseError(
					kbId,
					cur.doc.is_memory_base ? cur.doc.memory_base_id : undefined,
				);
			return undefined;
		}
		const now = new Date().toISOString();
		return {
			kb_id: kbId,
			is_memory_base: true,
			memory_base_id: p.baseId,
			vector_store: p.vectorStoreKind,
			dimensions: null,
			chunk_size: p.chunkSize,
			chunk_overlap: p.chunkOverlap,
			created_at: now,
			updated_at: now,
		};
	});
	return result.current.doc;
}

/**
 * Where a base keeps its vectors is where its first embedding after creation or Regenerate went: the
 * embedded index, or the vector store connected then. A node that would embed or search them in the
 * other place gets this error (a sync would split the base's vectors between two places).
 */
export function vectorsElsewhere(p: BaseParts, kept: 'embedded' | 'external'): InvalidOptionError {
	return new InvalidOptionError(
		'vectorStore',
		kept === 'external'
			? `memory base "${p.baseId}" keeps its vectors in a connected vector store, but none is connected here: connect that store (Memory Base, Memory Base Tool), or match words only here (no embedding model, or Search Mode Lexical). Regenerate without a store moves the vectors into the embedded index`
			: `memory base "${p.baseId}" keeps its vectors in its embedded index, but a vector store is connected here: disconnect it, or run Regenerate with it connected to move the vectors into it`,
	);
}

/**
 * Records the vector dimensions (first ingestion); other dimensions than recorded are refused, and so
 * is embedding into another place than the base keeps its vectors in (until Regenerate).
 */
export async function recordDimensions(
	p: BaseParts,
	kbId: string,
	dimensions: number,
	reset = false,
): Promise<void> {
	const key = knowledgeBaseMetadataKey(kbId, p.keyPrefix);
	await p.metadata.update(key, (cur) => {
		if (cur.version === null) return undefined;
		if (cur.doc.dimensions === dimensions && cur.doc.vector_store === p.vectorStoreKind)
			return undefined;
		if (!reset && cur.doc.dimensions !== null && cur.doc.vector_store !== p.vectorStoreKind)
			throw vectorsElsewhere(p, cur.doc.vector_store);
		if (!reset && cur.doc.dimensions !== null && cur.doc.dimensions !== dimensions)
			throw new DimensionMismatchError(kbId, cur.doc.dimensions, dimensions);
		return {
			...cur.doc,
			dimensions,
			vector_store: p.vectorStoreKind,
			updated_at: new Date().toISOString(),
		};
	});
}
