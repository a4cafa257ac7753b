// The folders of a Memory Base and of its knowledge base, and the keys of the embedded vector index
// under the latter. The index code (vector and lexical) builds its keys from these without importing
// knowledge/, whose own keys (configuration, leases, capture logs) are in knowledge/keys.ts; chat
// memory's keys are in history/keys.ts, versioned data's in snapshots/keys.ts.
import { InvalidIdError } from '../errors';
import { validateId, validateKeyPrefix } from './ids';

export const MEMORY_BASE_ROOT = 'memory_base';
export const KNOWLEDGE_BASE_ROOT = 'knowledge_base';

/** Folder of everything a memory base keeps besides its knowledge base: `{prefix}memory_base/{base_id}/`. */
export function memoryBasePrefix(baseId: string, prefix?: string): string {
	return (
		validateKeyPrefix('key prefix', prefix) +
		`${MEMORY_BASE_ROOT}/${validateId('memory_base_id', baseId)}/`
	);
}

/** Folder of a knowledge base: `{prefix}knowledge_base/{kb_id}/`. */
export function knowledgeBasePrefix(kbId: string, prefix?: string): string {
	return (
		validateKeyPrefix('key prefix', prefix) +
		`${KNOWLEDGE_BASE_ROOT}/${validateId('knowledge_base_id', kbId)}/`
	);
}

/** Folder of a knowledge base's embedded vector index: `{prefix}knowledge_base/{kb_id}/index/`. */
export function vectorIndexPrefix(kbId: string, prefix?: string): string {
	return `${knowledgeBasePrefix(kbId, prefix)}index/`;
}

/** The index's list of segments (compare-and-swap): `…/index/manifest.json`. */
export function vectorManifestKey(kbId: string, prefix?: string): string {
	return `${vectorIndexPrefix(kbId, prefix)}manifest.json`;
}

/** Folder of the index's segments: `…/index/segments/`. */
export function vectorSegmentsPrefix(kbId: string, prefix?: string): string {
	return `${vectorIndexPrefix(kbId, prefix)}segments/`;
}

/** A write-once segment of vectors and their chunks: `…/index/segments/{random}.vec`. */
export function vectorSegmentKey(kbId: string, random: string, prefix?: string): string {
	if (!/^[0-9a-f]{8,64}$/.test(random)) throw new InvalidIdError('segment name', random);
	return `${vectorSegmentsPrefix(kbId, prefix)}${random}.vec`;
}
