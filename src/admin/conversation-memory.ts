import { InvalidOptionError, MessageNotFoundError, UnknownParentMessageError } from '../errors';
import { validateId } from '../keys/ids';
import { conversationMemoryKey, nodeMemoryKey } from '../history/keys';
import type { BufferMemory } from '../history/buffer-memory';
import { readLiveHead } from '../history/expiry';
import { ConversationMemory, NodeMemory } from '../history/scopes';
import type { StoredSummary } from '../history/summary-store';
import { headCodec } from '../store/codec';
import { DocumentStore } from '../store/document-store';
import { MessageLog } from '../store/message-log';
import { sealedCountOf } from '../store/schema';
import type { HeadDocument, StoredMessage } from '../store/schema';
import type { HeldObject } from '../store/memory-admin';
import type { MemoryStorage } from '../store/storage';
import { documentStored } from '../store/storage';
import type { ScopeOptions } from './housekeeping';
import { memoriesOf } from './memories';

/**
 * One memory document, addressed the way the nodes address it: the conversation's own (Conversation
 * mode), or one node's (Node mode) when `nodeId` is given. Same keys as ConversationMemory / NodeMemory.
 */
export interface MemoryAddress extends ScopeOptions {
	appId: string;
	conversationId: string;
	nodeId?: string;
}

/** The storage key of an addressed memory document (every ID checked). */
export function memoryKeyOf(address: MemoryAddress): string {
	return address.nodeId === undefined
		? conversationMemoryKey(address.appId, address.conversationId, address.keyPrefix)
		: nodeMemoryKey(address.appId, address.conversationId, address.nodeId, address.keyPrefix);
}

function openMemory(storage: MemoryStorage, address: MemoryAddress): BufferMemory {
	const options = { storage, keyPrefix: address.keyPrefix };
	return address.nodeId === undefined
		? new ConversationMemory(address.appId, address.conversationId, options)
		: new NodeMemory(address.appId, address.conversationId, address.nodeId, options);
}

/** Offset and limit of one page: an offset is a whole number ≥ 0, a limit ≥ 1 (or Infinity: all). */
export interface PageOptions {
	/** Entries to skip (default 0). */
	offset?: number;
	/** Most entries to return (default: all). */
	limit?: number;
}

function pageOf(options: PageOptions): { offset: number; limit: number } {
	const offset = options.offset ?? 0;
	const limit = options.limit ?? Number.POSITIVE_INFINITY;
	if (!Number.isSafeInteger(offset) || offset < 0)
		throw new InvalidOptionError('offset', `must be a whole number ≥ 0, got ${String(offset)}`);
	if (!(limit === Number.POSITIVE_INFINITY || (Number.isSafeInteger(limit) && limit >= 1)))
		throw new InvalidOptionError('limit', `must be a whole number ≥ 1, got ${String(limit)}`);
	return { offset, limit };
}

/** Positions [from, to) of a page over `total` entries, counted from the start or from the end. */
function window(
	total: number,
	page: { offset: number; limit: number },
	fromEnd: boolean,
): { from: number; to: number; nextOffset: number | null } {
	const count = Math.max(0, Math.min(page.limit, total - page.offset));
	const from = fromEnd ? total - page.offset - count : page.offset;
	const next = page.offset + count;
	return { from, to: from + count, nextOffset: count > 0 && next < total ? next : null };
}

export interface ReadMessagesOptions extends PageOptions {
	/** Newest first: the offset counts from the newest message and the page lists newest first. */
	newestFirst?: boolean;
	/**
	 * Only the thread ending at this message ID (its root first), instead of every stored message in the
	 * order it was stored (all branches).
	 */
	threadOf?: string;
}

/** A stored message and its position: in storage order, or in the thread (0 = the oldest). */
export interface PositionedMessage {
	position: number;
	message: StoredMessage;
}

export interface MessagePage {
	key: string;
	/** Whether the memory document exists (a missing one reads as no messages). */
	exists: boolean;
	/** Messages in the memory (or in the thread). */
	total: number;
	messages: PositionedMessage[];
	/** The offset of the next page, or null when this page reached the end. */
	nextOffset: number | null;
}

/** Stored messages at positions [from, to), loading only the sealed segments that hold them. */
async function storedRange(
	log: MessageLog,
	head: HeadDocument,
	from: number,
	to: number,
): Promise<StoredMessage[]> {
	const out: StoredMessage[] = [];
	const visit = async (level: ReturnType<MessageLog['placed']>): Promise<void> => {
		for (const p of level) {
			if (p.start + p.ref.count <= from || p.start >= to) continue;
			if (p.ref.level > 0) {
				await visit(await log.children(p));
				continue;
			}
			const messages = await log.segment(p);
			out.push(...messages.slice(Math.max(0, from - p.start), Math.min(p.ref.count, to - p.start)));
		}
	};
	const sealed = sealedCountOf(head);
	if (from < sealed) await visit(log.placed(head));
	out.push(...head.messages.slice(Math.max(0, from - sealed), Math.max(0, to - sealed)));
	return out;
}

/**
 * One page of an addressed memory's messages. Without `threadOf`: every stored message in storage
 * order (all branches), reading only the sealed segments the page covers. With it: the thread ending at
 * that message, root first. An unreadable document or segment is an error, never an empty page.
 */
export async function readMessages(
	storage: MemoryStorage,
	address: MemoryAddress,
	options: ReadMessagesOptions = {},
): Promise<MessagePage> {
	const key = memoryKeyOf(address);
	const page = pageOf(options);
	const threadOf =
		options.threadOf === undefined ? undefined : validateId('message_id', options.threadOf);
	const store = new DocumentStore(storage, headCodec());
	// A memory past its Expire After is gone here too (and deleted), as for the nodes that chat.
	const { doc, version } = await readLiveHead(store, key, () => new Date());
	const exists = version !== null;
	const newestFirst = options.newestFirst === true;
	let total: number;
	let messages: PositionedMessage[];
	let nextOffset: number | null;
	if (threadOf === undefined) {
		total = sealedCountOf(doc) + doc.messages.length;
		const w = window(total, page, newestFirst);
		const range = await storedRange(new MessageLog(store, key), doc, w.from, w.to);
		messages = range.map((message, i) => ({ position: w.from + i, message }));
		nextOffset = w.nextOffset;
	} else {
		if (!exists) throw new MessageNotFoundError(key, threadOf);
		let thread: StoredMessage[];
		try {
			thread = await openMemory(storage, address).thread({ parentMessageId: threadOf });
		} catch (error) {
			if (error instanceof UnknownParentMessageError) throw new MessageNotFoundError(key, threadOf);
			throw error;
		}
		total = thread.length;
		const w = window(total, page, newestFirst);
		messages = thread.slice(w.from, w.to).map((message, i) => ({ position: w.from + i, message }));
		nextOffset = w.nextOffset;
	}
	if (newestFirst) messages.reverse();
	return { key, exists, total, messages, nextOffset };
}

/**
 * The summaries of older turns an addressed memory keeps (Summarize Older Turns), newest first: one
 * conditional read. None when the memory never summarized; an unreadable object is an error, never none.
 */
export async function readSummaries(
	storage: MemoryStorage,
	address: MemoryAddress,
): Promise<{ key: string; summaries: StoredSummary[] }> {
	const store = openMemory(storage, address).summaries();
	const { doc } = await store.read();
	return { key: store.key, summaries: [...doc.summaries].reverse() };
}

/** Deletes one addressed memory (its document and sealed segments; copied files stay for housekeeping). */
export async function clearMemory(
	storage: MemoryStorage,
	address: MemoryAddress,
): Promise<{ key: string; existed: boolean }> {
	const key = memoryKeyOf(address);
	const existed = await documentStored(storage, key);
	await openMemory(storage, address).clear();
	return { key, existed };
}

/** What is stored for one conversation of an app. */
export interface ConversationSummary {
	conversationId: string;
	/** Whether the conversation has Conversation-mode memory. */
	conversationMemory: boolean;
	/** Nodes with Node-mode memory in this conversation (their stable IDs), sorted. */
	nodeIds: string[];
	/** Copied files. */
	files: number;
	/** Every stored object of the conversation (documents, sealed segments, files, other data). */
	objects: number;
	bytes: number;
	/** When anything of the conversation was last written. */
	lastModified: Date;
}

export interface ConversationList {
	conversations: ConversationSummary[];
	total: number;
	nextOffset: number | null;
}

/**
 * The conversations an app (n8n workflow) has stored, the most recently written first (ties by ID),
 * one page of them. Built from one listing of what each memory keeps of the app, read page by page.
 */
export async function listConversations(
	storage: MemoryStorage,
	appId: string,
	options: ScopeOptions & PageOptions = {},
): Promise<ConversationList> {
	validateId('app_id', appId);
	const page = pageOf(options);
	const byId = new Map<string, ConversationSummary>();
	const { all: memories } = memoriesOf(storage, options.keyPrefix);
	// Page by page: only each conversation's summary is kept, not every object it holds.
	const summarize = (h: HeldObject) => {
		if (h.kind === undefined) return;
		const o = h.object;
		let c = byId.get(h.conversationId);
		if (!c) {
			c = {
				conversationId: h.conversationId,
				conversationMemory: false,
				nodeIds: [],
				files: 0,
				objects: 0,
				bytes: 0,
				lastModified: o.lastModified,
			};
			byId.set(h.conversationId, c);
		}
		c.objects++;
		c.bytes += o.size;
		if (o.lastModified > c.lastModified) c.lastModified = o.lastModified;
		if (h.kind === 'conversation') c.conversationMemory = true;
		else if (h.kind === 'node') c.nodeIds.push(h.nodeId as string);
		else if (h.kind === 'file') c.files++;
	};
	for (const m of memories) await m.eachInWorkflow(appId, summarize);
	const all = [...byId.values()].sort(
		(a, b) =>
			b.lastModified.getTime() - a.lastModified.getTime() ||
			(a.conversationId < b.conversationId ? -1 : a.conversationId > b.conversationId ? 1 : 0),
	);
	for (const c of all) c.nodeIds.sort();
	const w = window(all.length, page, false);
	return { conversations: all.slice(w.from, w.to), total: all.length, nextOffset: w.nextOffset };
}
