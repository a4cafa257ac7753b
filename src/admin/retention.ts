// Prune Expired: every memory past the Expire After stored with it, in one workflow or all, deleted as
// judged. Chat documents (with their sealed objects, summaries and, once a conversation keeps none,
// its copied files), versioned data (as a whole, once every branch expired) and Memory Base captures
// (with their vectors and lexical entries). Each kind's own expiry check does the deleting, so the
// sweep and a reader that touches an expired memory delete it the same way.
import { CorruptDocumentError, EncryptionKeyError, MemoryError } from '../errors';
import { validateId } from '../keys/ids';
import { parseKey } from '../keys/layout';
import { deleteExpiredHead, isExpiredHead } from '../history/expiry';
import { listMemoryBases } from '../knowledge/listing';
import { MemoryBase } from '../knowledge/memory-base';
import { purgeIfExpired } from '../snapshots/retention';
import { VersionStore } from '../snapshots/version-store';
import { headCodec } from '../store/codec';
import { DocumentStore } from '../store/document-store';
import type { HeadDocument } from '../store/schema';
import type { ListedObject, MemoryStorage } from '../store/storage';
import {
	conversationOf,
	deleteFilesOf,
	LEFTOVER_SAFE_AGE_MS,
	listMemoryObjects,
} from './housekeeping';
import type { ScopeOptions } from './housekeeping';

export interface PruneExpiredOptions extends ScopeOptions {
	/** Only this app (n8n workflow); every app when omitted. */
	appId?: string;
	/**
	 * Memory Bases whose captures to sweep. Default: with `appId`, the base whose ID is the app's (what
	 * the nodes use unless told otherwise); without, every base of the storage.
	 */
	memoryBaseIds?: string[];
	/** The clock (default: now). */
	now?: Date;
	/** Report what is expired, delete nothing. */
	dryRun?: boolean;
}

/** What was expired, by kind: how many, and which (IDs as `app/conversation[/node]`, `base/session`). */
export interface ExpiredKind {
	count: number;
	ids: string[];
}

export interface PruneExpiredResult {
	chatMemory: ExpiredKind;
	versionedData: ExpiredKind;
	captures: ExpiredKind & { messages: number };
	/** Copied files of conversations that keep no chat memory any more. */
	files: number;
	/** Every key deleted (or, in a dry run, that would be). */
	deleted: string[];
	/** Expired, but kept: written since it was judged, unreadable, or busy; with the reason. */
	skipped: { id: string; reason: string }[];
}

function idOf(o: ListedObject, keyPrefix?: string): string {
	const k = parseKey(o.key, keyPrefix);
	return k?.nodeId === undefined
		? conversationOf(o, keyPrefix)
		: `${k.appId}/${k.conversationId}/${k.nodeId}`;
}

/** An object that cannot be read is kept and reported, never judged (nor deleted). */
function unreadable(error: unknown): string | undefined {
	return error instanceof CorruptDocumentError || error instanceof EncryptionKeyError
		? error.message
		: undefined;
}

/** One chat document: deleted when expired (the keys), kept (undefined) when not, or reported. */
async function expireHead(
	store: DocumentStore<HeadDocument>,
	o: ListedObject,
	options: PruneExpiredOptions,
	now: Date,
): Promise<{ deleted?: string[]; skipped?: string }> {
	try {
		const read = await store.read(o.key);
		if (!isExpiredHead(read, now)) return {};
		if (options.dryRun) return { deleted: [o.key] };
		const deleted = await deleteExpiredHead(store, o.key, read);
		return deleted ? { deleted } : { skipped: 'written since it was judged expired' };
	} catch (error) {
		const reason = unreadable(error);
		if (!reason) throw error;
		return { skipped: reason };
	}
}

async function sweepChat(
	storage: MemoryStorage,
	objects: ListedObject[],
	options: PruneExpiredOptions,
	now: Date,
	result: PruneExpiredResult,
): Promise<void> {
	const store = new DocumentStore(storage, headCodec());
	const { keyPrefix } = options;
	const swept = new Set<string>();
	const kept = new Set<string>();
	for (const o of objects) {
		const kind = parseKey(o.key, keyPrefix)?.kind;
		if (kind !== 'conversation' && kind !== 'node') continue;
		const { deleted, skipped } = await expireHead(store, o, options, now);
		const conversation = conversationOf(o, keyPrefix);
		if (skipped) result.skipped.push({ id: idOf(o, keyPrefix), reason: skipped });
		if (!deleted) {
			kept.add(conversation);
			continue;
		}
		swept.add(conversation);
		result.chatMemory.ids.push(idOf(o, keyPrefix));
		result.deleted.push(...deleted);
	}
	// Files go with the last chat memory of their conversation. Turns copy files before they are saved,
	// so files younger than a write takes are left for the next sweep.
	const files = await deleteFilesOf(storage, objects, {
		goes: (c) => swept.has(c) && !kept.has(c),
		before: Math.min(now.getTime(), Date.now()) - LEFTOVER_SAFE_AGE_MS,
		keyPrefix,
		dryRun: options.dryRun,
	});
	result.files = files.deleted.length;
	result.deleted.push(...files.deleted);
}

async function sweepVersioned(
	storage: MemoryStorage,
	objects: ListedObject[],
	options: PruneExpiredOptions,
	now: Date,
	result: PruneExpiredResult,
): Promise<void> {
	const conversations = new Map<string, { appId: string; conversationId: string }>();
	for (const o of objects) {
		const k = parseKey(o.key, options.keyPrefix);
		if (k?.kind === 'branch') conversations.set(conversationOf(o, options.keyPrefix), k);
	}
	for (const [id, { appId, conversationId }] of conversations) {
		const vs = new VersionStore({ storage, appId, conversationId, keyPrefix: options.keyPrefix });
		try {
			const purged = await purgeIfExpired(vs, now, { dryRun: options.dryRun });
			if (!purged.expired) continue;
			result.deleted.push(...purged.deleted);
			if (purged.skipped.length > 0)
				result.skipped.push({ id, reason: 'a branch was saved to since it was judged expired' });
			else result.versionedData.ids.push(id);
		} catch (error) {
			const reason = unreadable(error);
			if (!reason) throw error;
			result.skipped.push({ id, reason });
		}
	}
}

async function sweepCaptures(
	storage: MemoryStorage,
	options: PruneExpiredOptions,
	now: Date,
	result: PruneExpiredResult,
): Promise<void> {
	const ids =
		options.memoryBaseIds ??
		(options.appId !== undefined
			? [options.appId]
			: await listMemoryBases(storage, { keyPrefix: options.keyPrefix }));
	for (const baseId of [...new Set(ids.map((id) => validateId('memory_base_id', id)))]) {
		const base = new MemoryBase({ storage, baseId, keyPrefix: options.keyPrefix });
		for (const sessionId of await base.sessions()) {
			const id = `${baseId}/${sessionId}`;
			try {
				const r = await base.expire(sessionId, { now, dryRun: options.dryRun });
				if (r.skipped) result.skipped.push({ id, reason: r.skipped });
				if (!r.expired) continue;
				result.captures.ids.push(id);
				result.captures.messages += r.messages;
				result.deleted.push(...r.deleted);
			} catch (error) {
				// A base whose vectors are in a connected vector store is refused by name, as by Forget.
				if (!(error instanceof MemoryError)) throw error;
				result.skipped.push({ id, reason: error.message });
			}
		}
	}
}

/**
 * Deletes every memory past the Expire After stored with it (see the module comment): in one app or
 * in all, chat memory, versioned data and Memory Base captures. Every object is judged as read and
 * deleted only as judged (a conditional delete), so a memory written after the sweep listed it stays
 * (reported as skipped); an unreadable one is kept and reported, never deleted.
 */
export async function pruneExpired(
	storage: MemoryStorage,
	options: PruneExpiredOptions = {},
): Promise<PruneExpiredResult> {
	if (options.appId !== undefined) validateId('app_id', options.appId);
	const now = options.now ?? new Date();
	const result: PruneExpiredResult = {
		chatMemory: { count: 0, ids: [] },
		versionedData: { count: 0, ids: [] },
		captures: { count: 0, ids: [], messages: 0 },
		files: 0,
		deleted: [],
		skipped: [],
	};
	const objects = await listMemoryObjects(storage, options);
	await sweepChat(storage, objects, options, now, result);
	await sweepVersioned(storage, objects, options, now, result);
	await sweepCaptures(storage, options, now, result);
	for (const kind of [result.chatMemory, result.versionedData, result.captures]) {
		kind.ids.sort();
		kind.count = kind.ids.length;
	}
	return result;
}
