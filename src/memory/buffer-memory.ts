import { randomUUID } from 'node:crypto';

import { isMissing } from '../common/missing';
import { defaultWarn } from '../common/warn';
import type { WarningHandler } from '../common/warn';
import { DuplicateMessageIdError, UnknownParentMessageError } from '../errors';
import { indexOfMessage, threadStart, walkThread } from '../history/thread';
import { encodingForModel, safeCounter, TiktokenCounter } from '../history/tokens';
import type { TokenCounter } from '../history/tokens';
import { selectHistory, tokenLimit } from '../history/truncate';
import type { SelectOptions } from '../history/truncate';
import { mergeTurns, STEP_SUFFIX, USER_SUFFIX, turnMessages } from '../history/turns';
import type { PendingTurn } from '../history/turns';
import { validateDerivedId, validateId } from '../keys/ids';
import { messageTokenCount, rebuildFiles } from '../prompt/files';
import type { SkippedFile } from '../prompt/files';
import { historyToText } from '../prompt/text';
import type { TextPrefixes } from '../prompt/text';
import type { ContentPart, ImageDetail, PromptMessage, ToolCall } from '../prompt/types';
import { storeFile } from '../store/blobs';
import type { FileInput } from '../store/blobs';
import { decodeDocument, encodeDocument } from '../store/codec';
import { DocumentStore } from '../store/document-store';
import type { Versioned } from '../store/document-store';
import { assertAppendable, emptyDocument } from '../store/schema';
import type { MemoryDocument, StoredFile, StoredMessage } from '../store/schema';
import type { MemoryStorage } from '../store/storage';

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
	onWarning?: WarningHandler;
	/** Tool results longer than this many characters are cut, with a note (default 16,000). */
	maxToolOutputChars?: number;
}

/** Default cap of a stored tool result: a web page or a table dump would otherwise crowd out history. */
export const DEFAULT_MAX_TOOL_OUTPUT_CHARS = 16_000;

/**
 * A message between the user's message and the final answer of a tool-using turn: the assistant asking
 * for tools (`toolCalls`), or a tool's result (`toolCallId`).
 */
export type ReplyInput =
	| { role: 'assistant'; content: string; toolCalls: readonly ToolCall[] }
	| { role: 'tool'; content: string; toolCallId: string; name?: string };

/** One dialogue turn to append. The turn's ID is the assistant message's ID. */
export interface TurnInput {
	/** ID of the new turn; a random UUID when omitted. At most 200 bytes. */
	messageId?: string;
	/**
	 * The turn this one follows. Omitted (or ''): the newest stored turn, re-checked when flushing.
	 * `null`: the root, so the turn starts a thread of its own (regenerating the first answer).
	 */
	parentMessageId?: string | null;
	userContent: string;
	userFiles?: readonly FileInput[];
	/**
	 * A tool turn's steps, stored in order between the user's message and the final answer (IDs
	 * `<id>:step<n>`), so history replays them and windows never split a call from its result.
	 */
	steps?: readonly ReplyInput[];
	assistantContent: string;
	assistantFiles?: readonly FileInput[];
}

/** The IDs a turn will use, checked before the model is called. */
export type TurnIds = Pick<TurnInput, 'messageId' | 'parentMessageId'>;

export interface AddedTurn {
	messageId: string;
	userMessageId: string;
	parentMessageId: string | null;
}

export interface HistoryOptions extends SelectOptions {
	/** The message the new turn follows: omitted means the newest stored turn, null the root (no history). */
	parentMessageId?: string | null;
	/** The ID the new turn will use: checked (format, not stored yet) in the same read. */
	messageId?: string;
	/** Vision detail for rebuilt images; the model's default when omitted. */
	imageDetail?: ImageDetail;
}

export interface History {
	messages: PromptMessage[];
	tokens: number;
	turns: number;
	droppedTurns: number;
	skippedFiles: SkippedFile[];
	/** Where the thread was read from: the parent of the turn being generated (null: the root). */
	parentMessageId: string | null;
}

export interface FlushResult {
	written: boolean;
	attempts: number;
}

type Doc = Versioned<MemoryDocument>;

/**
 * Shared engine of both memory scopes: one document per key. Reads always ask storage for the current
 * version (cheap when unchanged), turns are buffered, and flush() appends them with compare-and-swap.
 */
export abstract class BufferMemory {
	readonly key: string;
	protected readonly storage: MemoryStorage;
	private readonly store: DocumentStore<MemoryDocument>;
	private readonly filesPrefix: string;
	private readonly counter: TokenCounter;
	private readonly options: MemoryOptions;
	/** The document as last read or written; flush() tries its version first. */
	private snapshot?: Doc;
	private pending: PendingTurn[] = [];
	/**
	 * Message IDs of turns being added or waiting to be flushed. Taken synchronously when addMessages
	 * starts, so two concurrent calls with one ID can never both pass the duplicate check.
	 */
	private readonly reserved = new Set<string>();

	protected constructor(key: string, filesPrefix: string, options: MemoryOptions) {
		this.key = key;
		this.filesPrefix = filesPrefix;
		this.options = options;
		this.storage = options.storage;
		const gzip = options.gzip === true;
		this.store = new DocumentStore(
			this.storage,
			{ decode: decodeDocument, encode: (doc) => encodeDocument(doc, { gzip }), empty: emptyDocument },
			{ maxAttempts: options.maxFlushAttempts, retryBaseMs: options.retryBaseMs },
		);
		const warn = options.onWarning ?? defaultWarn;
		const onFailure = (error: unknown) =>
			warn(`Token counting failed (${(error as Error)?.message ?? error}); used the UTF-8 byte length as an upper bound`);
		this.counter = options.tokenCounter
			? safeCounter(options.tokenCounter, onFailure)
			: new TiktokenCounter(encodingForModel(options.model), onFailure);
	}

	/** Reads the current stored version (a conditional read: no transfer when unchanged). */
	private async refresh(): Promise<Doc> {
		this.snapshot = await this.store.read(this.key);
		return this.snapshot;
	}

	/** Stored messages plus pending turns not stored yet, in order. */
	private viewOf(doc: MemoryDocument): readonly StoredMessage[] {
		const waiting = this.pending.filter((t) => indexOfMessage(doc.messages, t.assistant.message_id) === undefined);
		return waiting.length ? [...doc.messages, ...waiting.flatMap(turnMessages)] : doc.messages;
	}

	/** Stored messages (read now) plus turns added but not flushed yet, in order. */
	async messages(): Promise<readonly StoredMessage[]> {
		return this.viewOf((await this.refresh()).doc);
	}

	/** Format of a turn's IDs; its derived user-message ID. No storage access. */
	private turnIds(ids: TurnIds): { messageId?: string; userMessageId?: string; parent?: string | null } {
		const messageId = ids.messageId === undefined ? undefined : validateId('message_id', ids.messageId);
		const parent = isMissing(ids.parentMessageId)
			? (ids.parentMessageId as null | undefined)
			: validateId('parent_message_id', ids.parentMessageId);
		const userMessageId = messageId === undefined ? undefined : validateDerivedId('message_id', `${messageId}${USER_SUFFIX}`);
		return { messageId, userMessageId, parent: parent === undefined ? undefined : parent };
	}

	/** Throws when a turn with these IDs could not be stored on top of `view`. */
	private checkAgainst(view: readonly StoredMessage[], ids: ReturnType<BufferMemory['turnIds']>): void {
		for (const id of [ids.messageId, ids.userMessageId])
			if (id !== undefined && indexOfMessage(view, id) !== undefined) throw new DuplicateMessageIdError(this.key, ids.messageId as string);
		if (typeof ids.parent === 'string' && indexOfMessage(view, ids.parent) === undefined)
			throw new UnknownParentMessageError(this.key, ids.parent);
	}

	/**
	 * Checks every ID a turn will use (format, not stored yet, parent known) against the current
	 * document, so a bad ID fails before the model is called rather than after.
	 */
	async checkTurn(ids: TurnIds): Promise<void> {
		const checked = this.turnIds(ids);
		this.checkAgainst(this.viewOf((await this.refresh()).doc), checked);
	}

	async getHistoryPromptMessages(options: HistoryOptions = {}): Promise<History> {
		tokenLimit(options.maxTokenLimit); // an unusable limit fails before any storage access
		const ids = this.turnIds({ messageId: options.messageId, parentMessageId: options.parentMessageId });
		const view = this.viewOf((await this.refresh()).doc);
		this.checkAgainst(view, ids);
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
		const tool: Partial<PromptMessage> = m.tool_calls
			? { tool_calls: m.tool_calls.map((c) => ({ id: c.id, name: c.name, args: { ...c.args } })) }
			: m.role === 'tool'
				? { tool_call_id: m.tool_call_id, ...(m.name !== undefined ? { name: m.name } : {}) }
				: {};
		if (m.files.length === 0) return { role: m.role, content: m.content, ...tool };
		const rebuilt = await rebuildFiles(this.storage, m.message_id, m.files, detail);
		skipped.push(...rebuilt.skipped);
		if (rebuilt.parts.length === 0) return { role: m.role, content: m.content, ...tool };
		const parts: ContentPart[] = rebuilt.parts;
		if (m.content) parts.push({ type: 'text', text: m.content });
		return { role: m.role, content: parts, ...tool };
	}

	/** Buffers one turn (tokenized now, once); files are copied to storage. Call flush() to persist. */
	async addMessages(turn: TurnInput): Promise<AddedTurn> {
		const ids = this.turnIds({ messageId: turn.messageId ?? (this.options.newId ?? randomUUID)(), parentMessageId: turn.parentMessageId });
		const messageId = ids.messageId as string;
		const userMessageId = ids.userMessageId as string;
		// Reserve both IDs before the first await: a concurrent call with the same ID is refused here.
		for (const id of [messageId, userMessageId]) if (this.reserved.has(id)) throw new DuplicateMessageIdError(this.key, messageId);
		this.reserved.add(messageId).add(userMessageId);
		try {
			const view = this.viewOf((this.snapshot ?? (await this.refresh())).doc);
			this.checkAgainst(view, ids);
			const parent = ids.parent === undefined ? (view.length ? view[view.length - 1].message_id : null) : ids.parent;
			const createdAt = (this.options.now ?? (() => new Date()))().toISOString();
			const userFiles = await this.storeFiles(turn.userFiles, 'user');
			const assistantFiles = await this.storeFiles(turn.assistantFiles, 'assistant');
			const message = (id: string, parentId: string | null, role: StoredMessage['role'], content: string, files: StoredFile[]): StoredMessage => ({
				message_id: id,
				parent_message_id: parentId,
				role,
				content,
				files,
				token_count: messageTokenCount(this.counter, content, files),
				created_at: createdAt,
			});
			const steps: StoredMessage[] = [];
			let previous = userMessageId;
			for (const [n, step] of (turn.steps ?? []).entries()) {
				const id = validateDerivedId('message_id', `${messageId}${STEP_SUFFIX}${n}`);
				const stored =
					step.role === 'assistant'
						? { ...message(id, previous, 'assistant', step.content, []), tool_calls: step.toolCalls.map((c) => ({ id: c.id, name: c.name, args: { ...c.args } })) }
						: { ...message(id, previous, 'tool', this.capToolOutput(step.content), []), tool_call_id: step.toolCallId, ...(step.name !== undefined ? { name: step.name } : {}) };
				if (stored.tool_calls) stored.token_count += this.counter.count(JSON.stringify(stored.tool_calls));
				steps.push(stored);
				previous = id;
			}
			this.pending.push({
				user: message(userMessageId, parent, 'user', turn.userContent, userFiles),
				steps,
				assistant: message(messageId, previous, 'assistant', turn.assistantContent, assistantFiles),
				implicitParent: ids.parent === undefined,
			});
			return { messageId, userMessageId, parentMessageId: parent };
		} catch (error) {
			this.reserved.delete(messageId);
			this.reserved.delete(userMessageId);
			throw error;
		}
	}

	private capToolOutput(content: string): string {
		const max = this.options.maxToolOutputChars ?? DEFAULT_MAX_TOOL_OUTPUT_CHARS;
		if (content.length <= max) return content;
		return `${content.slice(0, max)}\n[… ${content.length - max} more characters of tool output were not kept in memory]`;
	}

	private async storeFiles(files: readonly FileInput[] | undefined, belongsTo: StoredFile['belongs_to']): Promise<StoredFile[]> {
		const out: StoredFile[] = [];
		for (const f of files ?? []) out.push(await storeFile(this.storage, this.filesPrefix, f, belongsTo));
		return out;
	}

	/**
	 * Persists the turns buffered so far with a conditional write. On a conflict it reloads, merges by
	 * message ID and retries with jittered backoff. Only the turns it wrote leave the buffer: a turn
	 * added while it runs waits for the next flush. A stored document it cannot read is never overwritten.
	 */
	async flush(): Promise<FlushResult> {
		const batch = this.pending.slice();
		if (batch.length === 0) return { written: false, attempts: 0 };
		let result;
		try {
			result = await this.store.update(
				this.key,
				(current) => {
					const merged = mergeTurns(this.key, current.doc.messages, batch);
					if (merged.added === 0) return undefined;
					assertAppendable(this.key, (id) => indexOfMessage(current.doc.messages, id) !== undefined, merged.messages.slice(current.doc.messages.length));
					return { ...current.doc, messages: merged.messages };
				},
				this.snapshot,
			);
		} catch (error) {
			this.snapshot = undefined; // the next attempt starts from what is stored, never from a stale copy
			throw error;
		}
		this.snapshot = result.current;
		this.pending = this.pending.filter((t) => !batch.includes(t));
		for (const t of batch) {
			this.reserved.delete(t.assistant.message_id);
			this.reserved.delete(t.user.message_id);
		}
		return { written: result.written, attempts: result.attempts };
	}

	/** Deletes this memory's document and drops unflushed turns. Copied files stay for housekeeping. */
	async clear(): Promise<void> {
		this.pending = [];
		this.reserved.clear();
		await this.store.delete(this.key);
		this.snapshot = { doc: emptyDocument(), version: null };
	}
}
