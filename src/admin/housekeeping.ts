import { CorruptDocumentError } from '../errors';
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
import { DocumentStore, forgetCachedUnder } from '../store/document-store';
import { forgetCaptures } from './conversation-captures';
import type { CaptureScope } from './conversation-captures';
import { MessageLog } from '../store/message-log';
import { deleteIfUnchanged } from '../store/retention';
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
 * Deletes all of a conversation's memory, across its nodes, its copied files, its versioned data
 * (versions, branches, counter) and its Memory Base captures (by default in the base whose ID is the
 * app's; `memoryBaseIds` names others). Returns the deleted keys.
 */
export async function deleteConversationMemory(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ScopeOptions & CaptureScope = {},
): Promise<string[]> {
	// Documents go first (listConversationKeys lists them first): a writer still holding one then fails
	// its compare-and-swap instead of referencing the sealed objects deleted next.
	const objects = await listConversationKeys(storage, appId, conversationId, options);
	for (const o of objects) await storage.delete(o.key);
	forgetConversationCache(storage, appId, conversationId, options);
	// Copies a killed writer left behind hold the conversation's text too.
	const leftovers = [];
	for (const scope of conversationPrefixes(appId, conversationId, options))
		leftovers.push(...((await storage.sweep?.(scope, 0)) ?? []));
	// Last: its Memory Base captures (a base whose vectors sit in a connected store refuses, by name).
	const captures = await forgetCaptures(storage, appId, conversationId, options);
	return [...objects.map((o) => o.key), ...leftovers, ...captures];
}

/** Drops this process's cached copies of a conversation's objects (see forgetCachedUnder). */
export function forgetConversationCache(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ScopeOptions = {},
): void {
	for (const prefix of conversationPrefixes(appId, conversationId, options))
		forgetCachedUnder(storage, prefix);
}

/** Every key prefix a conversation's objects live under (its documents, segments, files, versions). */
export function conversationPrefixes(
	appId: string,
	conversationId: string,
	options: ScopeOptions,
): string[] {
	const convKey = conversationMemoryKey(appId, conversationId, options.keyPrefix);
	return [
		convKey,
		sealedPrefix(convKey),
		conversationNodesPrefix(appId, conversationId, options.keyPrefix),
		conversationFilesPrefix(appId, conversationId, options.keyPrefix),
		versionedDataPrefix(appId, conversationId, options.keyPrefix),
	];
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

/** One prune pass: what it found, kept and deleted so far. */
interface Pass {
	storage: MemoryStorage;
	options: PruneOptions;
	cutoff: number;
	/** Conversations (`app/conversation`) with something recent or kept: their files and data stay. */
	live: Set<string>;
	deletedHeads: Set<string>;
	deleted: string[];
	skipped: string[];
}

/**
 * Deletes one listed object only if it is still the version that was judged (a conditional delete):
 * true when deleted (or, in a dry run, when it would be); false when it was written meanwhile, which
 * is recorded as skipped.
 */
async function tryDelete(pass: Pass, o: ListedObject, ifUnmodifiedSince?: Date): Promise<boolean> {
	const { storage, options } = pass;
	if (options.dryRun || (await deleteIfUnchanged(storage, o.key, o.version, ifUnmodifiedSince))) {
		pass.deleted.push(o.key);
		return true;
	}
	pass.skipped.push(o.key);
	return false;
}

/** `app/conversation` of a memory key ('' for other keys). */
export function conversationOf(o: ListedObject, keyPrefix?: string): string {
	const k = parseKey(o.key, keyPrefix);
	return k ? `${k.appId}/${k.conversationId}` : '';
}

/** Every object of the memory roots Prune works on: of one app, or of every app. */
export async function listMemoryObjects(
	storage: MemoryStorage,
	options: ScopeOptions & { appId?: string },
): Promise<ListedObject[]> {
	if (options.appId !== undefined) return listAppKeys(storage, options.appId, options);
	const prefix = validateKeyPrefix('key prefix', options.keyPrefix);
	const roots = [NODE_MEMORY_ROOT, CONVERSATION_MEMORY_ROOT, FILES_ROOT, VERSIONED_DATA_ROOT];
	return (await Promise.all(roots.map((r) => storage.list(`${prefix}${r}/`)))).flat();
}

/** Deletes old memory documents (heads); groups what goes with documents or conversations. */
async function pruneDocuments(pass: Pass, objects: ListedObject[]) {
	const sealedOf = new Map<string, ListedObject[]>();
	const versionedOf = new Map<string, ListedObject[]>();
	const summaries: ListedObject[] = [];
	const add = (map: Map<string, ListedObject[]>, k: string, o: ListedObject) =>
		map.set(k, [...(map.get(k) ?? []), o]);
	for (const o of objects) {
		const parsed = parseKey(o.key, pass.options.keyPrefix);
		const conversation = conversationOf(o, pass.options.keyPrefix);
		if (!parsed || parsed.kind === 'file') continue;
		if (parsed.kind === 'version' || parsed.kind === 'branch' || parsed.kind === 'version_counter')
			add(versionedOf, conversation, o);
		else if (parsed.kind === 'sealed') add(sealedOf, parsed.headKey as string, o);
		else if (parsed.kind === 'summary') summaries.push(o);
		else if (o.lastModified.getTime() >= pass.cutoff) pass.live.add(conversation);
		else if (await tryDelete(pass, o)) pass.deletedHeads.add(o.key);
		else pass.live.add(conversation);
	}
	return { sealedOf, versionedOf, summaries };
}

/**
 * Whether a head is still there (not deleted by this pass) and the sealed objects it references;
 * undefined when it is unreadable (then all are kept: it is an error for its readers, never empty).
 */
async function referencedBy(
	pass: Pass,
	headKey: string,
): Promise<{ live: boolean; refs: Set<string> } | undefined> {
	if (pass.deletedHeads.has(headKey)) return { live: false, refs: new Set() };
	const store = new DocumentStore(pass.storage, headCodec());
	try {
		const { doc, version } = await store.read(headKey);
		if (version === null) return { live: false, refs: new Set() };
		return { live: true, refs: await new MessageLog(store, headKey).reachable(doc) };
	} catch (error) {
		if (!(error instanceof CorruptDocumentError)) throw error;
		return undefined;
	}
}

/** Sealed objects go with their head, or once unreferenced and older than LEFTOVER_SAFE_AGE_MS. */
async function pruneSealed(
	pass: Pass,
	sealedOf: Map<string, ListedObject[]>,
	sealedCutoff: number,
) {
	for (const [headKey, sealed] of sealedOf) {
		const conversation = conversationOf(sealed[0], pass.options.keyPrefix);
		const head = await referencedBy(pass, headKey);
		if (!head || head.live) pass.live.add(conversation);
		if (!head) {
			pass.skipped.push(...sealed.map((o) => o.key));
			continue;
		}
		for (const o of sealed)
			if (!head.refs.has(o.key) && o.lastModified.getTime() < sealedCutoff)
				await tryDelete(pass, o);
	}
}

/**
 * A document's summaries of older turns go with it: once the document was deleted by this pass or is
 * not there at all. They are derived from it, so a document that stays keeps them, however old.
 */
async function pruneSummaries(pass: Pass, summaries: ListedObject[], listed: Set<string>) {
	for (const o of summaries) {
		const headKey = parseKey(o.key, pass.options.keyPrefix)?.headKey as string;
		if (pass.deletedHeads.has(headKey) || !listed.has(headKey)) await tryDelete(pass, o);
	}
}

/**
 * A conversation's versioned data goes as a whole once none of it and none of its chat documents is
 * recent; branch heads and the counter first, so a writer holding one fails its compare-and-swap
 * instead of saving on top of versions deleted next. A write meanwhile keeps the rest.
 */
async function pruneVersioned(pass: Pass, versionedOf: Map<string, ListedObject[]>) {
	const isVersion = (o: ListedObject) =>
		parseKey(o.key, pass.options.keyPrefix)?.kind === 'version';
	for (const [conversation, group] of versionedOf) {
		if (pass.live.has(conversation) || group.some((o) => o.lastModified.getTime() >= pass.cutoff))
			continue;
		const ordered = [...group.filter((o) => !isVersion(o)), ...group.filter(isVersion)];
		for (let i = 0; i < ordered.length; i++)
			if (!(await tryDelete(pass, ordered[i]))) {
				pass.skipped.push(...ordered.slice(i + 1).map((x) => x.key));
				break;
			}
	}
}

/** Copied files go once their conversation keeps nothing; re-checked at delete time. */
async function pruneFiles(pass: Pass, objects: ListedObject[]) {
	const { deleted, skipped } = await deleteFilesOf(pass.storage, objects, {
		...pass.options,
		goes: (conversation) => !pass.live.has(conversation),
		before: pass.cutoff,
	});
	pass.deleted.push(...deleted);
	pass.skipped.push(...skipped);
}

/**
 * Deletes the copied files among `objects` whose conversation (`app/conversation`) `goes`, last
 * written before `before` (ms). Each delete is re-checked: a turn that stored the
 * same bytes again meanwhile refreshed the file, and the time shows it, so it stays (skipped).
 */
export async function deleteFilesOf(
	storage: MemoryStorage,
	objects: ListedObject[],
	options: {
		goes: (conversation: string) => boolean;
		before: number;
		keyPrefix?: string;
		dryRun?: boolean;
	},
): Promise<{ deleted: string[]; skipped: string[] }> {
	const out = { deleted: [] as string[], skipped: [] as string[] };
	for (const o of objects) {
		if (parseKey(o.key, options.keyPrefix)?.kind !== 'file') continue;
		if (!options.goes(conversationOf(o, options.keyPrefix))) continue;
		if (o.lastModified.getTime() >= options.before) continue;
		const since = new Date(options.before);
		const gone = options.dryRun || (await deleteIfUnchanged(storage, o.key, o.version, since));
		(gone ? out.deleted : out.skipped).push(o.key);
	}
	return out;
}

/**
 * Deletes memory documents untouched for N days. A conversation's copied files go once none of its
 * documents remain. Each delete names the version that was judged old, so a document written
 * meanwhile is kept. Sealed segments and indexes go with their document; those no document references
 * (left by a writer that lost its compare-and-swap or was killed) go once older than
 * LEFTOVER_SAFE_AGE_MS. A sealed object a live document references is never deleted, however old;
 * a document's summaries of older turns go with the document.
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
	const pass: Pass = {
		storage,
		options,
		cutoff: now.getTime() - options.olderThanDays * 86_400_000,
		live: new Set(),
		deletedHeads: new Set(),
		deleted: [],
		skipped: [],
	};
	// Unreferenced sealed objects younger than this may belong to a head being written right now.
	const sealedCutoff = Math.min(now.getTime(), Date.now()) - LEFTOVER_SAFE_AGE_MS;
	const objects = await listMemoryObjects(storage, options);
	const { sealedOf, versionedOf, summaries } = await pruneDocuments(pass, objects);
	await pruneSealed(pass, sealedOf, sealedCutoff);
	await pruneSummaries(pass, summaries, new Set(objects.map((o) => o.key)));
	await pruneVersioned(pass, versionedOf);
	await pruneFiles(pass, objects);
	if (!options.dryRun)
		pass.deleted.push(
			...(await sweepLeftovers(storage, { keyPrefix: options.keyPrefix, appId: options.appId })),
		);
	return { deleted: pass.deleted, skipped: pass.skipped };
}
