// The Memory Base's keys: a base's configuration, leases and per-conversation capture logs, and its
// knowledge base's metadata. The folders of a base and of its knowledge base, and the index keys under
// them, come from keys/layout.ts, which the index code shares.
import { InvalidIdError } from '../errors';
import { validateId } from '../keys/ids';
import { knowledgeBasePrefix, memoryBasePrefix } from '../keys/layout';

export {
	KNOWLEDGE_BASE_ROOT,
	knowledgeBasePrefix,
	MEMORY_BASE_ROOT,
	memoryBasePrefix,
} from '../keys/layout';

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
