// The Memory Base's public shapes: options, inputs and results of its operations, and its defaults.
import { mapLimit, MAX_PARALLEL } from '../common/parallel';
import type { MemoryStorage } from '../store/storage';
import type { ExternalVectorStore } from '../indexes';

export type { ExternalVectorStore };

/** An embedding model (n8n's embedding sub-nodes hand over LangChain Embeddings; duck-typed). */
export interface Embedder {
	embedDocuments(texts: string[]): Promise<number[][]>;
	embedQuery(text: string): Promise<number[]>;
}

export function isEmbedder(value: unknown): value is Embedder {
	const e = value as Embedder;
	return (
		typeof e === 'object' &&
		e !== null &&
		typeof e.embedDocuments === 'function' &&
		typeof e.embedQuery === 'function'
	);
}

export const DEFAULT_THRESHOLD = 10;
/** Half-life of automatic recall: a newer statement of a fact outranks an older one of the same weight. */
export const RECALL_HALF_LIFE_DAYS = 180;
/** Chunks per embedDocuments call. */
export const DEFAULT_EMBEDDING_BATCH = 64;
/** How long a sync lock lasts without renewal (renewed every third of it while its holder works). */
export const DEFAULT_LEASE_MS = 120_000;
/**
 * Captured messages kept inline in a session log: past this, a capture first moves the inline ones
 * into a write-once sealed block, so no capture rewrites more than this many messages.
 */
export const SEAL_AT = 32;
/** Inline bytes (UTF-8 text) past which a capture seals, whatever the count: long outputs seal sooner. */
export const SEAL_AT_BYTES = 32 * 1024;
/** Parallel reads and lock takes. */
export const PARALLEL = MAX_PARALLEL;

/** Runs `fn` over items, PARALLEL at a time, results in order. */
export const inBatches = <T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> =>
	mapLimit(items, PARALLEL, fn);

export interface MemoryBaseOptions {
	storage: MemoryStorage;
	/** The base's ID (in n8n: the workflow ID by default; Flow = workflow). */
	baseId: string;
	keyPrefix?: string;
	/** Its knowledge base's ID (default: the base ID), used when the base is created. */
	knowledgeBaseId?: string;
	/** Needed to sync, regenerate and search. */
	embedder?: Embedder;
	/** Instead of the embedded index: a connected vector store (LangChain VectorStore, duck-typed). */
	vectorStore?: ExternalVectorStore;
	/** Settings a new base is created with (see configure() to change them). */
	threshold?: number;
	autoCapture?: boolean;
	/** Characters per chunk (default 1,000) and overlap (default 100), as Langflow's memory base. */
	chunkSize?: number;
	chunkOverlap?: number;
	/** Chunks per embedDocuments call (default 64). */
	embeddingBatchSize?: number;
	/** Sync lock duration in ms (default 120,000): a crashed sync blocks the next one at most this long. */
	leaseMs?: number;
	/** Compare-and-swap attempts per document (default 12). */
	maxAttempts?: number;
	/**
	 * Bytes of this base's decoded index segments the process may keep (default: up to the process-wide
	 * vector cache, LLM_MEMORY_VECTOR_CACHE_MB, 512 MiB). It caps this base only; other bases keep theirs.
	 * The buckets of cell tiers its searches of every conversation read are kept apart, up to a quarter
	 * as much again.
	 */
	vectorCacheBytes?: number;
	/** The clock: capture times, and when a stored Expire After has passed (default: the system clock). */
	now?: () => Date;
}

/** A JSON value kept with a captured message (the caller's own reference to its source). */
export type CaptureMetadata = Record<string, unknown>;

/** One message to capture, with what the caller wants to find it by again. */
export interface CaptureMessageInput {
	text: string;
	/** Who said it ("user", "assistant", …); kept as given. */
	role?: string;
	/** Kept with the message and returned by search (e.g. the chat message's ID), at most 4 KiB as JSON. */
	metadata?: CaptureMetadata;
}

/** A turn said before the one being captured (see CaptureInput.earlier). */
export interface EarlierTurn {
	runId: string;
	messages: CaptureMessageInput[];
	/** When it was said (saved to chat memory). */
	saidAt: string | Date;
}

export interface CaptureInput {
	sessionId: string;
	/**
	 * The user the conversation belongs to (a string; checked like every ID): search can then recall
	 * across every conversation of that user, and never another user's.
	 */
	userId?: string;
	/** The execution (stride) the outputs come from. */
	runId: string;
	/** This run's outputs for the session; empty texts are skipped. */
	texts?: string[];
	/** The same with a role and metadata each (used instead of, or after, `texts`). */
	messages?: CaptureMessageInput[];
	/**
	 * Earlier turns of the conversation that may have missed their capture (a storage outage), oldest
	 * first, at most 8 looked at: those the log does not hold and that were said after its last capture
	 * are captured first, in the same write. So a turn saved to chat memory but not captured is made up
	 * by the next. Give each its stable run ID (the same as its own capture used), so a turn is never
	 * captured twice. Nothing is made up for a conversation with no capture log (never captured, or
	 * forgotten).
	 */
	earlier?: EarlierTurn[];
	/**
	 * Expire After (days), stored with the conversation's capture log and counted from its last capture:
	 * past it, its captures are left out of search and deleted (with their index entries) by the next
	 * capture into it or by Prune Expired. Undefined keeps the stored rule; 0 removes it.
	 */
	expireAfterDays?: number;
}

/** What an expiry check of one conversation's captures found and did (see expireSession). */
export interface ExpireResult {
	baseId: string;
	sessionId: string;
	/** The capture log was past its Expire After and is gone (or, in a dry run, would go). */
	expired: boolean;
	/** Set when it was expired but kept: a capture came first, or a sync of it is running. */
	skipped?: string;
	messages: number;
	vectors: number;
	lexical: number;
	deleted: string[];
}

export interface SessionSyncResult {
	sessionId: string;
	/** Messages ingested by this sync (the range it took at its start). */
	messages: number;
	chunks: number;
	/** The cursor before and after. */
	from: number;
	cursor: number;
	totalProcessed: number;
	lastSyncAt: string | null;
	/** Messages captured but not (yet) ingested, after this sync. */
	pending: number;
}

export interface SyncResult {
	baseId: string;
	/** Each conversation's result, in the order synced: the first thousand of a whole base. */
	sessions: SessionSyncResult[];
	messages: number;
	chunks: number;
	/** Conversations synced (sessions lists the first thousand of them). */
	conversations: number;
}

export interface CaptureResult {
	sessionId: string;
	/** Messages this capture added (0 for an empty stride or a repeated capture of the same run). */
	captured: number;
	/** The IDs of the messages this capture stored, in input order (empty texts left out). */
	ids: string[];
	/** Earlier turns this capture made up (they had missed their own capture). */
	caughtUp?: number;
	/** Messages ever captured for the session. */
	total: number;
	pending: number;
	/** Without an embedding model: what `pending` means (searchable by words now, embedded later). */
	pendingNote?: string;
	processed: number;
	threshold: number;
	autoCapture: boolean;
	/** The sync this capture ran (pending reached the threshold with auto capture on). */
	sync?: SessionSyncResult;
	/** Why that sync did not run or failed; the stride is captured all the same and waits for the next sync. */
	syncError?: Error;
}

/** Which rankings a search uses: both fused (the default with an embedding model), or one. */
export type SearchMode = 'hybrid' | 'lexical' | 'vector';

export interface SearchOptions {
	/** How many results (default 4, at most 1,000). */
	k?: number;
	/** Only this conversation's chunks. */
	sessionId?: string;
	/** Only this user's chunks, across every conversation of the base. */
	userId?: string;
	/**
	 * Every user's chunks: a search without sessionId or userId is refused unless this is true, so a
	 * forgotten user ID can never return another user's memories.
	 */
	allUsers?: boolean;
	/** Default "hybrid" with an embedding model (or connected store), "lexical" without. */
	mode?: SearchMode;
	/** Only chunks captured at or after / at or before these times. */
	since?: string | Date;
	until?: string | Date;
	/**
	 * Weigh newer chunks up: the recency bonus (up to 0.3) halves every this many days, so a chunk this
	 * old counts 0.85 and a very old one 0.7 (default: off).
	 */
	halfLifeDays?: number;
	/** "Now" for the half-life (default: the clock). */
	now?: Date;
	/**
	 * Only matches whose cosine similarity with the query is at least this (−1 … 1; needs an embedding
	 * model). A match whose similarity is unknown (a word match a connected vector store did not
	 * return) is left out too.
	 */
	minSimilarity?: number;
}

export interface SearchMatch {
	text: string;
	/**
	 * Fused score, 0 … 1: each ranking used scaled over its candidates (its best 1), weighed, times the
	 * recency factor with a half-life. It orders the results of one search; it is not comparable
	 * across searches (see similarity and lexicalScore for that).
	 */
	score: number;
	/** Cosine similarity of the chunk with the query (−1 … 1), when an embedding model ranked it. */
	similarity?: number;
	/** BM25 score of the chunk's own words for the query (0: it came in beside a match), in word and hybrid search. */
	lexicalScore?: number;
	/** Found as the message beside a match of the query's words (an answer after its question). */
	context?: true;
	sessionId: string;
	/** The user the capture named, if any. */
	userId?: string;
	runId: string;
	messageId: string;
	seq: number;
	chunkIndex: number;
	capturedAt: string;
	/** What the capture said of the message (omitted when it said nothing). */
	role?: string;
	metadata?: CaptureMetadata;
	/** Its place (1 = first) in the lexical and the vector ranking, when it was in them. */
	lexicalRank?: number;
	vectorRank?: number;
}

/** What a search did to fuse its rankings, so a user can see why its matches came in that order. */
export interface FusionReport {
	/** The rankings used: both (hybrid), the words only (lexical) or the vectors only (vector). */
	mode: SearchMode;
	/** In hybrid search, what each ranking weighed (summing to 1). */
	weights?: { words: number; vectors: number };
	/** Why, in words. */
	basis?: string;
	/**
	 * How far the vectors' best match stood out, as a multiple of how far their best match stands out
	 * for word salad of this base's words (about 1: the model finds questions' answers no better than
	 * chance; well above 1: it finds what questions are about).
	 */
	vectorEvidence?: number;
	/** The evidence the weights followed: this search's, leaning on the base's earlier searches. */
	weighedEvidence?: number;
}

/** A search's matches, what its fusion did, and how common the query's words are in its scope. */
export interface SearchReport {
	matches: SearchMatch[];
	fusion: FusionReport;
	/** With the word ranking: the messages in scope, and how many of them hold each query word. */
	words?: { messages: number; terms: Array<{ term: string; messages: number }> };
	/** A search of every conversation: what it read (the base-wide index, up to which capture). */
	coverage?: WideCoverage;
}

/** What a search of every conversation read (MemoryBase.searchReport, Status). */
export interface WideCoverage {
	/**
	 * "base-wide index": that index, and the conversations read from their capture logs; "partitions":
	 * every partition, while the base-wide index is being built (or before an upgrade built it).
	 */
	source: 'base-wide index' | 'partitions';
	state: 'none' | 'building' | 'ready';
	/** Since when the base-wide index takes every write. */
	since?: string | null;
	/** Since when Regenerate refills it: its vectors are missing until Regenerate ends. */
	refill?: string;
	/** Chunks the base-wide word index holds, and the newest capture time among them. */
	chunks: number | null;
	newestCapture: string | null;
	/**
	 * Conversations whose newest messages, captured but not yet taken into the index, are read from
	 * their capture logs (at most 64 plus the few captures running; past that, captures fold them).
	 */
	recentConversations: number | null;
	/** Vectors the base-wide vector index holds, and when it last took some (a sync). */
	vectors: number | null;
	lastSync: string | null;
}

export interface SessionStatus {
	sessionId: string;
	cursor: number;
	cursorMessageId: string | null;
	totalProcessed: number;
	lastSyncAt: string | null;
	captured: number;
	pending: number;
	syncRunning: boolean;
	/** Metadata says messages were processed, but the index holds none of this session's (or lost some). */
	mismatch: boolean;
}

export interface BaseStatus {
	baseId: string;
	knowledgeBaseId: string;
	exists: boolean;
	threshold: number | null;
	autoCapture: boolean | null;
	vectorStore: 'embedded' | 'external';
	/**
	 * The embedded vector index (an external store is not counted): the partitions of the conversations
	 * checked (the whole base's when they all fit on one page; a base with one index: that index).
	 */
	index: IndexFigures | null;
	/** The lexical index, likewise (null when the base does not exist). */
	lexical: LexicalFigures | null;
	dimensions: number | null;
	syncRunning: boolean;
	mismatch: boolean;
	mismatchReason: string | null;
	/** The base-wide index a search of every conversation reads, as a search reports it (null for one conversation's Status). */
	wide: WideCoverage | null;
	/** The conversations checked: the one asked for, or a page of the base's, in folder order. */
	sessions: SessionStatus[];
	/** The last conversation of this page when more follow: pass it as `after` for the next page. */
	nextAfter: string | null;
}

/** What a vector index holds, as Status gives it. */
export interface IndexFigures {
	exists: boolean;
	vectors: number;
	segments: number;
	missingSegments: number;
}

/** What a word index holds, as Status gives it. */
export interface LexicalFigures {
	exists: boolean;
	chunks: number;
	segments: number;
	missingSegments: number;
}

/** Which conversations a Status checks: one, or a page of the base's (`after`, `limit`). */
export interface StatusOptions {
	sessionId?: string;
	after?: string;
	limit?: number;
}

export interface DeleteResult {
	baseId: string;
	deleted: number;
	/** Syncs that were running when the deletion started. */
	waitedFor: number;
}

export interface ForgetResult {
	baseId: string;
	sessionId: string;
	/** Captured messages removed. */
	messages: number;
	/** Vectors (chunks) removed from the index. */
	vectors: number;
	/** Chunks removed from the lexical index. */
	lexical: number;
	/** Storage keys deleted. */
	deleted: string[];
	/**
	 * Storage keys written anew without the conversation's data: the index manifests, and the index
	 * segments that replace deleted ones (they hold other conversations' chunks).
	 */
	rewritten: string[];
}
