// A conversation's whole document in and out: one version-1 document (all messages, sealed ones
// folded in) for export, and the layout of a long conversation (sealed segments, then the head) for import.
import { encodeJson, headCodec } from '../store/codec';
import { DocumentStore } from '../store/document-store';
import { MessageLog } from '../store/message-log';
import type { LogOptions } from '../store/message-log';
import { sealedCountOf, validateDocument } from '../store/schema';
import type { MemoryDocument } from '../store/schema';
import type { MemoryStorage } from '../store/storage';
import { readLiveHead } from './expiry';
import { THREAD_FACTS } from './thread';

/**
 * The whole conversation stored at `key` as one version-1 document (the single-document JSON format),
 * all messages in order, sealed ones included, with the head's other fields kept. Null when the key
 * does not exist. Unreadable parts are errors naming their key.
 */
export async function exportDocument(
	storage: MemoryStorage,
	key: string,
): Promise<MemoryDocument | null> {
	const store = new DocumentStore(storage, headCodec(false));
	// A memory past its Expire After is gone: never exported (and deleted now).
	const { doc, version } = await readLiveHead(store, key, () => new Date());
	if (version === null) return null;
	const log = new MessageLog(store, key, THREAD_FACTS);
	const messages =
		sealedCountOf(doc) > 0
			? [...(await log.sealedMessages(doc)), ...doc.messages]
			: [...doc.messages];
	const rest: Record<string, unknown> = { ...doc };
	delete rest.sealed;
	delete rest.sealed_count;
	return validateDocument(key, { ...rest, version: 1, messages });
}

/**
 * Stores a version-1 document at `key`, which must not exist yet, in the layout a long conversation
 * gets: all but the newest messages sealed into segments (and indexes) first, then the head. For
 * migrations and benchmarks; a document within the head's limits is stored as it is.
 */
export async function importDocument(
	storage: MemoryStorage,
	key: string,
	document: MemoryDocument,
	options: { gzip?: boolean; log?: Partial<LogOptions> } = {},
): Promise<void> {
	const doc = validateDocument(key, document);
	const store = new DocumentStore(storage, headCodec(options.gzip === true));
	const log = new MessageLog(store, key, THREAD_FACTS, options);
	const head = await log.seal(doc);
	await storage.put(key, encodeJson(head, { gzip: options.gzip === true }), {
		ifVersion: null,
		contentType: 'application/json',
	});
}
