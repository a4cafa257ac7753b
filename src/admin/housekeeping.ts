import { ConflictError, CorruptDocumentError } from '../errors';
import { validateId, validateKeyPrefix } from '../keys/ids';
import {
	appPrefixes,
	CONVERSATION_MEMORY_ROOT,
	conversationFilesPrefix,
	conversationMemoryKey,
	conversationNodesPrefix,
	FILES_ROOT,
	NODE_MEMORY_ROOT,
	parseKey,
	sealedPrefix,
	VERSIONED_DATA_ROOT,
	versionedDataPrefix,
} from '../keys/layout';
import { headCodec } from '../store/codec';
import { DocumentStore } from '../store/document-store';
import { MessageLog } from '../store/message-log';
import type { ListedObject, MemoryStorage } from '../store/storage';

export interface ScopeOptions {
	keyPrefix?: string;
}

/**
 * Every object of one conversation: its conversation document, its nodes' documents, the sealed
 * segments and indexes of both, its files, and its versioned data (branch heads and counter, versions).
 * Objects that others reference come after those that reference them: documents and branch heads first,
 * then sealed objects and versions, then files.
 */
export async function listConversationKeys(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ScopeOptions = {},
): Promise<ListedObject[]> {
	const convKey = conversationMemoryKey(appId, conversationId, options.keyPrefix);
	const [conv, convSealed, nodes, files, data] = await Promise.all([
		storage.list(convKey),
		storage.list(sealedPrefix(convKey)),
		storage.list(conversationNodesPrefix(appId, conversationId, options.keyPrefix)),
		storage.list(conversationFilesPrefix(appId, conversationId, options.keyPrefix)),
		storage.list(versionedDataPrefix(appId, conversationId, options.keyPrefix)),
	]);
	const kind = (o: ListedObject) => parseKey(o.key, options.keyPrefix)?.kind;
	return [
		...conv.filter((o) => o.key === convKey),
		...nodes.filter((o) => kind(o) !== 'sealed'),
		...data.filter((o) => kind(o) !== 'version'),
		...convSealed,
		...nodes.filter((o) => kind(o) === 'sealed'),
		...data.filter((o) => kind(o) === 'version'),
		...files,
	];
}

/** Every object of one app (n8n workflow). */
export async function listAppKeys(
	storage: MemoryStorage,
	appId: string,
	options: ScopeOptions = {},
): Promise<ListedObject[]> {
	const lists = await Promise.all(
		appPrefixes(appId, options.keyPrefix).map((p) => storage.list(p)),
	);
	return lists.flat();
}

/**
 * Deletes all of a conversation's memory, across its nodes, its copied files and its versioned data
 * (versions, branches, counter). Returns the deleted keys.
 */
export async function deleteConversationMemory(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ScopeOptions = {},
): Promise<string[]> {
	// Documents go first (listConversationKeys lists them first): a writer still holding one then fails
	// its compare-and-swap instead of referencing the sealed objects deleted next.
	const objects = await listConversationKeys(storage, appId, conversationId, options);
	for (const o of objects) await storage.delete(o.key);
	// Copies a killed writer left behind hold the conversation's text too.
	const leftovers = [];
	const convKey = conversationMemoryKey(appId, conversationId, options.keyPrefix);
	for (const scope of [
		convKey,
		sealedPrefix(convKey),
		conversationNodesPrefix(appId, conversationId, options.keyPrefix),
		conversationFilesPrefix(appId, conversationId, options.keyPrefix),
		versionedDataPrefix(appId, conversationId, options.keyPrefix),
	])
		leftovers.push(...((await storage.sweep?.(scope, 0)) ?? []));
	return [...objects.map((o) => o.key), ...leftovers];
}

/** Temporary files younger than this may belong to a write in progress, so housekeeping leaves them. */
export const LEFTOVER_SAFE_AGE_MS = 15 * 60_000;

export interface SweepOptions extends ScopeOptions {
	/** Only leftovers older than this (default 15 minutes: no write takes that long). */
	olderThanMs?: number;
	/** Only this app; every app when omitted. */
	appId?: string;
}

/** Removes temporary copies of documents that killed writers left behind (local disk; S3 has none). */
export async function sweepLeftovers(
	storage: MemoryStorage,
	options: SweepOptions = {},
): Promise<string[]> {
	if (!storage.sweep) return [];
	const age = options.olderThanMs ?? LEFTOVER_SAFE_AGE_MS;
	const prefixes =
		options.appId !== undefined
			? appPrefixes(options.appId, options.keyPrefix)
			: [validateKeyPrefix('key prefix', options.keyPrefix)];
	const removed: string[] = [];
	for (const prefix of prefixes) removed.push(...(await storage.sweep(prefix, age)));
	return removed;
}

export interface PruneOptions extends ScopeOptions {
	/** Delete memory not written for this many days. */
	olderThanDays: number;
	/** Only this app; every app when omitted. */
	appId?: string;
	now?: Date;
	/** Report what would be deleted, delete nothing. */
	dryRun?: boolean;
}

export interface PruneResult {
	/** Deleted documents and files (and, unless a dry run, swept temporary copies). */
	deleted: string[];
	/** Documents written again between listing and deleting; they were kept. */
	skipped: string[];
}

/**
 * Deletes memory documents untouched for N days. A conversation's copied files go once none of its
 * documents remain. Each delete names the version that was judged old, so a document written
 * meanwhile is kept. Sealed segments and indexes go with their document; those no document references
 * (left by a writer that lost its compare-and-swap or was killed) go once older than
 * LEFTOVER_SAFE_AGE_MS. A sealed object a live document references is never deleted, however old.
 * A conversation's versioned data (versions, branches, counter) goes as a whole, once none of it and none
 * of the conversation's chat documents was written within the N days; branch heads are deleted first.
 */
export async function pruneMemory(
	storage: MemoryStorage,
	options: PruneOptions,
): Promise<PruneResult> {
	if (!(options.olderThanDays >= 0)) throw new RangeError('olderThanDays must be a number ≥ 0');
	// An empty app ID is an error, as everywhere else; only an omitted one means "every app".
	if (options.appId !== undefined) validateId('app_id', options.appId);
	const now = options.now ?? new Date();
	const cutoff = now.getTime() - options.olderThanDays * 86_400_000;
	// Unreferenced sealed objects younger than this may belong to a head being written right now.
	const sealedCutoff = Math.min(now.getTime(), Date.now()) - LEFTOVER_SAFE_AGE_MS;
	const prefix = validateKeyPrefix('key prefix', options.keyPrefix);
	const objects =
		options.appId !== undefined
			? await listAppKeys(storage, options.appId, options)
			: (
					await Promise.all(
						[NODE_MEMORY_ROOT, CONVERSATION_MEMORY_ROOT, FILES_ROOT, VERSIONED_DATA_ROOT].map((r) =>
							storage.list(`${prefix}${r}/`),
						),
					)
				).flat();
	const conversation = (o: ListedObject) => {
		const k = parseKey(o.key, options.keyPrefix);
		return k ? `${k.appId}/${k.conversationId}` : undefined;
	};
	const live = new Set<string>();
	const deletedHeads = new Set<string>();
	const deleted: string[] = [];
	const skipped: string[] = [];
	const sealedOf = new Map<string, ListedObject[]>();
	/** Versioned data by conversation: it goes as a whole or not at all. */
	const versionedOf = new Map<string, ListedObject[]>();
	for (const o of objects) {
		const parsed = parseKey(o.key, options.keyPrefix);
		if (!parsed || parsed.kind === 'file') continue;
		if (
			parsed.kind === 'version' ||
			parsed.kind === 'branch' ||
			parsed.kind === 'version_counter'
		) {
			const c = conversation(o) as string;
			versionedOf.set(c, [...(versionedOf.get(c) ?? []), o]);
			continue;
		}
		if (parsed.kind === 'sealed') {
			const head = parsed.headKey as string;
			sealedOf.set(head, [...(sealedOf.get(head) ?? []), o]);
			continue;
		}
		if (o.lastModified.getTime() >= cutoff) {
			live.add(conversation(o) as string);
			continue;
		}
		try {
			if (!options.dryRun) await storage.delete(o.key, { ifVersion: o.version });
			deleted.push(o.key);
			deletedHeads.add(o.key);
		} catch (error) {
			if (!(error instanceof ConflictError)) throw error;
			skipped.push(o.key);
			live.add(conversation(o) as string);
		}
	}
	const store = new DocumentStore(storage, headCodec());
	for (const [headKey, sealed] of sealedOf) {
		let referenced = new Set<string>();
		if (!deletedHeads.has(headKey)) {
			// A live head, or one the listing did not show (written since): what it references stays.
			try {
				const { doc, version } = await store.read(headKey);
				if (version !== null) {
					referenced = await new MessageLog(store, headKey).reachable(doc);
					live.add(conversation(sealed[0]) as string);
				}
			} catch (error) {
				if (!(error instanceof CorruptDocumentError)) throw error;
				// Unreadable: keep everything it may reference (and its files); it is an error for its readers.
				skipped.push(...sealed.map((o) => o.key));
				live.add(conversation(sealed[0]) as string);
				continue;
			}
		}
		for (const o of sealed) {
			if (referenced.has(o.key) || o.lastModified.getTime() >= sealedCutoff) continue;
			try {
				if (!options.dryRun) await storage.delete(o.key, { ifVersion: o.version });
				deleted.push(o.key);
			} catch (error) {
				if (!(error instanceof ConflictError)) throw error;
				skipped.push(o.key);
			}
		}
	}
	for (const [c, group] of versionedOf) {
		// Kept whole while any of it, or any chat document of the conversation, is recent.
		if (live.has(c) || group.some((o) => o.lastModified.getTime() >= cutoff)) continue;
		// Heads (branches, counter) first: a writer holding one then fails its compare-and-swap
		// instead of saving on top of versions deleted next.
		const ordered = [
			...group.filter((o) => parseKey(o.key, options.keyPrefix)?.kind !== 'version'),
			...group.filter((o) => parseKey(o.key, options.keyPrefix)?.kind === 'version'),
		];
		for (let i = 0; i < ordered.length; i++) {
			const o = ordered[i];
			try {
				if (!options.dryRun) await storage.delete(o.key, { ifVersion: o.version });
				deleted.push(o.key);
			} catch (error) {
				if (!(error instanceof ConflictError)) throw error;
				// Written meanwhile: the conversation's versioned data is in use again; keep the rest.
				skipped.push(...ordered.slice(i).map((x) => x.key));
				break;
			}
		}
	}
	for (const o of objects) {
		const parsed = parseKey(o.key, options.keyPrefix);
		if (
			parsed?.kind !== 'file' ||
			live.has(conversation(o) as string) ||
			o.lastModified.getTime() >= cutoff
		)
			continue;
		try {
			// Re-checked at delete time: a turn that stored the same bytes again meanwhile refreshed the file.
			if (!options.dryRun)
				await storage.delete(o.key, { ifVersion: o.version, ifUnmodifiedSince: new Date(cutoff) });
			deleted.push(o.key);
		} catch (error) {
			if (!(error instanceof ConflictError)) throw error;
			skipped.push(o.key);
		}
	}
	if (!options.dryRun)
		deleted.push(
			...(await sweepLeftovers(storage, { keyPrefix: options.keyPrefix, appId: options.appId })),
		);
	return { deleted, skipped };
}
