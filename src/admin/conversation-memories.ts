import { MessageNotFoundError } from '../errors';
import { validateId } from '../keys/ids';
import { conversationMemoryKey } from '../history/keys';
import { readLiveHead } from '../history/expiry';
import { headCodec } from '../store/codec';
import { DocumentStore } from '../store/document-store';
import { sealedCountOf } from '../store/schema';
import type { MemoryStorage } from '../store/storage';
import { clearMemory, readMessages } from './conversation-memory';
import type { MemoryAddress, MessagePage, ReadMessagesOptions } from './conversation-memory';
import { conversationObjects } from './housekeeping';
import type { ScopeOptions } from './housekeeping';

/** The two kinds of memory document a conversation has: its shared one, and each node's own. */
export type MemoryScopeKind = 'conversation' | 'node';

/** One memory document of a conversation, as a listing found it. */
export interface ListedMemory {
	/** The conversation's shared memory (Conversation mode), or one node's own (Node mode). */
	memory: MemoryScopeKind;
	/** The node whose memory it is (Node mode only). */
	nodeId?: string;
	key: string;
	/** How readMessages and clearMemory address it. */
	address: MemoryAddress;
	size: number;
	lastModified: Date;
	/** Stored messages (only when asked for with `counts`). */
	messages?: number;
}

export interface ConversationMemories {
	/** Whether anything at all is stored for the conversation: memory, copied files or versioned data. */
	exists: boolean;
	/** Its memory documents: the shared one first, then each node's, by node ID. */
	memories: ListedMemory[];
}

/**
 * A conversation's memory documents, from one listing of the conversation: its shared memory and the
 * memory of each node (Node mode). With `counts`, each one's number of stored messages too (one read
 * of its document, no segments).
 */
export async function listConversationMemories(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ScopeOptions & { counts?: boolean } = {},
): Promise<ConversationMemories> {
	const objects = await conversationObjects(storage, appId, conversationId, options);
	const memories: ListedMemory[] = [];
	for (const { object: o, kind, nodeId } of objects) {
		if (kind !== 'conversation' && kind !== 'node') continue;
		const address: MemoryAddress = { appId, conversationId, keyPrefix: options.keyPrefix };
		if (kind === 'node') address.nodeId = nodeId;
		memories.push({
			memory: kind,
			...(nodeId !== undefined ? { nodeId } : {}),
			key: o.key,
			address,
			size: o.size,
			lastModified: o.lastModified,
		});
	}
	memories.sort(byScopeThenNode);
	if (options.counts === true) {
		const store = new DocumentStore(storage, headCodec());
		for (const m of memories) {
			const { doc } = await readLiveHead(store, m.key, () => new Date());
			m.messages = sealedCountOf(doc) + doc.messages.length;
		}
	}
	return { exists: objects.length > 0, memories };
}

function byScopeThenNode(a: ListedMemory, b: ListedMemory): number {
	if (a.memory !== b.memory) return a.memory === 'conversation' ? -1 : 1;
	const x = a.nodeId ?? '';
	const y = b.nodeId ?? '';
	return x < y ? -1 : x > y ? 1 : 0;
}

/** One memory's page of messages, named by its scope and node. */
export type ConversationMemoryPage = MessagePage & Pick<ListedMemory, 'memory' | 'nodeId'>;

export interface ConversationMemoryPages {
	/** Whether anything at all is stored for the conversation (see ConversationMemories). */
	exists: boolean;
	/** One page per memory document, in the order of listConversationMemories. */
	memories: ConversationMemoryPage[];
}

/**
 * Every memory of a conversation read at once: the same page (offset, limit, newest first) of each,
 * as readMessages reads one. With `threadOf`, only the memories that hold that message; none holding
 * it is a MessageNotFoundError. A document deleted between listing and reading is left out.
 */
export async function readConversationMemories(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ScopeOptions & ReadMessagesOptions = {},
): Promise<ConversationMemoryPages> {
	const { exists, memories } = await listConversationMemories(
		storage,
		appId,
		conversationId,
		options,
	);
	const threadOf =
		options.threadOf === undefined ? undefined : validateId('message_id', options.threadOf);
	const pages: ConversationMemoryPage[] = [];
	for (const m of memories) {
		let page: MessagePage;
		try {
			page = await readMessages(storage, m.address, { ...options, threadOf });
		} catch (error) {
			if (threadOf !== undefined && error instanceof MessageNotFoundError) continue;
			throw error;
		}
		if (page.exists) pages.push({ memory: m.memory, ...scopeNode(m), ...page });
	}
	if (threadOf !== undefined && pages.length === 0) {
		const keys = memories.map((m) => m.key);
		const where = keys.length > 0 ? keys.join(', ') : conversationMemoryKey(appId, conversationId);
		throw new MessageNotFoundError(where, threadOf);
	}
	return { exists, memories: pages };
}

function scopeNode(m: Pick<ListedMemory, 'nodeId'>): { nodeId?: string } {
	return m.nodeId !== undefined ? { nodeId: m.nodeId } : {};
}

/** One memory document that clearConversationMemories deleted. */
export type ClearedMemory = Pick<ListedMemory, 'memory' | 'nodeId' | 'key'> & { existed: boolean };

/**
 * Deletes every memory of a conversation that a listing finds: its shared memory and each node's
 * (documents and sealed segments). Copied files and versioned data stay (Delete Conversation, or
 * housekeeping, removes those).
 */
export async function clearConversationMemories(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ScopeOptions = {},
): Promise<{ exists: boolean; cleared: ClearedMemory[] }> {
	const { exists, memories } = await listConversationMemories(
		storage,
		appId,
		conversationId,
		options,
	);
	const cleared: ClearedMemory[] = [];
	for (const m of memories) {
		const { key, existed } = await clearMemory(storage, m.address);
		cleared.push({ memory: m.memory, ...scopeNode(m), key, existed });
	}
	return { exists, cleared };
}
