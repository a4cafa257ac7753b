import { InvalidIdError } from '../errors';
import { validateBranchName, validateId, validateKeyPrefix } from './ids';

export const NODE_MEMORY_ROOT = 'node_memory';
export const CONVERSATION_MEMORY_ROOT = 'conversation_memory';
export const FILES_ROOT = 'memory_files';
export const VERSIONED_DATA_ROOT = 'versioned_data';
export const MEMORY_BASE_ROOT = 'memory_base';
export const KNOWLEDGE_BASE_ROOT = 'knowledge_base';
/** Version numbers are zero-padded to 10 digits in keys, so key order is number order. */
export const MAX_VERSION_NUMBER = 9_999_999_999;

/** `{prefix}node_memory/{app_id}/{conversation_id}/{node_id}.json` */
export function nodeMemoryKey(
	appId: string,
	conversationId: string,
	nodeId: string,
	prefix?: string,
): string {
	return `${conversationNodesPrefix(appId, conversationId, prefix)}${validateId('node_id', nodeId)}.json`;
}

/** Folder of a conversation's node documents: `{prefix}node_memory/{app_id}/{conversation_id}/`. */
export function conversationNodesPrefix(
	appId: string,
	conversationId: string,
	prefix?: string,
): string {
	return (
		validateKeyPrefix('key prefix', prefix) +
		`${NODE_MEMORY_ROOT}/${validateId('app_id', appId)}/${validateId('conversation_id', conversationId)}/`
	);
}

/** `{prefix}conversation_memory/{app_id}/{conversation_id}.json` */
export function conversationMemoryKey(
	appId: string,
	conversationId: string,
	prefix?: string,
): string {
	return (
		validateKeyPrefix('key prefix', prefix) +
		`${CONVERSATION_MEMORY_ROOT}/${validateId('app_id', appId)}/${validateId('conversation_id', conversationId)}.json`
	);
}

/** Folder of a conversation's copied files: `{prefix}memory_files/{app_id}/{conversation_id}/`. */
export function conversationFilesPrefix(
	appId: string,
	conversationId: string,
	prefix?: string,
): string {
	return (
		validateKeyPrefix('key prefix', prefix) +
		`${FILES_ROOT}/${validateId('app_id', appId)}/${validateId('conversation_id', conversationId)}/`
	);
}

/** Folder of a conversation's versioned data: `{prefix}versioned_data/{app_id}/{conversation_id}/`. */
export function versionedDataPrefix(
	appId: string,
	conversationId: string,
	prefix?: string,
): string {
	return (
		validateKeyPrefix('key prefix', prefix) +
		`${VERSIONED_DATA_ROOT}/${validateId('app_id', appId)}/${validateId('conversation_id', conversationId)}/`
	);
}

/** Whether `n` can be a version number (a positive integer of at most 10 digits). */
export function isVersionNumber(n: unknown): n is number {
	return Number.isSafeInteger(n) && (n as number) >= 1 && (n as number) <= MAX_VERSION_NUMBER;
}

/** Write-once version object: `{prefix}versioned_data/{app_id}/{conversation_id}/versions/{n, 10 digits}.json`. */
export function versionKey(
	appId: string,
	conversationId: string,
	version: number,
	prefix?: string,
): string {
	if (!isVersionNumber(version))
		throw new InvalidIdError(
			'version',
			`must be an integer from 1 to ${MAX_VERSION_NUMBER}, got ${String(version)}`,
		);
	return `${versionedDataPrefix(appId, conversationId, prefix)}versions/${String(version).padStart(10, '0')}.json`;
}

/** Head of a branch (compare-and-swap): `{prefix}versioned_data/{app_id}/{conversation_id}/branches/{branch}.json`. */
export function branchKey(
	appId: string,
	conversationId: string,
	branch: string,
	prefix?: string,
): string {
	return `${versionedDataPrefix(appId, conversationId, prefix)}branches/${validateBranchName(branch)}.json`;
}

/** Next-number hint of a conversation's versions: `{prefix}versioned_data/{app_id}/{conversation_id}/counter.json`. */
export function versionCounterKey(appId: string, conversationId: string, prefix?: string): string {
	return `${versionedDataPrefix(appId, conversationId, prefix)}counter.json`;
}

// ── Memory Base (src/knowledge) ────────────────────────────────────────────────────────────────

/** Folder of everything a memory base keeps besides its knowledge base: `{prefix}memory_base/{base_id}/`. */
export function memoryBasePrefix(baseId: string, prefix?: string): string {
	return (
		validateKeyPrefix('key prefix', prefix) +
		`${MEMORY_BASE_ROOT}/${validateId('memory_base_id', baseId)}/`
	);
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

/** Folder of a knowledge base: `{prefix}knowledge_base/{kb_id}/`. */
export function knowledgeBasePrefix(kbId: string, prefix?: string): string {
	return (
		validateKeyPrefix('key prefix', prefix) +
		`${KNOWLEDGE_BASE_ROOT}/${validateId('knowledge_base_id', kbId)}/`
	);
}

/** A knowledge base's metadata (`is_memory_base` among it): `{prefix}knowledge_base/{kb_id}/embedding_metadata.json`. */
export function knowledgeBaseMetadataKey(kbId: string, prefix?: string): string {
	return `${knowledgeBasePrefix(kbId, prefix)}embedding_metadata.json`;
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

/** Every key prefix under which an app's memory lives. */
export function appPrefixes(appId: string, prefix?: string): string[] {
	const p = validateKeyPrefix('key prefix', prefix);
	const app = validateId('app_id', appId);
	return [
		`${p}${NODE_MEMORY_ROOT}/${app}/`,
		`${p}${CONVERSATION_MEMORY_ROOT}/${app}/`,
		`${p}${FILES_ROOT}/${app}/`,
		`${p}${VERSIONED_DATA_ROOT}/${app}/`,
	];
}

/**
 * Folder of the sealed objects (write-once segments and indexes) of one memory document:
 * `…/{conversation_id}.json` → `…/{conversation_id}.log/`.
 */
export function sealedPrefix(headKey: string): string {
	if (!headKey.endsWith('.json'))
		throw new InvalidIdError('memory key', `${JSON.stringify(headKey)} does not end in ".json"`);
	return `${headKey.slice(0, -5)}.log/`;
}

const SUMMARIES_NAME = 'summaries.json';

/**
 * The summaries of older turns of one memory document (compare-and-swap), beside its sealed objects:
 * `…/{conversation_id}.json` → `…/{conversation_id}.log/summaries.json`.
 */
export function summariesKey(headKey: string): string {
	return `${sealedPrefix(headKey)}${SUMMARIES_NAME}`;
}

/** File name of a sealed object: `{level}-{ordinal of its first message}-{random}.json`. */
const SEALED_NAME = /^(\d+)-(\d+)-([0-9a-f]{8,64})\.json$/;

/** Key of a new sealed object of `headKey`: level 0 is a segment of messages, higher levels are indexes. */
export function sealedKey(
	headKey: string,
	level: number,
	firstOrdinal: number,
	random: string,
): string {
	const key = `${sealedPrefix(headKey)}${level}-${String(firstOrdinal).padStart(10, '0')}-${random}.json`;
	if (!SEALED_NAME.test(key.slice(key.lastIndexOf('/') + 1)))
		throw new InvalidIdError('sealed object name', key);
	return key;
}

/** Whether `key` names a sealed object of `headKey` (what a head may reference). */
export function isSealedKeyOf(headKey: string, key: string): boolean {
	const prefix = sealedPrefix(headKey);
	return key.startsWith(prefix) && SEALED_NAME.test(key.slice(prefix.length));
}

/** What a memory key says about itself; undefined for keys that are not memory documents. */
export interface ParsedKey {
	/**
	 * `node` and `conversation` are memory documents (heads); `sealed` is a write-once segment or index
	 * of one (see `scope` and `headKey`); `file` is a copied file. Versioned data: `version` is a
	 * write-once version object (see `version`), `branch` a branch head (see `branch`), `version_counter`
	 * the conversation's next-number hint. `summary` holds a document's summaries of older turns (see
	 * `scope` and `headKey`).
	 */
	kind:
		| 'node'
		| 'conversation'
		| 'file'
		| 'sealed'
		| 'summary'
		| 'version'
		| 'branch'
		| 'version_counter';
	appId: string;
	conversationId: string;
	nodeId?: string;
	/** Sealed objects and summaries: the scope of the document they belong to. */
	scope?: 'node' | 'conversation';
	/** Sealed objects and summaries: the key of the document they belong to. */
	headKey?: string;
	/** Version objects: the version number. */
	version?: number;
	/** Branch heads: the branch name. */
	branch?: string;
}

const VERSION_NAME = /^(\d{10})\.json$/;

export function parseKey(key: string, prefix?: string): ParsedKey | undefined {
	const p = validateKeyPrefix('key prefix', prefix);
	if (!key.startsWith(p)) return undefined;
	const parts = key.slice(p.length).split('/');
	if (parts[0] === NODE_MEMORY_ROOT && parts.length === 4 && parts[3].endsWith('.json'))
		return {
			kind: 'node',
			appId: parts[1],
			conversationId: parts[2],
			nodeId: parts[3].slice(0, -5),
		};
	if (parts[0] === CONVERSATION_MEMORY_ROOT && parts.length === 3 && parts[2].endsWith('.json'))
		return { kind: 'conversation', appId: parts[1], conversationId: parts[2].slice(0, -5) };
	if (parts[0] === FILES_ROOT && parts.length === 4)
		return { kind: 'file', appId: parts[1], conversationId: parts[2] };
	if (parts[0] === VERSIONED_DATA_ROOT) {
		const [, appId, conversationId, folder, name] = parts;
		if (parts.length === 4 && folder === 'counter.json')
			return { kind: 'version_counter', appId, conversationId };
		const number = parts.length === 5 && folder === 'versions' ? VERSION_NAME.exec(name) : null;
		if (number && isVersionNumber(Number(number[1])))
			return { kind: 'version', appId, conversationId, version: Number(number[1]) };
		if (parts.length === 5 && folder === 'branches' && name.endsWith('.json') && name.length > 5)
			return { kind: 'branch', appId, conversationId, branch: name.slice(0, -5) };
		return undefined;
	}
	const name = parts[parts.length - 1];
	const kind = SEALED_NAME.test(name) ? 'sealed' : name === SUMMARIES_NAME ? 'summary' : undefined;
	if (kind && parts[0] === NODE_MEMORY_ROOT && parts.length === 5 && parts[3].endsWith('.log')) {
		const nodeId = parts[3].slice(0, -4);
		return {
			kind,
			scope: 'node',
			appId: parts[1],
			conversationId: parts[2],
			nodeId,
			headKey: `${p}${parts.slice(0, 3).join('/')}/${nodeId}.json`,
		};
	}
	if (
		kind &&
		parts[0] === CONVERSATION_MEMORY_ROOT &&
		parts.length === 4 &&
		parts[2].endsWith('.log')
	) {
		const conversationId = parts[2].slice(0, -4);
		return {
			kind,
			scope: 'conversation',
			appId: parts[1],
			conversationId,
			headKey: `${p}${parts[0]}/${parts[1]}/${conversationId}.json`,
		};
	}
	return undefined;
}
