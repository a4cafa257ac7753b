// The sealed log's own keys (message-log.ts): the write-once segments and indexes of a long memory
// document live in a folder beside it, named after it, so they go wherever the document goes.
import { InvalidIdError } from '../errors';

/**
 * Folder of the sealed objects (write-once segments and indexes) of one memory document:
 * `…/{conversation_id}.json` → `…/{conversation_id}.log/`.
 */
export function sealedPrefix(headKey: string): string {
	if (!headKey.endsWith('.json'))
		throw new InvalidIdError('memory key', `${JSON.stringify(headKey)} does not end in ".json"`);
	return `${headKey.slice(0, -5)}.log/`;
}

/** File name of a sealed object: `{level}-{ordinal of its first message}-{random}.json`. */
const SEALED_NAME = /^(\d+)-(\d+)-([0-9a-f]{8,64})\.json$/;

/** Whether a file name (the last segment of a key) is a sealed object's. */
export function isSealedName(name: string): boolean {
	return SEALED_NAME.test(name);
}

/** Key of a new sealed object of `headKey`: level 0 is a segment of messages, higher levels are indexes. */
export function sealedKey(
	headKey: string,
	level: number,
	firstOrdinal: number,
	random: string,
): string {
	const key = `${sealedPrefix(headKey)}${level}-${String(firstOrdinal).padStart(10, '0')}-${random}.json`;
	if (!isSealedName(key.slice(key.lastIndexOf('/') + 1)))
		throw new InvalidIdError('sealed object name', key);
	return key;
}

/** Whether `key` names a sealed object of `headKey` (what a head may reference). */
export function isSealedKeyOf(headKey: string, key: string): boolean {
	const prefix = sealedPrefix(headKey);
	return key.startsWith(prefix) && isSealedName(key.slice(prefix.length));
}
