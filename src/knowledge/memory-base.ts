// The Memory Base: each run's outputs captured per session and, past a threshold, ingested into a
// searchable knowledge base. Cursor written last, one sync at a time, regenerate on mismatch.
// This class is the front; each job lives in its own file (see src/README.md, "Memory Base").
import { capture } from './capture';
import { validateId } from '../keys/ids';
import { listSessions, readLog, sessionPages } from './capture-log';
import { clockOf, expireSession } from './expiry';
import { attachEvidence } from './evidence';
import type { WithEvidence } from './evidence';
import { deleteBase, forget, regenerate } from './lifecycle';
import type { ForgetOptions } from './lifecycle';
import { BaseParts } from './parts';
import type { CapturedMessage, MemoryBaseConfig } from './records';
import { exportSession, importSession } from './transfer';
import { listCaptured } from './listing';
import type { CapturedPage, CapturedQuery } from './listing';
import { recall, recallCandidates } from './recall';
import type { RecallCandidates, RecallOptions, RecallResult, RecallSearch } from './recall';
import { search, searchReport } from './search';
import { configure } from './settings';
import { status } from './status';
import { sync } from './sync';
import { upgradeNow } from './upgrade';
import { conversationsOfUser, deleteUserPartitions } from './users';
import { holdsNothing } from './wide';
import type {
	BaseStatus,
	StatusOptions,
	CaptureInput,
	CaptureResult,
	DeleteResult,
	ExpireResult,
	ForgetResult,
	MemoryBaseOptions,
	SearchMatch,
	SearchReport,
	SearchOptions,
	SyncResult,
} from './types';

/**
 * One memory base on a MemoryStorage. Every object is read and written through compare-and-swap or
 * write-once creates, so any number of processes (n8n's queue-mode workers) may use one base at a time;
 * nothing depends on what this process remembers between calls (decoded objects are cached per stored
 * version only, or for good under names that are never reused).
 */
export class MemoryBase {
	private readonly parts: BaseParts;

	constructor(options: MemoryBaseOptions) {
		this.parts = new BaseParts(options);
	}

	get storage() {
		return this.parts.storage;
	}

	get baseId(): string {
		return this.parts.baseId;
	}

	get keyPrefix(): string | undefined {
		return this.parts.keyPrefix;
	}

	/** The base's configuration, or null when it was never created (or was deleted). */
	config(): Promise<MemoryBaseConfig | null> {
		return this.parts.config();
	}

	/** Creates the base when missing, or changes its settings (see settings.ts). */
	configure(settings: { threshold?: number; autoCapture?: boolean } = {}) {
		return configure(this.parts, settings);
	}

	/** Appends one stride to a session's capture log; may sync the session (see capture.ts). */
	capture(
		input: CaptureInput,
		settings: { threshold?: number; autoCapture?: boolean } = {},
	): Promise<CaptureResult> {
		return capture(this.parts, input, settings, async (sessionId) => {
			return (await this.sync({ sessionId })).sessions[0];
		});
	}

	/** How many messages a conversation captured here (0 when none). One conditional read. */
	async captured(sessionId: string): Promise<number> {
		const { log } = await readLog(this.parts, validateId('session_id', sessionId));
		return log.next_seq - 1;
	}

	/** Captured messages, a page at a time: of one conversation, of one user, or of all (allUsers). */
	listMessages(options: CapturedQuery = {}): Promise<CapturedPage> {
		return listCaptured(this.parts, options);
	}

	/** The conversations in which this base captured the user's messages (see users.ts). */
	conversationsOfUser(userId: string): Promise<string[]> {
		return conversationsOfUser(this.parts, validateId('user_id', userId));
	}

	/**
	 * Deletes the user's partitions, once their conversations were forgotten (Forget User): their
	 * manifests name the user. Returns the keys deleted, and those rewritten (the registry).
	 */
	deleteUserPartitions(userId: string): Promise<{ deleted: string[]; rewritten: string[] }> {
		return deleteUserPartitions(this.parts, validateId('user_id', userId));
	}

	/** Every session with a capture log, by ID. */
	sessions(): Promise<string[]> {
		return listSessions(this.parts);
	}

	/** The same, a page of the listing at a time (a base of many conversations is never held whole). */
	sessionPages(): AsyncIterable<string[]> {
		return sessionPages(this.parts);
	}

	/**
	 * Whether the base holds no captured message: one read of its base-wide word index (which lists
	 * every conversation not yet taken in), or for an older layout one listing of its conversations.
	 */
	isEmpty(): Promise<boolean> {
		return holdsNothing(this.parts);
	}

	/** Ingests what is pending: one session, or every session (see sync.ts). */
	sync(options: { sessionId?: string } = {}): Promise<SyncResult> {
		return sync(this.parts, options);
	}

	/** The captured chunks most similar to `query` (see search.ts). */
	search(query: string, options: SearchOptions = {}): Promise<SearchMatch[]> {
		return search(this.parts, query, options);
	}

	/**
	 * As search, with what it did: how the fusion weighed words and vectors and why, how common the
	 * query's words are, and for a search of every conversation (`allUsers`) what it read: the
	 * base-wide index, up to which capture, and the conversations read from their logs (see wide.ts).
	 */
	searchReport(query: string, options: SearchOptions = {}): Promise<SearchReport> {
		return searchReport(this.parts, query, options);
	}

	/**
	 * Upgrades a base kept in an older layout now: one index for the whole base moved into partitions,
	 * the base-wide index built beside them (see upgrade.ts). SyncRunningError while a sync, Regenerate
	 * or Forget runs; `upgraded` false when it was up to date. Bases are also upgraded by the first
	 * search, capture or sync that finds them idle.
	 */
	upgrade(): Promise<{ baseId: string; upgraded: boolean; layout: string; wide: string }> {
		return upgradeNow(this.parts);
	}

	/**
	 * The matches with the captured message each names as its evidence (a learned fact's source turn),
	 * looked for among the messages captured shortly before it (see evidence.ts).
	 */
	withEvidence(hits: readonly SearchMatch[]): Promise<WithEvidence[]> {
		return attachEvidence(this.parts, hits);
	}

	/** Long-term memory for a model call: the best matches of one user or conversation, as one section (see recall.ts). */
	recall(options: RecallOptions): Promise<RecallResult> {
		return recall(this.parts, options);
	}

	/** What automatic recall may use for a message, before the window and budget (see recall.ts). */
	recallCandidates(options: RecallSearch): Promise<RecallCandidates> {
		return recallCandidates(this.parts, options);
	}

	/**
	 * Where each conversation stands, and whether the indexes hold what the logs say (see status.ts):
	 * of one conversation, or of a page of them (`after`, `limit`: 100 by default) and the base-wide
	 * index.
	 */
	status(options: StatusOptions = {}): Promise<BaseStatus> {
		return status(this.parts, options);
	}

	/** Rebuilds the knowledge base from the capture logs (see lifecycle.ts). */
	regenerate(): Promise<SyncResult> {
		return regenerate(this.parts);
	}

	/** Deletes everything of the base (see lifecycle.ts). */
	delete(options: { mode?: 'wait' | 'cancel'; timeoutMs?: number } = {}): Promise<DeleteResult> {
		return deleteBase(this.parts, options);
	}

	/**
	 * Forgets one conversation for good: its log, blocks and index rows (see lifecycle.ts). With
	 * `storeMustHold`, a connected store holding none of its embedded chunks is refused (another base's).
	 */
	forget(sessionId: string, options: ForgetOptions = {}): Promise<ForgetResult> {
		return forget(this.parts, sessionId, options);
	}

	/**
	 * Deletes one conversation's captures and their index entries if its log is past its Expire After
	 * (at `now`, default the base's clock); with `dryRun`, only says whether it is (see expiry.ts).
	 */
	expire(sessionId: string, options: { now?: Date; dryRun?: boolean } = {}): Promise<ExpireResult> {
		return expireSession(this.parts, sessionId, options.now ?? clockOf(this.parts), options);
	}

	/** Every message one conversation captured here, in order; null when none (see transfer.ts). */
	exportSession(sessionId: string): Promise<CapturedMessage[] | null> {
		return exportSession(this.parts, sessionId);
	}

	/** Stores exported messages as one conversation, IDs kept, pending until the next sync. */
	importSession(
		sessionId: string,
		messages: unknown,
		options: { overwrite?: boolean; path?: string } = {},
	): Promise<{ messages: number; replaced: string[] }> {
		return importSession(this.parts, sessionId, messages, options);
	}
}
