// Chat memory as stored: a conversation's objects (its shared document, each node's, their sealed
// objects and summaries, its copied files), found by listing, and the folders they live in.
import { validateId, validateKeyPrefix } from '../keys/ids';
import { sealedPrefix } from '../store/log-keys';
import type { HeldObject } from '../store/memory-admin';
import { forEachListed } from '../store/storage';
import type { ListedObject, MemoryStorage } from '../store/storage';
import {
	CHAT_ROOTS,
	chatAppPrefixes,
	conversationFilesPrefix,
	conversationMemoryKey,
	conversationNodesPrefix,
	NODE_MEMORY_ROOT,
	parseChatKey,
} from './keys';

/** A listed chat object with what its key says; `kind` undefined for a key chat memory does not name. */
export function holdChat(o: ListedObject, keyPrefix?: string): HeldObject {
	const k = parseChatKey(o.key, keyPrefix);
	if (k)
		return {
			object: o,
			appId: k.appId,
			conversationId: k.conversationId,
			kind: k.kind,
			...(k.nodeId !== undefined ? { nodeId: k.nodeId } : {}),
		};
	// Still the conversation's, by its folders: `{root}/{app}/{conversation}[.json|.log]/…`.
	const rest = o.key.slice(validateKeyPrefix('key prefix', keyPrefix).length).split('/');
	return {
		object: o,
		appId: rest[1],
		conversationId: (rest[2] ?? '').replace(/\.(json|log)$/, ''),
	};
}

/** The folders of one conversation's chat memory: its document, its sealed objects, its nodes', its files. */
export function chatConversationPrefixes(
	appId: string,
	conversationId: string,
	keyPrefix?: string,
): string[] {
	const convKey = conversationMemoryKey(appId, conversationId, keyPrefix);
	return [
		convKey,
		sealedPrefix(convKey),
		conversationNodesPrefix(appId, conversationId, keyPrefix),
		conversationFilesPrefix(appId, conversationId, keyPrefix),
	];
}

/**
 * Every chat object of one conversation, in the order they are deleted: the conversation document, its
 * nodes' documents, then the sealed objects of both, then the copied files (objects that others
 * reference come after those that reference them).
 */
export async function listChatConversation(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	keyPrefix?: string,
): Promise<HeldObject[]> {
	const convKey = conversationMemoryKey(appId, conversationId, keyPrefix);
	const [conv, convSealed, nodes, files] = (
		await Promise.all([
			storage.list(convKey),
			storage.list(sealedPrefix(convKey)),
			storage.list(conversationNodesPrefix(appId, conversationId, keyPrefix)),
			storage.list(conversationFilesPrefix(appId, conversationId, keyPrefix)),
		])
	).map((list) => list.map((o) => holdChat(o, keyPrefix)));
	return [
		...conv.filter((h) => h.object.key === convKey),
		...nodes.filter((h) => h.kind !== 'sealed'),
		...convSealed,
		...nodes.filter((h) => h.kind === 'sealed'),
		...files,
	];
}

/** The folders chat objects of one app, or of every app, live under. */
function chatPrefixes(appId: string | undefined, keyPrefix?: string): string[] {
	const p = validateKeyPrefix('key prefix', keyPrefix);
	return appId !== undefined
		? chatAppPrefixes(appId, keyPrefix)
		: CHAT_ROOTS.map((root) => `${p}${root}/`);
}

/** Every chat object of one app, or of every app: one listing of each root. */
export async function listChatObjects(
	storage: MemoryStorage,
	appId: string | undefined,
	keyPrefix?: string,
): Promise<ListedObject[]> {
	const prefixes = chatPrefixes(appId, keyPrefix);
	return (await Promise.all(prefixes.map((prefix) => storage.list(prefix)))).flat();
}

/**
 * Visits the same objects a page of each listing at a time (a storage of many conversations lists
 * millions of keys: only what `visit` keeps is held).
 */
export async function eachChatObject(
	storage: MemoryStorage,
	appId: string | undefined,
	visit: (o: ListedObject) => void,
	keyPrefix?: string,
): Promise<void> {
	for (const prefix of chatPrefixes(appId, keyPrefix)) await forEachListed(storage, prefix, visit);
}

/** A node with Node-mode memory in an app, over all its conversations. */
export interface NodeWithMemory {
	nodeId: string;
	/** Conversations in which it has memory. */
	conversations: number;
	/** When its memory was last written, in any conversation. */
	lastModified: Date;
}

/**
 * The nodes that keep Node-mode memory in an app (n8n workflow), the most recently written first (ties
 * by ID), from one listing of the app's node memory. It lists every conversation's node documents, so
 * its cost grows with the number of conversations.
 */
export async function listNodesWithMemory(
	storage: MemoryStorage,
	appId: string,
	options: { keyPrefix?: string } = {},
): Promise<NodeWithMemory[]> {
	const root = validateKeyPrefix('key prefix', options.keyPrefix);
	const prefix = `${root}${NODE_MEMORY_ROOT}/${validateId('app_id', appId)}/`;
	const byId = new Map<string, NodeWithMemory>();
	for (const o of await storage.list(prefix)) {
		const k = parseChatKey(o.key, options.keyPrefix);
		if (k?.kind !== 'node' || k.appId !== appId || k.nodeId === undefined) continue;
		const n = byId.get(k.nodeId);
		if (!n)
			byId.set(k.nodeId, { nodeId: k.nodeId, conversations: 1, lastModified: o.lastModified });
		else {
			n.conversations++;
			if (o.lastModified > n.lastModified) n.lastModified = o.lastModified;
		}
	}
	return [...byId.values()].sort(
		(a, b) =>
			b.lastModified.getTime() - a.lastModified.getTime() ||
			(a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0),
	);
}
