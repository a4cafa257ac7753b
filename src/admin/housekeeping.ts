// Housekeeping across the memories: list a conversation's or a workflow's objects, delete a
// conversation, sweep temporary copies, prune by age. Each memory does its part over its own keys
// (store/memory-admin.ts); this file only visits them in turn.
import { validateId, validateKeyPrefix } from '../keys/ids';
import { forgetCachedUnder } from '../store/document-store';
import type { AgePass, HeldObject } from '../store/memory-admin';
import { LEFTOVER_SAFE_AGE_MS } from '../store/retention';
import type { ListedObject, MemoryStorage } from '../store/storage';
import { memoriesOf } from './memories';

export interface ScopeOptions {
	keyPrefix?: string;
}

/**
 * Every object of one conversation kept by workflow: its chat memory (conversation document, its nodes'
 * documents, their sealed segments and indexes, its files) and its versioned data (branch heads and
 * counter, versions). Each memory's objects come in the order it deletes them: those that others
 * reference after those that reference them.
 */
export async function listConversationKeys(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ScopeOptions = {},
): Promise<ListedObject[]> {
	return (await conversationObjects(storage, appId, conversationId, options)).map((h) => h.object);
}

/** The same objects (see listConversationKeys), each with what its memory reads in its key. */
export async function conversationObjects(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ScopeOptions = {},
): Promise<HeldObject[]> {
	// No Memory Base: captures are kept per base, and only the bases a caller names count.
	const ref = { appId, conversationId, memoryBaseIds: [] };
	const { all } = memoriesOf(storage, options.keyPrefix);
	return (await Promise.all(all.map((m) => m.listConversation(ref)))).flat();
}

/** Every object of one app (n8n workflow). */
export async function listAppKeys(
	storage: MemoryStorage,
	appId: string,
	options: ScopeOptions = {},
): Promise<ListedObject[]> {
	const { all } = memoriesOf(storage, options.keyPrefix);
	const lists = await Promise.all(all.map((m) => m.listWorkflow(appId)));
	return lists.flat().map((h) => h.object);
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
	options: ScopeOptions & { memoryBaseIds?: string[] } = {},
): Promise<string[]> {
	const ref = { appId, conversationId, memoryBaseIds: options.memoryBaseIds };
	const deleted: string[] = [];
	// The Memory Base last (one whose vectors sit in a connected store refuses, by name).
	for (const m of memoriesOf(storage, options.keyPrefix).all)
		deleted.push(...(await m.deleteConversation(ref)));
	return deleted;
}

/** Drops this process's cached copies of a conversation's objects (see forgetCachedUnder). */
export function forgetConversationCache(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ScopeOptions = {},
): void {
	for (const m of memoriesOf(storage, options.keyPrefix).all)
		for (const prefix of m.prefixes({ appId, conversationId })) forgetCachedUnder(storage, prefix);
}

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
	const { appId } = options;
	const prefixes =
		appId !== undefined
			? memoriesOf(storage, options.keyPrefix).all.flatMap((m) => m.prefixes({ appId }))
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
 * Deletes memory untouched for N days, each memory in turn (see MemoryAdmin.prune). Chat memory:
 * documents with their sealed segments, indexes and summaries, unreferenced sealed objects older than
 * LEFTOVER_SAFE_AGE_MS (never one a live document references), and a conversation's copied files once
 * none of its documents remain. Versioned data: a conversation's versions, branches and counter as a
 * whole, once none of it and none of the conversation's chat documents was written within the N days,
 * branch heads first. Each delete names the version that was judged old, so what was written
 * meanwhile is kept. Then temporary copies older than LEFTOVER_SAFE_AGE_MS go.
 */
export async function pruneMemory(
	storage: MemoryStorage,
	options: PruneOptions,
): Promise<PruneResult> {
	if (!(options.olderThanDays >= 0)) throw new RangeError('olderThanDays must be a number ≥ 0');
	// An empty app ID is an error, as everywhere else; only an omitted one means "every app".
	if (options.appId !== undefined) validateId('app_id', options.appId);
	const now = options.now ?? new Date();
	const pass: AgePass = {
		appId: options.appId,
		now,
		cutoff: now.getTime() - options.olderThanDays * 86_400_000,
		dryRun: options.dryRun === true,
		live: new Set(),
		deleted: [],
		skipped: [],
	};
	for (const m of memoriesOf(storage, options.keyPrefix).all) await m.prune(pass);
	if (!options.dryRun)
		pass.deleted.push(
			...(await sweepLeftovers(storage, { keyPrefix: options.keyPrefix, appId: options.appId })),
		);
	return { deleted: pass.deleted, skipped: pass.skipped };
}
