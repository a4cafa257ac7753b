// The Memory Base's keys: the folders of a base and of its knowledge base, a base's configuration,
// leases and per-conversation capture logs, its knowledge base's metadata, and the keys of the embedded
// vector index (the index room is handed its folders and never builds keys itself).
import { InvalidIdError } from '../errors';
import { validateId, validateKeyPrefix } from '../keys/ids';

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

/** Folder of a base's lexical index partitions: `{prefix}memory_base/{base_id}/parts/`. */
export function lexicalPartsPrefix(baseId: string, prefix?: string): string {
	return `${memoryBasePrefix(baseId, prefix)}parts/`;
}

/** Folder of a knowledge base's vector index partitions: `{prefix}knowledge_base/{kb_id}/parts/`. */
export function vectorPartsPrefix(kbId: string, prefix?: string): string {
	return `${knowledgeBasePrefix(kbId, prefix)}parts/`;
}

/**
 * One partition's folder below those: `{hash[0..2]}/{hash}/`, the hash (32 hex digits of SHA-256) of
 * its owner, so no ID ever becomes a key; each manifest names its owner, checked on every read.
 */
export function partitionFolder(hash: string): string {
	if (!/^[0-9a-f]{32}$/.test(hash)) throw new InvalidIdError('partition', hash);
	return `${hash.slice(0, 2)}/${hash}/`;
}

/** Folder of a base's base-wide word index (every conversation's chunks): `{prefix}memory_base/{base_id}/wide/lexical/`. */
export function wideLexicalPrefix(baseId: string, prefix?: string): string {
	return `${memoryBasePrefix(baseId, prefix)}wide/lexical/`;
}

/** Folder of a knowledge base's base-wide vector index: `{prefix}knowledge_base/{kb_id}/wide/index/`. */
export function wideVectorPrefix(kbId: string, prefix?: string): string {
	return `${knowledgeBasePrefix(kbId, prefix)}wide/index/`;
}

/**
 * One shard of the base's partition registry (which partitions were made, by hash):
 * `{prefix}memory_base/{base_id}/registry/{hash[0..2]}.json`.
 */
export function registryKey(baseId: string, shard: string, prefix?: string): string {
	if (!/^[0-9a-f]{2}$/.test(shard)) throw new InvalidIdError('registry shard', shard);
	return `${memoryBasePrefix(baseId, prefix)}registry/${shard}.json`;
}

/** The base's configuration (compare-and-swap): `{prefix}memory_base/{base_id}/config.json`. */
export function memoryBaseConfigKey(baseId: string, prefix?: string): string {
	return `${memoryBasePrefix(baseId, prefix)}config.json`;
}

/** The lock of a whole-base sync (regenerate, delete): `{prefix}memory_base/{base_id}/lease.json`. */
export function memoryBaseLeaseKey(baseId: string, prefix?: string): string {
	return `${memoryBasePrefix(baseId, prefix)}lease.json`;
}

/** Folder of every session: `{prefix}memory_base/{base_id}/sessions/`. */
export function memoryBaseSessionsPrefix(baseId: string, prefix?: string): string {
	return `${memoryBasePrefix(baseId, prefix)}sessions/`;
}

/** Folder of one session: `{prefix}memory_base/{base_id}/sessions/{session_id}/`. */
export function memoryBaseSessionPrefix(
	baseId: string,
	sessionId: string,
	prefix?: string,
): string {
	return `${memoryBaseSessionsPrefix(baseId, prefix)}${validateId('session_id', sessionId)}/`;
}

/** A session's capture log with its cursor and counters (compare-and-swap): `…/sessions/{session_id}/log.json`. */
export function captureLogKey(baseId: string, sessionId: string, prefix?: string): string {
	return `${memoryBaseSessionPrefix(baseId, sessionId, prefix)}log.json`;
}

/** The lock of a session's sync: `…/sessions/{session_id}/lease.json`. */
export function sessionLeaseKey(baseId: string, sessionId: string, prefix?: string): string {
	return `${memoryBaseSessionPrefix(baseId, sessionId, prefix)}lease.json`;
}

const SEQ_LIMIT = 9_999_999_999;

/**
 * A write-once block of processed messages moved out of the log:
 * `…/sessions/{session_id}/sealed/{first seq, 10 digits}-{last seq, 10 digits}-{random}.json`.
 */
export function captureSealedKey(
	baseId: string,
	sessionId: string,
	first: number,
	last: number,
	random: string,
	prefix?: string,
): string {
	if (!(Number.isSafeInteger(first) && first >= 1 && last >= first && last <= SEQ_LIMIT))
		throw new InvalidIdError('sealed range', `${first}-${last} is not a range of message numbers`);
	if (!/^[0-9a-f]{8,64}$/.test(random)) throw new InvalidIdError('sealed object name', random);
	const pad = (n: number) => String(n).padStart(10, '0');
	return `${memoryBaseSessionPrefix(baseId, sessionId, prefix)}sealed/${pad(first)}-${pad(last)}-${random}.json`;
}

/** A knowledge base's metadata (`is_memory_base` among it): `{prefix}knowledge_base/{kb_id}/embedding_metadata.json`. */
export function knowledgeBaseMetadataKey(kbId: string, prefix?: string): string {
	return `${knowledgeBasePrefix(kbId, prefix)}embedding_metadata.json`;
}
