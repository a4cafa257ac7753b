// Forget User: everything stored about one user, or one conversation, in every workflow and every
// Memory Base of a storage: chat documents (every node's too), copied files, versioned data, captured
// messages and their index entries. The user's conversations are found through the Memory Bases, where
// captures carry user IDs; chat memory is keyed by conversation only.
import { InvalidInputError } from '../errors';
import { validateId, validateKeyPrefix } from '../keys/ids';
import {
	CONVERSATION_MEMORY_ROOT,
	FILES_ROOT,
	MEMORY_BASE_ROOT,
	NODE_MEMORY_ROOT,
	parseKey,
	VERSIONED_DATA_ROOT,
} from '../keys/layout';
import { MemoryBase } from '../knowledge/memory-base';
import type { MemoryStorage } from '../store/storage';
import { deleteConversationMemory } from './housekeeping';

export interface ForgetUserTarget {
	/** Every conversation in which this user's messages were captured into a Memory Base. */
	userId?: string;
	/** One conversation, in every workflow and base. */
	conversationId?: string;
}

export interface ForgetUserResult {
	userId: string | null;
	/** The conversations forgotten, by ID. */
	conversationIds: string[];
	/** Workflows that held any of them. */
	workflows: number;
	/** Deleted objects by kind (chat documents and their segments, files, versioned data, captures). */
	counts: { chatMemory: number; files: number; versionedData: number; memoryBase: number };
	deleted: string[];
}

/** IDs of every Memory Base in the storage (from their folders). */
async function memoryBaseIds(storage: MemoryStorage, prefix: string): Promise<string[]> {
	const root = `${prefix}${MEMORY_BASE_ROOT}/`;
	const ids = new Set<string>();
	for (const o of await storage.list(root)) ids.add(o.key.slice(root.length).split('/')[0]);
	return [...ids].filter(Boolean).sort();
}

/** The conversations in which a base captured this user's messages. */
async function conversationsOfUser(bases: MemoryBase[], userId: string): Promise<Set<string>> {
	const found = new Set<string>();
	for (const base of bases)
		for (let offset: number | null = 0; offset !== null;) {
			const page = await base.listMessages({ userId, offset, limit: 500 });
			for (const m of page.messages) found.add((m as { session_id: string }).session_id);
			offset = page.nextOffset;
		}
	return found;
}

/** Workflows (app IDs) holding anything of these conversations, from one listing per root. */
async function appsHolding(
	storage: MemoryStorage,
	prefix: string,
	conversations: Set<string>,
): Promise<Map<string, Set<string>>> {
	const apps = new Map<string, Set<string>>();
	for (const root of [CONVERSATION_MEMORY_ROOT, NODE_MEMORY_ROOT, FILES_ROOT, VERSIONED_DATA_ROOT])
		for (const o of await storage.list(`${prefix}${root}/`)) {
			const parsed = parseKey(o.key, prefix);
			const rest = o.key.slice(prefix.length + root.length + 1).split('/');
			const appId = parsed?.appId ?? rest[0];
			const conversationId = parsed?.conversationId ?? (rest[1] ?? '').replace(/\.(json|log)$/, '');
			if (!conversations.has(conversationId)) continue;
			if (!apps.has(appId)) apps.set(appId, new Set());
			apps.get(appId)!.add(conversationId);
		}
	return apps;
}

function countByKind(keys: string[], prefix: string): ForgetUserResult['counts'] {
	const counts = { chatMemory: 0, files: 0, versionedData: 0, memoryBase: 0 };
	for (const k of keys) {
		const root = k.slice(prefix.length).split('/')[0];
		if (root === FILES_ROOT) counts.files++;
		else if (root === VERSIONED_DATA_ROOT) counts.versionedData++;
		else if (root === CONVERSATION_MEMORY_ROOT || root === NODE_MEMORY_ROOT) counts.chatMemory++;
		else counts.memoryBase++;
	}
	return counts;
}

/**
 * Deletes everything of a user (or of one conversation) from the storage. Chat memory, files and
 * versioned data go first, in every workflow; the Memory Base captures, through which a user's
 * conversations are found, go last. So a run that stops midway leaves the rest findable, and running
 * it again finishes the work (and then reports nothing left).
 */
export async function forgetUser(
	storage: MemoryStorage,
	target: ForgetUserTarget,
	options: { keyPrefix?: string } = {},
): Promise<ForgetUserResult> {
	const prefix = validateKeyPrefix('key prefix', options.keyPrefix);
	const userId = target.userId === undefined ? undefined : validateId('user_id', target.userId);
	const conversationId =
		target.conversationId === undefined
			? undefined
			: validateId('conversation_id', target.conversationId);
	if (!userId && !conversationId)
		throw new InvalidInputError('userId', 'name a user or a conversation to forget');
	const baseIds = await memoryBaseIds(storage, prefix);
	const bases = baseIds.map((baseId) => new MemoryBase({ storage, baseId, keyPrefix: prefix }));
	const conversations = userId ? await conversationsOfUser(bases, userId) : new Set<string>();
	if (conversationId) conversations.add(conversationId);
	const apps = await appsHolding(storage, prefix, conversations);
	const deleted: string[] = [];
	// No captures here: they are what finds the user's conversations, so they go last, below.
	for (const [appId, ids] of apps)
		for (const id of ids)
			deleted.push(
				...(await deleteConversationMemory(storage, appId, id, {
					keyPrefix: prefix,
					memoryBaseIds: [],
				})),
			);
	for (const base of bases)
		for (const id of conversations)
			if ((await base.captured(id)) > 0) deleted.push(...(await base.forget(id)).deleted);
	return {
		userId: userId ?? null,
		conversationIds: [...conversations].sort(),
		workflows: apps.size,
		counts: countByKind(deleted, prefix),
		deleted,
	};
}
