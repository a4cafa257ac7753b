// Chat memory past its stored rule (store/retention.ts): read as gone, and deleted when next touched.
// Only a document as it was judged is deleted: a write since (a new turn from another workflow, say)
// makes the conditional delete fail, and the written document stays.
import { FlushConflictError } from '../errors';
import { sealedPrefix } from '../store/log-keys';
import { summariesKey } from './keys';
import type { DocumentStore, Versioned } from '../store/document-store';
import { MessageLog } from '../store/message-log';
import { deleteIfUnchanged, isExpired } from '../store/retention';
import { emptyDocument } from '../store/schema';
import type { HeadDocument } from '../store/schema';

/** Whether a stored chat document is past its rule at `now` (a document not stored never is). */
export function isExpiredHead(read: Versioned<HeadDocument>, now: Date): boolean {
	return read.version !== null && isExpired(read.doc, now);
}

/**
 * The chat document at `key` as a reader may see it: one past its stored Expire After at `now` is
 * gone (deleted as it was read; a write since wins, and is read again) and reads as not stored: its
 * rule goes with it. One that cannot be read stays an error, expired or not.
 */
export async function readLiveHead(
	store: DocumentStore<HeadDocument>,
	key: string,
	now: () => Date,
	attempts = 12,
): Promise<Versioned<HeadDocument>> {
	for (let attempt = 1; ; attempt++) {
		const read = await store.read(key);
		if (!isExpiredHead(read, now())) return read;
		if (await deleteExpiredHead(store, key, read)) return { doc: emptyDocument(), version: null };
		if (attempt >= attempts) throw new FlushConflictError(key, attempt);
	}
}

/**
 * Deletes an expired chat document as it was read: the head only if it is still that version (a
 * conditional delete), then what only it used (see discardExpired). Returns the deleted keys, or
 * undefined when the head was written since (then nothing is deleted).
 */
export async function deleteExpiredHead(
	store: DocumentStore<HeadDocument>,
	key: string,
	read: Versioned<HeadDocument>,
): Promise<string[] | undefined> {
	if (read.version === null) return [];
	// Followed before the head goes: afterwards nothing says which sealed objects were its own.
	const refs = await new MessageLog(store, key).reachable(read.doc);
	if (!(await deleteIfUnchanged(store.storage, key, read.version))) return undefined;
	return [key, ...(await discardExpired(store, key, refs))];
}

/**
 * Deletes what an expired document used beside its head, once the head is gone or replaced: the
 * sealed segments and indexes in `refs` (its own, under random names) and its summaries of older
 * turns. Sealed objects nobody references (a killed writer's) are left to Prune and Prune Expired,
 * which know how old they are.
 */
export async function discardExpired(
	store: DocumentStore<HeadDocument>,
	key: string,
	refs: ReadonlySet<string>,
): Promise<string[]> {
	const deleted: string[] = [];
	for (const o of await store.storage.list(sealedPrefix(key)))
		if (refs.has(o.key)) {
			await store.deleteWriteOnce(o.key);
			deleted.push(o.key);
		} else if (o.key === summariesKey(key)) {
			// Summaries are rewritten by compare-and-swap: only the copy listed here goes.
			if (await deleteIfUnchanged(store.storage, o.key, o.version)) deleted.push(o.key);
		}
	return deleted;
}
