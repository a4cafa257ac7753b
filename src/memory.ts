import { randomUUID } from 'node:crypto';

import { decodeDocument, emptyDocument, encodeDocument } from './document';
import type { MemoryDocument, StoredFile, StoredMessage } from './document';
import {
	ConflictError,
	DuplicateMessageIdError,
	FlushConflictError,
	MissingConversationIdError,
	UnknownParentMessageError,
} from './errors';
import { documentCache } from './document-cache';
import { messageTokenCount, rebuildFiles, storeFile } from './files';
import type { FileInput, SkippedFile } from './files';
import { validateId } from './ids';
import { KeyedQueue } from './keyed-queue';
import { conversationFilesPrefix, conversationMemoryKey, nodeMemoryKey } from './keys';
import { historyToText } from './prompt-text';
import type { TextPrefixes } from './prompt-text';
import type { ContentPart, ImageDetail, PromptMessage } from './prompt-types';
import type { MemoryStorage } from './storage/storage';
import { indexOfMessage, threadStart, walkThread } from './thread';
import { encodingForModel, safeCounter, TiktokenCounter } from './tokens';
import type { TokenCounter } from './tokens';
import { selectHistory } from './truncate';
import type { SelectOptions } from './truncate';

export interface MemoryOptions {
	storage: MemoryStorage;
	/** Optional prefix before every key, e.g. a tenant ("acme/"). */
	keyPrefix?: string;
	/** Model name; picks the tokenizer encoding. */
	model?: string;
	/** Replaces the js-tiktoken counter (its failures fall back to a byte-length bound). */
	tokenCounter?: TokenCounter;
	/** Store documents gzipped; reading accepts both forms either way. */
	gzip?: boolean;
	/** Conditional-write attempts before flush() gives up (default 12). */
	maxFlushAttempts?: number;
	/** First retry delay in ms; doubles per attempt, capped at 1 s, with full jitter (default 5). */
	retryBaseMs?: number;
	now?: () => Date;
	newId?: () => string;
	/** Non-fatal problems (tokenizer fallback). Default: process.emitWarning. */
	onWarning?: (message: string) => void;
}

/** One dialogue turn to append. The turn's ID is the assistant message's ID. */
export interface TurnInput {
	/** ID of the new turn; a random UUID when omitted. */
	messageId?: string;
	/** The turn this one follows. Omitted: the newest stored turn (re-checked when flushing). */
	parentMessageId?: string | null;
	userContent: string;
	userFiles?: readonly FileInput[];
	assistantContent: string;
	assistantFiles?: readonly FileInput[];
}

export interface AddedTurn {
	messageId: string;
	userMessageId: string;
	parentMessageId: string | null;
}

export interface HistoryOptions extends SelectOptions {
	/** The message the new turn follows; omitted means the newest stored turn. */
	parentMessageId?: string | null;
	/** Vision detail for rebuilt images; the model's default when omitted. */
	imageDetail?: ImageDetail;
}

export interface History {
	messages: PromptMessage[];
	tokens: number;
	turns: number;
	droppedTurns: number;
	skippedFiles: SkippedFile[];
	/** Where the thread was read from: the parent of the turn being generated. */
	parentMessageId: string | null;
}

export interface FlushResult {
	written: boolean;
	attempts: number;
}

interface PendingTurn {
	user: StoredMessage;
	assistant: StoredMessage;
	implicitParent: boolean;
}

const USER_SUFFIX = ':user';
const flushQueue = new KeyedQueue();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function sameMessage(a: StoredMessage, b: StoredMessage): boolean {
	return a.role === b.role && a.content === b.content && a.files.length === b.files.length;
}

/**
 * Appends pending turns to the stored messages (turns are append-only; message IDs identify them).
 * A turn already stored with the same content is skipped; a turn whose parent was implicit follows
 * whatever is newest now, so concurrent turns form one thread instead of hiding each other.
 */
export function mergeTurns(
	key: string,
	stored: readonly StoredMessage[],
	pending: readonly PendingTurn[],
): { messages: StoredMessage[]; added: number } {
	const out = stored.slice();
	let added = 0;
	let newest = out.length ? out[out.length - 1].message_id : null;
	for (const turn of pending) {
		const hasUser = indexOfMessage(stored, turn.user.message_id);
		const hasAssistant = indexOfMessage(stored, turn.assistant.message_id);
		if (hasUser !== undefined || hasAssistant !== undefined) {
			const same =
				hasUser !== undefined &&
				hasAssistant !== undefined &&
				sameMessage(stored[hasUser], turn.user) &&
				sameMessage(stored[hasAssistant], turn.assistant);
			if (!same) throw new DuplicateMessageIdError(key, turn.assistant.message_id);
			continue;
		}
		const user = turn.implicitParent ? { ...turn.user, parent_message_id: newest } : turn.user;
		out.push(user, turn.assistant);
		newest = turn.assistant.message_id;
		added++;
	}
	return { messages: out, added };
}

/** Shared engine of both memory scopes: one JSON document per key, read once, appended, flushed with CAS. */
abstract class BufferMemory {
	readonly key: string;
	/** Identifies this document in the process-wide cache and the in-process flush queue. */
	private readonly cacheId: string;
	protected readonly storage: MemoryStorage;
	private readonly filesPrefix: string;
	private readonly counter: TokenCounter;
	private readonly options: MemoryOptions;
	private loaded?: { doc: MemoryDocument; version: string | null };
	private pending: PendingTurn[] = [];
	private view: readonly StoredMessage[] = [];

	protected constructor(key: string, filesPrefix: string, options: MemoryOptions) {
		this.key = key;
		this.filesPrefix = filesPrefix;
		this.options = options;
		this.storage = options.storage;
		this.cacheId = `${this.storage.describe()}\n${key}`;
		const warn = options.onWarning ?? ((m: string) => process.emitWarning(m, 'LlmMemoryWarning'));
		const onFailure = (error: unknown) =>
			warn(`Token counting failed (${(error as Error)?.message ?? error}); used the UTF-8 byte length as an upper bound`);
		this.counter = options.tokenCounter
			? safeCounter(options.tokenCounter, onFailure)
			: new TiktokenCounter(encodingForModel(options.model), onFailure);
	}

	/** Stored messages plus turns added but not flushed yet, in order. */
	async messages(): Promise<readonly StoredMessage[]> {
		await this.ensureLoaded();
		return this.view;
	}

	/**
	 * The stored document: decoded once per version, then a conditional read that skips the body.
	 * (A cached entry of an older version never matches, so it needs no eviction here.)
	 */
	private async read(): Promise<{ doc: MemoryDocument; version: string | null }> {
		const cached = documentCache.get(this.cacheId);
		const got = await this.storage.get(this.key, { ifNoneMatch: cached?.version });
		if (!got) return { doc: emptyDocument(), version: null };
		if ('notModified' in got) return { doc: (cached as { doc: MemoryDocument }).doc, version: got.version };
		return { doc: documentCache.set(this.cacheId, got.version, decodeDocument(this.key, got.body)), version: got.version };
	}

	private setLoaded(loaded: { doc: MemoryDocument; version: string | null }): void {
		this.loaded = loaded;
		this.view = this.pending.length
			? [...loaded.doc.messages, ...this.pending.flatMap((t) => [t.user, t.assistant])]
			: loaded.doc.messages;
	}

	private async ensureLoaded(): Promise<void> {
		if (!this.loaded) this.setLoaded(await this.read());
	}

	async getHistoryPromptMessages(options: HistoryOptions = {}): Promise<History> {
		await this.ensureLoaded();
		const view = this.view;
		const start = threadStart(this.key, view, options.parentMessageId);
		const selection = selectHistory(walkThread(this.key, view, start), options);
		const messages: PromptMessage[] = [];
		const skippedFiles: SkippedFile[] = [];
		for (const turn of selection.turns) {
			for (const m of [turn.user, ...turn.replies]) messages.push(await this.toPrompt(m, skippedFiles, options.imageDetail));
		}
		return {
			messages,
			tokens: selection.tokens,
			turns: selection.turns.length,
			droppedTurns: selection.droppedTurns,
			skippedFiles,
			parentMessageId: start >= 0 ? view[start].message_id : null,
		};
	}

	async getHistoryPromptText(options: HistoryOptions & TextPrefixes = {}): Promise<string> {
		return historyToText((await this.getHistoryPromptMessages(options)).messages, options);
	}

	private async toPrompt(m: StoredMessage, skipped: SkippedFile[], detail?: ImageDetail): Promise<PromptMessage> {
		if (m.files.length === 0) return { role: m.role, content: m.content };
		const rebuilt = await rebuildFiles(this.storage, m.message_id, m.files, detail);
		skipped.push(...rebuilt.skipped);
		if (rebuilt.parts.length === 0) return { role: m.role, content: m.content };
		const parts: ContentPart[] = rebuilt.parts;
		if (m.content) parts.push({ type: 'text', text: m.content });
		return { role: m.role, content: parts };
	}

	/** Buffers one turn (tokenized now, once); files are copied to storage. Call flush() to persist. */
	async addMessages(turn: TurnInput): Promise<AddedTurn> {
		await this.ensureLoaded();
		const messageId = validateId('message_id', turn.messageId ?? (this.options.newId ?? randomUUID)());
		const userMessageId = validateId('message_id', `${messageId}${USER_SUFFIX}`);
		for (const id of [messageId, userMessageId])
			if (indexOfMessage(this.view, id) !== undefined) throw new DuplicateMessageIdError(this.key, messageId);
		const explicit = turn.parentMessageId !== undefined && turn.parentMessageId !== null && turn.parentMessageId !== '';
		let parent: string | null;
		if (explicit) {
			parent = validateId('parent_message_id', turn.parentMessageId);
			if (indexOfMessage(this.view, parent) === undefined) throw new UnknownParentMessageError(this.key, parent);
		} else {
			parent = this.view.length ? this.view[this.view.length - 1].message_id : null;
		}
		const createdAt = (this.options.now ?? (() => new Date()))().toISOString();
		const userFiles = await this.storeFiles(turn.userFiles, 'user');
		const assistantFiles = await this.storeFiles(turn.assistantFiles, 'assistant');
		const user: StoredMessage = {
			message_id: userMessageId,
			parent_message_id: parent,
			role: 'user',
			content: turn.userContent,
			files: userFiles,
			token_count: messageTokenCount(this.counter, turn.userContent, userFiles),
			created_at: createdAt,
		};
		const assistant: StoredMessage = {
			message_id: messageId,
			parent_message_id: userMessageId,
			role: 'assistant',
			content: turn.assistantContent,
			files: assistantFiles,
			token_count: messageTokenCount(this.counter, turn.assistantContent, assistantFiles),
			created_at: createdAt,
		};
		this.pending.push({ user, assistant, implicitParent: !explicit });
		this.setLoaded(this.loaded as { doc: MemoryDocument; version: string | null });
		return { messageId, userMessageId, parentMessageId: parent };
	}

	private async storeFiles(files: readonly FileInput[] | undefined, belongsTo: StoredFile['belongs_to']): Promise<StoredFile[]> {
		const out: StoredFile[] = [];
		for (const f of files ?? []) out.push(await storeFile(this.storage, this.filesPrefix, f, belongsTo));
		return out;
	}

	/**
	 * Persists buffered turns with a conditional write. On a conflict it reloads, merges by message ID
	 * and retries with jittered backoff. A stored document it cannot read is never overwritten.
	 */
	async flush(): Promise<FlushResult> {
		if (this.pending.length === 0) return { written: false, attempts: 0 };
		return flushQueue.run(this.cacheId, () => this.flushNow());
	}

	private async flushNow(): Promise<FlushResult> {
		const maxAttempts = this.options.maxFlushAttempts ?? 12;
		const baseMs = this.options.retryBaseMs ?? 5;
		await this.ensureLoaded();
		let base = this.loaded as { doc: MemoryDocument; version: string | null };
		for (let attempt = 1; ; attempt++) {
			const merged = mergeTurns(this.key, base.doc.messages, this.pending);
			if (merged.added === 0) {
				this.pending = [];
				this.setLoaded(base);
				return { written: false, attempts: attempt };
			}
			const doc: MemoryDocument = { ...base.doc, messages: merged.messages };
			try {
				const { version } = await this.storage.put(this.key, encodeDocument(doc, { gzip: this.options.gzip }), {
					ifVersion: base.version,
					contentType: 'application/json',
				});
				this.pending = [];
				this.setLoaded({ doc: documentCache.set(this.cacheId, version, doc), version });
				return { written: true, attempts: attempt };
			} catch (error) {
				if (!(error instanceof ConflictError)) throw error;
				if (attempt >= maxAttempts) throw new FlushConflictError(this.key, attempt);
			}
			await sleep(Math.random() * Math.min(1000, baseMs * 2 ** (attempt - 1)));
			base = await this.read();
		}
	}

	/** Deletes this memory's document and drops unflushed turns. Copied files stay for housekeeping. */
	async clear(): Promise<void> {
		this.pending = [];
		documentCache.delete(this.cacheId);
		await this.storage.delete(this.key);
		this.setLoaded({ doc: emptyDocument(), version: null });
	}
}

/** Conversation scope: every node of the app shares one history per conversation. */
export class TokenBufferMemory extends BufferMemory {
	constructor(appId: string, conversationId: string, options: MemoryOptions) {
		super(
			conversationMemoryKey(appId, conversationId, options.keyPrefix),
			conversationFilesPrefix(appId, conversationId, options.keyPrefix),
			options,
		);
	}
}

/** Node scope: each node keeps its own history per conversation. Needs a conversation ID. */
export class NodeTokenBufferMemory extends BufferMemory {
	constructor(appId: string, conversationId: string | null | undefined, nodeId: string, options: MemoryOptions) {
		if (conversationId === undefined || conversationId === null || conversationId === '')
			throw new MissingConversationIdError();
		super(
			nodeMemoryKey(appId, conversationId, nodeId, options.keyPrefix),
			conversationFilesPrefix(appId, conversationId, options.keyPrefix),
			options,
		);
	}
}
