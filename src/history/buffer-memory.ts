import { randomUUID } from 'node:crypto';

import { defaultWarn } from '../common/warn';
import { DuplicateMessageIdError, UnknownParentMessageError } from '../errors';
import { sealedPrefix } from '../store/log-keys';
import { historyToText } from '../prompt/text';
import type { TextPrefixes } from '../prompt/text';
import { headCodec } from '../store/codec';
import { DocumentStore } from '../store/document-store';
import type { Versioned } from '../store/document-store';
import { MessageLog } from '../store/message-log';
import { checkExpireAfterDays, withRule } from '../store/retention';
import { emptyDocument, sealedCountOf } from '../store/schema';
import type { HeadDocument, StoredMessage } from '../store/schema';
import type { MemoryStorage } from '../store/storage';
import { encodingForModel, safeCounter, TiktokenCounter } from '../tokens/tokens';
import type { TokenCounter } from '../tokens/tokens';
import {
	collectThread,
	indexOfMessage,
	selectThread,
	THREAD_FACTS,
	threadStartIn,
	ThreadSpan,
} from './thread';
import type { ThreadLoader } from './thread';
import { promptHistory } from './thread-view';
import type { History, ThreadView } from './thread-view';
import { summarizedHistory } from './summarized';
import { SummaryStore } from './summary-store';
import { tokenLimit } from './truncate';
import { buildTurn } from './turn-builder';
import type { BufferedTurn, TurnContext } from './turn-builder';
import { discardExpired, isExpiredHead, readLiveHead } from './expiry';
import { checkTurnIds, turnMessages } from './turns';
import type { CheckedTurnIds } from './turns';
import { mergeBatch } from './turn-merge';

export { DEFAULT_MAX_TOOL_OUTPUT_CHARS } from './memory-types';
export type {
	AddedTurn,
	FlushResult,
	HistoryOptions,
	MemoryOptions,
	ReplyInput,
	TurnIds,
	TurnInput,
} from './memory-types';
import { toolResultsPolicy } from './tool-results';
import type { ToolResultsPolicy } from './tool-results';
import type {
	AddedTurn,
	FlushResult,
	HistoryOptions,
	MemoryOptions,
	TurnIds,
	TurnInput,
} from './memory-types';
export type { History };

type Doc = Versioned<HeadDocument>;

/**
 * Shared engine of both memory scopes: one document per key. Reads always ask storage for the current
 * version (cheap when unchanged), turns are buffered, and flush() appends them with compare-and-swap.
 */
export abstract class BufferMemory {
	readonly key: string;
	protected readonly storage: MemoryStorage;
	private readonly store: DocumentStore<HeadDocument>;
	/** The document's messages across its head and its sealed segments. */
	private readonly log: MessageLog;
	private readonly filesPrefix: string;
	private readonly counter: TokenCounter;
	private readonly options: MemoryOptions;
	/** Expire After (days) this memory's writes store: undefined keeps the stored rule, 0 removes it. */
	private readonly expireAfterDays?: number;
	/** What is stored of tool turns (checked when the memory is built). */
	private readonly toolResults: ToolResultsPolicy;
	/** The document as last read or written; flush() tries its version first. */
	private snapshot?: Doc;
	private pending: BufferedTurn[] = [];
	/**
	 * Message IDs of turns being added or waiting to be flushed. Taken synchronously when addMessages
	 * starts, so two concurrent calls with one ID can never both pass the duplicate check.
	 */
	private readonly reserved = new Set<string>();
	/** Random UUIDs newMessageId() drew and no turn has used yet (they need no lookup either). */
	private readonly drawn = new Set<string>();

	protected constructor(key: string, filesPrefix: string, options: MemoryOptions) {
		this.key = key;
		this.filesPrefix = filesPrefix;
		this.options = options;
		this.storage = options.storage;
		this.expireAfterDays = checkExpireAfterDays(options.expireAfterDays);
		this.toolResults = toolResultsPolicy(options);
		const gzip = options.gzip === true;
		this.store = new DocumentStore(this.storage, headCodec(gzip), {
			maxAttempts: options.maxFlushAttempts,
			retryBaseMs: options.retryBaseMs,
		});
		this.log = new MessageLog(this.store, key, THREAD_FACTS, { log: options.log, gzip });
		const warn = options.onWarning ?? defaultWarn;
		const onFailure = (error: unknown) =>
			warn(
				`Token counting failed (${(error as Error)?.message ?? error}); used the UTF-8 byte length as an upper bound`,
			);
		this.counter = options.tokenCounter
			? safeCounter(options.tokenCounter, onFailure)
			: new TiktokenCounter(encodingForModel(options.model), onFailure);
	}

	private now(): Date {
		return (this.options.now ?? (() => new Date()))();
	}

	/**
	 * Reads the current stored version (a conditional read: no transfer when unchanged). A document past
	 * its stored Expire After reads as not stored, and is deleted (see readLiveHead).
	 */
	private async refresh(): Promise<Doc> {
		const attempts = this.options.maxFlushAttempts;
		this.snapshot = await readLiveHead(this.store, this.key, () => this.now(), attempts);
		return this.snapshot;
	}

	/** The head's messages plus pending turns not stored yet, in order. */
	private viewOf(doc: HeadDocument): readonly StoredMessage[] {
		const waiting = this.pending.filter(
			(t) => indexOfMessage(doc.messages, t.assistant.message_id) === undefined,
		);
		return waiting.length ? [...doc.messages, ...waiting.flatMap(turnMessages)] : doc.messages;
	}

	/** The conversation as loaded so far (the head's messages and pending turns), by position. */
	private spanOf(doc: HeadDocument): ThreadSpan {
		const start = sealedCountOf(doc);
		const view = this.viewOf(doc);
		const span = new ThreadSpan(this.key, start + view.length);
		span.add({ start, messages: view });
		return span;
	}

	/** Loads sealed segments of `doc` for a walk that needs them. */
	private loaderFor(doc: HeadDocument): ThreadLoader {
		return { load: (gap) => this.log.load(doc, gap), skip: (gap) => this.log.skip(doc, gap) };
	}

	/**
	 * Stored messages (read now), sealed ones included, plus turns added but not flushed yet, in order.
	 * Reads the whole conversation: for export and tests; turns use thread() or the history.
	 */
	async messages(): Promise<readonly StoredMessage[]> {
		const doc = (await this.refresh()).doc;
		const view = this.viewOf(doc);
		if (sealedCountOf(doc) === 0) return view;
		return [...(await this.log.sealedMessages(doc)), ...view];
	}

	/**
	 * One thread, oldest first, pending turns included: the one ending at `parentMessageId` (the newest
	 * message when omitted), or only its newest `maxMessages`. Sealed segments are read only as far back
	 * as that needs, so a bounded read costs the same at any conversation length.
	 */
	async thread(
		options: { parentMessageId?: string | null; maxMessages?: number } = {},
	): Promise<StoredMessage[]> {
		const doc = (await this.refresh()).doc;
		const span = this.spanOf(doc);
		const loader = this.loaderFor(doc);
		const start = await threadStartIn(span, loader, options.parentMessageId);
		return collectThread(span, loader, start, options.maxMessages);
	}

	/**
	 * Which of these message IDs are taken: stored (the head, or sealed segments searched through their
	 * filters) or held by a pending turn of this object. Costs about the same at any conversation length.
	 */
	async takenIds(ids: readonly string[]): Promise<Set<string>> {
		const doc = (await this.refresh()).doc;
		const span = this.spanOf(doc);
		const taken = new Set(ids.filter((id) => span.find(id) !== undefined || this.reserved.has(id)));
		const rest = ids.filter((id) => !taken.has(id));
		if (rest.length > 0 && sealedCountOf(doc) > 0)
			for (const id of (await this.log.find(doc, rest)).keys()) taken.add(id);
		return taken;
	}

	/**
	 * Throws when a turn with these IDs could not be stored on top of `doc`: an ID the caller chose
	 * (`deep`) that is stored already, in the head, a pending turn or a sealed segment (searched guided by
	 * the filters), or an explicit parent that is not stored anywhere. A random UUID the engine drew is
	 * not looked up: it cannot be stored yet.
	 */
	private async checkAgainst(
		doc: HeadDocument,
		span: ThreadSpan,
		ids: CheckedTurnIds,
		deep: boolean,
	): Promise<void> {
		if (deep)
			for (const id of [ids.messageId, ids.userMessageId])
				if (id !== undefined && span.find(id) !== undefined)
					throw new DuplicateMessageIdError(this.key, ids.messageId as string);
		if (deep && ids.messageId !== undefined && sealedCountOf(doc) > 0) {
			const stored = await this.log.find(doc, [ids.messageId, ids.userMessageId as string]);
			if (stored.size > 0) throw new DuplicateMessageIdError(this.key, ids.messageId);
		}
		if (ids.parent === '') throw new UnknownParentMessageError(this.key, ids.parent);
		if (typeof ids.parent === 'string') await threadStartIn(span, this.loaderFor(doc), ids.parent);
	}

	/**
	 * Checks every ID a turn will use (format, not stored yet, parent known) against the current
	 * document, so a bad ID fails before the model is called rather than after.
	 */
	async checkTurn(ids: TurnIds): Promise<void> {
		const checked = checkTurnIds(ids);
		const doc = (await this.refresh()).doc;
		await this.checkAgainst(doc, this.spanOf(doc), checked, true);
	}

	/**
	 * The thread a new turn with these IDs follows, after checking them (format, new message ID, known
	 * parent): one conditional read of the document. For readers beside this class (summaries).
	 */
	async openThread(options: HistoryOptions = {}): Promise<ThreadView> {
		const ids = checkTurnIds({
			messageId: options.messageId,
			parentMessageId: options.parentMessageId,
		});
		const doc = (await this.refresh()).doc;
		const span = this.spanOf(doc);
		const loader = this.loaderFor(doc);
		await this.checkAgainst(doc, span, ids, true);
		const start = await threadStartIn(span, loader, options.parentMessageId);
		return {
			storage: this.storage,
			counter: this.counter,
			files: this.options.files,
			span,
			loader,
			start,
			parentMessageId: start >= 0 ? (span.at(start) as StoredMessage).message_id : null,
			now: this.options.now ?? (() => new Date()),
		};
	}

	/** This memory's summaries of older turns (HistoryOptions.summary), kept beside its document. */
	summaries(): SummaryStore {
		const { maxFlushAttempts: maxAttempts, retryBaseMs } = this.options;
		return new SummaryStore(this.storage, this.key, { maxAttempts, retryBaseMs });
	}

	async getHistoryPromptMessages(options: HistoryOptions = {}): Promise<History> {
		tokenLimit(options.maxTokenLimit); // an unusable limit fails before any storage access
		if (options.summary) return await summarizedHistory(this, options, options.summary);
		const view = await this.openThread(options);
		const selection = await selectThread(view.span, view.loader, view.start, options);
		return promptHistory(view, selection, options.imageDetail);
	}

	async getHistoryPromptText(options: HistoryOptions & TextPrefixes = {}): Promise<string> {
		return historyToText((await this.getHistoryPromptMessages(options)).messages, options);
	}

	/**
	 * The ID of a turn about to be added, drawn as addMessages draws one, for a caller that needs it
	 * first (LLM with Memory saves a data version naming its turn before adding the turn). A random
	 * UUID, so, like addMessages' own, it is not looked up in the stored messages when the turn is added.
	 */
	newMessageId(): string {
		const id = (this.options.newId ?? randomUUID)();
		if (!this.options.newId) this.drawn.add(id);
		return id;
	}

	/** Buffers one turn (tokenized now, once); files are copied to storage. Call flush() to persist. */
	async addMessages(turn: TurnInput): Promise<AddedTurn> {
		const ids = checkTurnIds({
			messageId: turn.messageId ?? (this.options.newId ?? randomUUID)(),
			parentMessageId: turn.parentMessageId,
		});
		const messageId = ids.messageId as string;
		const userMessageId = ids.userMessageId as string;
		// Reserve both IDs before the first await: a concurrent call with the same ID is refused here.
		for (const id of [messageId, userMessageId])
			if (this.reserved.has(id)) throw new DuplicateMessageIdError(this.key, messageId);
		this.reserved.add(messageId).add(userMessageId);
		// IDs the engine drew itself (random UUIDs) cannot be stored already: they are not looked up.
		const drawn = turn.messageId !== undefined && this.drawn.delete(turn.messageId);
		const callerIds = (turn.messageId !== undefined && !drawn) || this.options.newId !== undefined;
		try {
			const doc = (this.snapshot ?? (await this.refresh())).doc;
			const span = this.spanOf(doc);
			await this.checkAgainst(doc, span, ids, callerIds);
			const parent =
				ids.parent === undefined ? (span.at(span.total - 1)?.message_id ?? null) : ids.parent;
			this.pending.push(
				await buildTurn(this.turnContext(), { messageId, userMessageId, parent }, turn, {
					implicitParent: ids.parent === undefined,
					callerIds,
				}),
			);
			return { messageId, userMessageId, parentMessageId: parent };
		} catch (error) {
			this.reserved.delete(messageId);
			this.reserved.delete(userMessageId);
			throw error;
		}
	}

	private turnContext(): TurnContext {
		return {
			storage: this.storage,
			filesPrefix: this.filesPrefix,
			counter: this.counter,
			createdAt: (this.options.now ?? (() => new Date()))().toISOString(),
			toolResults: this.toolResults,
			files: this.options.files ?? {},
		};
	}

	/**
	 * Persists the turns buffered so far with a conditional write. On a conflict it reloads, merges by
	 * message ID and retries with jittered backoff. Only the turns it wrote leave the buffer: a turn
	 * added while it runs waits for the next flush. A stored document it cannot read is never overwritten.
	 * When the head outgrows its limits, its oldest messages are first sealed into write-once segments
	 * (docs/format.md); the write of the head is what makes them part of the conversation.
	 */
	async flush(): Promise<FlushResult> {
		const batch = this.pending.slice();
		if (batch.length === 0) return { written: false, attempts: 0 };
		let result;
		/** A document that expired after it was read is replaced, never appended to. */
		let replaced: HeadDocument | undefined;
		try {
			result = await this.store.update(
				this.key,
				async (current) => {
					const now = this.now();
					replaced = isExpiredHead(current, now) ? current.doc : undefined;
					const next = await mergeBatch(
						this.log,
						this.key,
						replaced ? emptyDocument() : current.doc,
						batch,
					);
					return next && withRule(next, this.expireAfterDays, now);
				},
				this.snapshot,
			);
		} catch (error) {
			this.snapshot = undefined; // the next attempt starts from what is stored, never from a stale copy
			throw error;
		}
		if (replaced && result.written)
			await discardExpired(this.store, this.key, await this.log.reachable(replaced));
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
		// The head first: a writer still holding it then fails its compare-and-swap instead of referencing
		// what is deleted next.
		await this.store.delete(this.key);
		for (const o of await this.storage.list(sealedPrefix(this.key)))
			await this.store.deleteWriteOnce(o.key);
		this.snapshot = { doc: emptyDocument(), version: null };
	}
}
