// The Memory Base: each run's outputs captured per session and, past a threshold, ingested into a
// searchable knowledge base. Cursor written last, one sync at a time, regenerate on mismatch.
// See src/README.md ("Memory Base") for the layout and the rules.
import { randomBytes, randomUUID } from 'node:crypto';

import { sleep } from '../common/sleep';
import {
	CorruptDocumentError,
	DimensionMismatchError,
	InvalidInputError,
	InvalidOptionError,
	KnowledgeBaseInUseError,
	MemoryBaseDeletingError,
	SyncCancelledError,
	SyncRunningError,
} from '../errors';
import { validateDerivedId, validateId } from '../keys/ids';
import {
	captureLogKey,
	captureSealedKey,
	knowledgeBaseMetadataKey,
	knowledgeBasePrefix,
	memoryBaseConfigKey,
	memoryBaseLeaseKey,
	memoryBasePrefix,
	memoryBaseSessionPrefix,
	memoryBaseSessionsPrefix,
	sessionLeaseKey,
} from '../keys/layout';
import { encodeJson } from '../store/codec';
import { DocumentStore } from '../store/document-store';
import type { MemoryStorage } from '../store/storage';
import {
	checkChunking,
	chunkId,
	chunkText,
	DEFAULT_CHUNK_OVERLAP,
	DEFAULT_CHUNK_SIZE,
} from './chunking';
import { ExternalIndex } from './external-store';
import type { ExternalVectorStore } from './external-store';
import { acquireLease, isFresh, readLease } from './lease';
import type { HeldLease } from './lease';
import { configCodec, decodeSealedMessages, emptyLog, logCodec, metadataCodec } from './records';
import type {
	CapturedMessage,
	KnowledgeBaseMetadata,
	MemoryBaseConfig,
	SealedRange,
	SessionLog,
} from './records';
import {
	EmbeddedIndex,
	ensureVectorCache,
	MAX_TOP_K,
	normaliseRows,
	SEGMENT_MAX_VECTORS,
} from './vector-index';
import type { IndexedChunk, VectorMatch } from './vector-index';

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
/** Chunks per embedDocuments call. */
export const DEFAULT_EMBEDDING_BATCH = 64;
/** How long a sync lock lasts without renewal (renewed every third of it while its holder works). */
export const DEFAULT_LEASE_MS = 120_000;
/** Processed messages kept inline in a session log before a sync moves them into a sealed block. */
export const SEAL_AT = 64;
/** Parallel reads and lock takes. */
const PARALLEL = 16;

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
	/** Bytes of decoded index segments this process may keep (default 512 MiB; only raises the limit). */
	vectorCacheBytes?: number;
}

export interface CaptureInput {
	sessionId: string;
	/** The execution (stride) the outputs come from. */
	runId: string;
	/** This run's outputs for the session; empty texts are skipped. */
	texts: string[];
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
	sessions: SessionSyncResult[];
	messages: number;
	chunks: number;
}

export interface CaptureResult {
	sessionId: string;
	/** Messages this capture added (0 for an empty stride or a repeated capture of the same run). */
	captured: number;
	/** Messages ever captured for the session. */
	total: number;
	pending: number;
	processed: number;
	threshold: number;
	autoCapture: boolean;
	/** The sync this capture ran (pending reached the threshold with auto capture on). */
	sync?: SessionSyncResult;
	/** Why that sync did not run or failed; the stride is captured all the same and waits for the next sync. */
	syncError?: Error;
}

export interface SearchMatch {
	text: string;
	score: number;
	sessionId: string;
	runId: string;
	messageId: string;
	seq: number;
	chunkIndex: number;
	capturedAt: string;
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
	/** Embedded index only (an external store is not counted). */
	index: { exists: boolean; vectors: number; segments: number; missingSegments: number } | null;
	dimensions: number | null;
	syncRunning: boolean;
	mismatch: boolean;
	mismatchReason: string | null;
	sessions: SessionStatus[];
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
	/** Storage keys deleted. */
	deleted: string[];
}

type Leases = { base?: HeldLease; sessions: Map<string, HeldLease> };

function checkPositiveInt(option: string, value: number, min = 1): number {
	if (!Number.isSafeInteger(value) || value < min)
		throw new InvalidOptionError(option, `must be a whole number ≥ ${min}, got ${String(value)}`);
	return value;
}

function toMatch(m: VectorMatch): SearchMatch {
	return {
		text: m.text,
		score: m.score,
		sessionId: m.session_id,
		runId: m.run_id,
		messageId: m.message_id,
		seq: m.seq,
		chunkIndex: m.chunk_index,
		capturedAt: m.created_at,
	};
}

/**
 * One memory base on a MemoryStorage. Every object is read and written through compare-and-swap or
 * write-once creates, so any number of processes (n8n's queue-mode workers) may use one base at a time;
 * nothing depends on what this process remembers between calls (decoded objects are cached per stored
 * version only).
 */
export class MemoryBase {
	readonly storage: MemoryStorage;
	readonly baseId: string;
	readonly keyPrefix?: string;
	private readonly options: MemoryBaseOptions;
	private readonly configs: DocumentStore<MemoryBaseConfig>;
	private readonly logs: DocumentStore<SessionLog>;
	private readonly metadata: DocumentStore<KnowledgeBaseMetadata>;
	private readonly blocks: DocumentStore<unknown>;
	private readonly chunkSize: number;
	private readonly chunkOverlap: number;
	private readonly batchSize: number;
	private readonly leaseMs: number;
	private readonly maxAttempts: number;

	constructor(options: MemoryBaseOptions) {
		this.options = options;
		this.storage = options.storage;
		this.baseId = options.baseId;
		this.keyPrefix = options.keyPrefix;
		memoryBasePrefix(options.baseId, options.keyPrefix); // checks the ID now
		if (options.knowledgeBaseId !== undefined)
			knowledgeBasePrefix(options.knowledgeBaseId, options.keyPrefix);
		this.chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
		this.chunkOverlap = options.chunkOverlap ?? DEFAULT_CHUNK_OVERLAP;
		checkChunking(this.chunkSize, this.chunkOverlap);
		this.batchSize = checkPositiveInt(
			'embeddingBatchSize',
			options.embeddingBatchSize ?? DEFAULT_EMBEDDING_BATCH,
		);
		this.leaseMs = checkPositiveInt('leaseMs', options.leaseMs ?? DEFAULT_LEASE_MS, 100);
		this.maxAttempts = checkPositiveInt('maxAttempts', options.maxAttempts ?? 12);
		if (options.threshold !== undefined) checkPositiveInt('threshold', options.threshold);
		if (options.vectorCacheBytes !== undefined) ensureVectorCache(options.vectorCacheBytes);
		const o = { maxAttempts: this.maxAttempts };
		this.configs = new DocumentStore(this.storage, configCodec, o);
		this.logs = new DocumentStore(this.storage, logCodec, o);
		this.metadata = new DocumentStore(this.storage, metadataCodec, o);
		// Write-once sealed blocks only (readImmutable, create): its codec is never used.
		this.blocks = new DocumentStore<unknown>(this.storage, configCodec);
	}

	// ── keys and parts ───────────────────────────────────────────────────────────────────────────

	private get configKey(): string {
		return memoryBaseConfigKey(this.baseId, this.keyPrefix);
	}

	private logKey(sessionId: string): string {
		return captureLogKey(this.baseId, sessionId, this.keyPrefix);
	}

	private get vectorStoreKind(): 'embedded' | 'external' {
		return this.options.vectorStore ? 'external' : 'embedded';
	}

	/** The base's configuration, or null when it was never created (or was deleted). */
	async config(): Promise<MemoryBaseConfig | null> {
		const { doc, version } = await this.configs.read(this.configKey);
		return version === null ? null : doc;
	}

	private async knowledgeBaseId(): Promise<string> {
		return (await this.config())?.kb_id ?? this.options.knowledgeBaseId ?? this.baseId;
	}

	private index(kbId: string): EmbeddedIndex {
		return new EmbeddedIndex(this.storage, kbId, this.keyPrefix, this.maxAttempts);
	}

	private external(): ExternalIndex | undefined {
		return this.options.vectorStore
			? new ExternalIndex(this.options.vectorStore, this.baseId)
			: undefined;
	}

	private embedder(what: string): Embedder {
		if (!this.options.embedder)
			throw new InvalidOptionError('embedder', `${what} needs an embedding model`);
		return this.options.embedder;
	}

	// ── configuration ────────────────────────────────────────────────────────────────────────────

	/**
	 * Creates the base (and its knowledge base, flagged is_memory_base) when missing, or changes its
	 * settings. Costs one conditional read when nothing changes. A new threshold is only compared with
	 * the pending count at the next capture: nothing is ingested because of the change itself, and a
	 * running sync keeps the range it took.
	 */
	async configure(
		settings: { threshold?: number; autoCapture?: boolean } = {},
	): Promise<MemoryBaseConfig> {
		if (settings.threshold !== undefined) checkPositiveInt('threshold', settings.threshold);
		let created = false;
		const result = await this.configs.update(this.configKey, (cur) => {
			const now = new Date().toISOString();
			if (cur.version === null) {
				created = true;
				return {
					base_id: this.baseId,
					kb_id: this.options.knowledgeBaseId ?? this.baseId,
					threshold: settings.threshold ?? this.options.threshold ?? DEFAULT_THRESHOLD,
					auto_capture: settings.autoCapture ?? this.options.autoCapture ?? true,
					created_at: now,
					updated_at: now,
				};
			}
			if (cur.doc.deleting) throw new MemoryBaseDeletingError(this.baseId);
			const threshold = settings.threshold ?? cur.doc.threshold;
			const auto = settings.autoCapture ?? cur.doc.auto_capture;
			if (threshold === cur.doc.threshold && auto === cur.doc.auto_capture) return undefined;
			return { ...cur.doc, threshold, auto_capture: auto, updated_at: now };
		});
		const config = result.current.doc;
		if (created) await this.ensureKnowledgeBase(config.kb_id);
		return config;
	}

	/** The knowledge base's metadata, created when missing; refused when it belongs to something else. */
	private async ensureKnowledgeBase(kbId: string): Promise<KnowledgeBaseMetadata> {
		const key = knowledgeBaseMetadataKey(kbId, this.keyPrefix);
		const result = await this.metadata.update(key, (cur) => {
			if (cur.version !== null) {
				if (!cur.doc.is_memory_base || cur.doc.memory_base_id !== this.baseId)
					throw new KnowledgeBaseInUseError(
						kbId,
						cur.doc.is_memory_base ? cur.doc.memory_base_id : undefined,
					);
				return undefined;
			}
			const now = new Date().toISOString();
			return {
				kb_id: kbId,
				is_memory_base: true,
				memory_base_id: this.baseId,
				vector_store: this.vectorStoreKind,
				dimensions: null,
				chunk_size: this.chunkSize,
				chunk_overlap: this.chunkOverlap,
				created_at: now,
				updated_at: now,
			};
		});
		return result.current.doc;
	}

	/** Records the vector dimensions (first ingestion); other dimensions than recorded are refused. */
	private async recordDimensions(kbId: string, dimensions: number, reset = false): Promise<void> {
		const key = knowledgeBaseMetadataKey(kbId, this.keyPrefix);
		await this.metadata.update(key, (cur) => {
			if (cur.version === null) return undefined;
			if (cur.doc.dimensions === dimensions && cur.doc.vector_store === this.vectorStoreKind)
				return undefined;
			if (!reset && cur.doc.dimensions !== null && cur.doc.dimensions !== dimensions)
				throw new DimensionMismatchError(kbId, cur.doc.dimensions, dimensions);
			return {
				...cur.doc,
				dimensions,
				vector_store: this.vectorStoreKind,
				updated_at: new Date().toISOString(),
			};
		});
	}

	// ── capture ──────────────────────────────────────────────────────────────────────────────────

	/**
	 * Appends one stride (this run's outputs for a session) to the session's capture log: one
	 * compare-and-swap of the log (plus a conditional read of the configuration). The same run captured
	 * again with the same texts (a retried execution) is not added twice. With auto capture on and the
	 * session's pending count at or above the threshold, the session is then synced; a sync that is
	 * already running (or fails) leaves the stride pending for the next one (see syncError).
	 */
	async capture(
		input: CaptureInput,
		settings: { threshold?: number; autoCapture?: boolean } = {},
	): Promise<CaptureResult> {
		const sessionId = validateId('session_id', input?.sessionId);
		const runId = validateDerivedId('run_id', String(input?.runId ?? ''));
		if (!Array.isArray(input.texts) || input.texts.some((t) => typeof t !== 'string'))
			throw new InvalidInputError('texts', 'must be an array of strings');
		const texts = input.texts.filter((t) => t.trim() !== '');
		const config = await this.configure(settings);
		let added = 0;
		const result = await this.logs.update(this.logKey(sessionId), (cur) => {
			const now = new Date().toISOString();
			const log = cur.version === null ? emptyLog(sessionId, now) : cur.doc;
			added = 0;
			if (texts.length === 0) return undefined;
			const ofRun = log.messages.filter((m) => m.run_id === runId).map((m) => m.text);
			if (ofRun.length === texts.length && ofRun.every((t, i) => t === texts[i])) return undefined;
			const messages: CapturedMessage[] = texts.map((text, i) => ({
				seq: log.next_seq + i,
				id: randomUUID(),
				run_id: runId,
				text,
				created_at: now,
			}));
			added = messages.length;
			return {
				...log,
				next_seq: log.next_seq + messages.length,
				updated_at: now,
				messages: [...log.messages, ...messages],
			};
		});
		const log = result.current.version === null ? emptyLog(sessionId, '') : result.current.doc;
		const out: CaptureResult = {
			sessionId,
			captured: added,
			total: log.next_seq - 1,
			pending: log.next_seq - 1 - log.cursor,
			processed: log.total_processed,
			threshold: config.threshold,
			autoCapture: config.auto_capture,
		};
		if (!config.auto_capture || out.pending < config.threshold) return out;
		try {
			const synced = await this.sync({ sessionId });
			out.sync = synced.sessions[0];
			if (out.sync) {
				out.pending = out.sync.pending;
				out.processed = out.sync.totalProcessed;
			}
		} catch (error) {
			out.syncError = error as Error;
		}
		return out;
	}

	// ── leases ───────────────────────────────────────────────────────────────────────────────────

	private running(
		sessionId: string | null,
		lease: { acquired_at: string; expires_at: string; operation: string } | undefined,
	): SyncRunningError {
		return new SyncRunningError(
			this.baseId,
			sessionId,
			lease?.acquired_at,
			lease?.expires_at,
			lease?.operation,
		);
	}

	private async takeSession(sessionId: string, operation: string): Promise<HeldLease> {
		return acquireLease(
			this.storage,
			sessionLeaseKey(this.baseId, sessionId, this.keyPrefix),
			{ ttlMs: this.leaseMs, operation },
			(lease) => this.running(sessionId, lease),
		);
	}

	private async release(leases: Leases): Promise<void> {
		await Promise.all([...leases.sessions.values()].map((l) => l.release().catch(() => {})));
		await leases.base?.release().catch(() => {});
	}

	/**
	 * Runs `fn` holding the locks a sync needs: for one session, that session's lock (and no whole-base
	 * operation running); for the whole base, the base's lock and every session's. Any of them held by
	 * another sync: SyncRunningError, with nothing changed.
	 */
	private async locked<T>(
		sessionId: string | undefined,
		operation: string,
		fn: (sessions: string[], leases: Leases) => Promise<T>,
	): Promise<T> {
		const leases: Leases = { sessions: new Map() };
		try {
			if (sessionId !== undefined) {
				leases.sessions.set(sessionId, await this.takeSession(sessionId, operation));
				const base = await readLease(this.storage, memoryBaseLeaseKey(this.baseId, this.keyPrefix));
				if (base && isFresh(base.lease)) throw this.running(null, base.lease);
				return await fn([sessionId], leases);
			}
			leases.base = await acquireLease(
				this.storage,
				memoryBaseLeaseKey(this.baseId, this.keyPrefix),
				{ ttlMs: this.leaseMs, operation },
				(lease) => this.running(null, lease),
			);
			const sessions = await this.sessions();
			for (let i = 0; i < sessions.length; i += PARALLEL) {
				const batch = sessions.slice(i, i + PARALLEL);
				const taken = await Promise.allSettled(batch.map((s) => this.takeSession(s, operation)));
				taken.forEach((t, j) => {
					if (t.status === 'fulfilled') leases.sessions.set(batch[j], t.value);
				});
				const failed = taken.find((t) => t.status === 'rejected');
				if (failed) throw (failed as PromiseRejectedResult).reason;
			}
			return await fn(sessions, leases);
		} finally {
			await this.release(leases);
		}
	}

	/** Every session with a capture log, by ID. One listing of the sessions folder. */
	async sessions(): Promise<string[]> {
		const prefix = memoryBaseSessionsPrefix(this.baseId, this.keyPrefix);
		const ids = new Set<string>();
		for (const o of await this.storage.list(prefix)) {
			const rest = o.key.slice(prefix.length).split('/');
			if (rest.length === 2 && rest[1] === 'log.json') ids.add(rest[0]);
		}
		return [...ids].sort();
	}

	// ── sync ─────────────────────────────────────────────────────────────────────────────────────

	/**
	 * Ingests what is pending (the seed's flush), whatever the threshold: one session, or every session
	 * of the base. SyncRunningError when a sync of that session, or of the whole base, is running.
	 */
	async sync(options: { sessionId?: string } = {}): Promise<SyncResult> {
		const sessionId =
			options.sessionId === undefined ? undefined : validateId('session_id', options.sessionId);
		const embedder = this.embedder('Sync');
		const config = await this.config();
		if (config?.deleting) throw new MemoryBaseDeletingError(this.baseId);
		return this.locked(
			sessionId,
			sessionId === undefined ? 'sync of the whole base' : 'sync',
			async (sessions, leases) => {
				const kbId = config?.kb_id ?? (await this.configure()).kb_id;
				await this.ensureKnowledgeBase(kbId);
				const results: SessionSyncResult[] = [];
				for (const s of sessions)
					results.push(await this.ingest(s, kbId, embedder, leases.sessions.get(s) as HeldLease));
				return this.summary(results);
			},
		);
	}

	private summary(sessions: SessionSyncResult[]): SyncResult {
		return {
			baseId: this.baseId,
			sessions,
			messages: sessions.reduce((n, s) => n + s.messages, 0),
			chunks: sessions.reduce((n, s) => n + s.chunks, 0),
		};
	}

	/** Messages `from` … `to` of a session, from its sealed blocks and its log. */
	private async readMessages(
		log: SessionLog,
		from: number,
		to: number,
	): Promise<CapturedMessage[]> {
		const out: CapturedMessage[] = [];
		for (const block of log.sealed) {
			if (block.last < from || block.first > to) continue;
			const sealed = await this.blocks.readImmutable(block.key, (bytes) =>
				decodeSealedMessages(block.key, bytes, block),
			);
			if (!sealed)
				throw new CorruptDocumentError(
					this.logKey(log.session_id),
					`its sealed block "${block.key}" is missing`,
				);
			out.push(...sealed.messages.filter((m) => m.seq >= from && m.seq <= to));
		}
		out.push(...log.messages.filter((m) => m.seq >= from && m.seq <= to));
		return out;
	}

	/** How many messages a session captured (sealed blocks included) and the IDs of their chunks. */
	private async capturedChunks(
		kbId: string,
		sessionId: string,
	): Promise<{ messages: number; chunkIds: string[] }> {
		const { doc, version } = await this.logs.read(this.logKey(sessionId));
		if (version === null) return { messages: 0, chunkIds: [] };
		const messages = await this.readMessages(doc, 1, doc.next_seq - 1);
		return {
			messages: messages.length,
			chunkIds: this.chunksOf(kbId, sessionId, messages).map((c) => c.id),
		};
	}

	private chunksOf(kbId: string, sessionId: string, messages: CapturedMessage[]): IndexedChunk[] {
		return messages.flatMap((m) =>
			chunkText(m.text, this.chunkSize, this.chunkOverlap).map((text, i) => ({
				id: chunkId(kbId, sessionId, m.id, i),
				session_id: sessionId,
				message_id: m.id,
				seq: m.seq,
				run_id: m.run_id,
				chunk_index: i,
				created_at: m.created_at,
				text,
			})),
		);
	}

	/** Between batches: the lock is still ours, and the base is not being deleted with cancellation. */
	private async checkpoint(sessionId: string, lease: HeldLease): Promise<void> {
		lease.check();
		const config = await this.config();
		if (config?.deleting?.mode === 'cancel') throw new SyncCancelledError(this.baseId, sessionId);
	}

	/**
	 * One session's sync, its lock held. Takes the range (cursor, last captured] at its start; messages
	 * captured meanwhile wait for the next sync. Embeds in batches and hands every chunk to the index;
	 * only once the index confirmed all of them is the cursor moved (one compare-and-swap of the log,
	 * the last write), and only if nobody moved it meanwhile. Any failure before leaves the cursor as it
	 * was: the next sync takes the same range again, and the chunks it re-ingests replace themselves
	 * (their IDs derive from the message IDs).
	 */
	private async ingest(
		sessionId: string,
		kbId: string,
		embedder: Embedder,
		lease: HeldLease,
	): Promise<SessionSyncResult> {
		const key = this.logKey(sessionId);
		const start = await this.logs.read(key);
		const log = start.version === null ? emptyLog(sessionId, new Date().toISOString()) : start.doc;
		const from = log.cursor;
		const to = log.next_seq - 1;
		const nothing: SessionSyncResult = {
			sessionId,
			messages: 0,
			chunks: 0,
			from,
			cursor: from,
			totalProcessed: log.total_processed,
			lastSyncAt: log.last_sync_at,
			pending: to - from,
		};
		if (to <= from) return nothing;
		const messages = await this.readMessages(log, from + 1, to);
		const chunks = this.chunksOf(kbId, sessionId, messages);
		const external = this.external();
		const index = external ? undefined : this.index(kbId);
		let dims: number | undefined;
		let held: IndexedChunk[] = [];
		let heldRows: number[][] = [];
		const flush = async () => {
			if (held.length === 0) return;
			await index!.add(held, heldRows);
			held = [];
			heldRows = [];
		};
		for (let i = 0; i < chunks.length; i += this.batchSize) {
			await this.checkpoint(sessionId, lease);
			const batch = chunks.slice(i, i + this.batchSize);
			let rows: number[][];
			try {
				rows = await embedder.embedDocuments(batch.map((c) => c.text));
			} catch (error) {
				// What was embedded is kept (the retry replaces it: same chunk IDs); the cursor stays.
				await flush().catch(() => {});
				throw error;
			}
			const checked = normaliseRows(rows, batch.length, dims); // count, dimensions, numbers
			dims ??= checked.length / batch.length;
			if (i === 0) await this.recordDimensions(kbId, dims);
			if (external) await external.add(batch, rows);
			else {
				held.push(...batch);
				heldRows.push(...rows);
				if (held.length >= SEGMENT_MAX_VECTORS) await flush();
			}
		}
		await flush();
		// Every chunk is confirmed by the index. The cursor goes last, if the lock is still ours.
		await this.checkpoint(sessionId, lease);
		await lease.confirm();
		const block = await this.sealIfDue(sessionId, log, to);
		const last = messages[messages.length - 1];
		let moved = true;
		const now = new Date().toISOString();
		const committed = await this.logs.update(key, (cur) => {
			if (cur.version === null) throw new SyncCancelledError(this.baseId, sessionId);
			const d = cur.doc;
			if (d.epoch !== log.epoch || d.cursor !== from) {
				moved = false;
				return undefined;
			}
			let sealed = d.sealed;
			let inline = d.messages;
			if (block && inline[0]?.seq === block.first && inline.some((m) => m.seq === block.last)) {
				sealed = [...sealed, block];
				inline = inline.filter((m) => m.seq > block.last);
			}
			return {
				...d,
				cursor: to,
				cursor_message_id: last.id,
				total_processed: d.total_processed + (to - from),
				last_sync_at: now,
				updated_at: now,
				sealed,
				messages: inline,
			};
		});
		const after = committed.current.doc;
		if (block && !after.sealed.some((b) => b.key === block.key))
			await this.blocks.deleteImmutable(block.key).catch(() => {});
		return {
			sessionId,
			messages: moved ? messages.length : 0,
			chunks: moved ? chunks.length : 0,
			from,
			cursor: after.cursor,
			totalProcessed: after.total_processed,
			lastSyncAt: after.last_sync_at,
			pending: after.next_seq - 1 - after.cursor,
		};
	}

	/** When enough processed messages sit in the log, writes them (up to `to`) as a sealed block first. */
	private async sealIfDue(
		sessionId: string,
		log: SessionLog,
		to: number,
	): Promise<SealedRange | undefined> {
		const done = log.messages.filter((m) => m.seq <= to);
		if (done.length < SEAL_AT) return undefined;
		const first = done[0].seq;
		const last = done[done.length - 1].seq;
		const key = captureSealedKey(
			this.baseId,
			sessionId,
			first,
			last,
			randomBytes(8).toString('hex'),
			this.keyPrefix,
		);
		const body = { session_id: sessionId, first, last, messages: done };
		await this.blocks.create(key, encodeJson(body), body);
		return { key, first, last };
	}

	// ── search ───────────────────────────────────────────────────────────────────────────────────

	/**
	 * The `k` captured chunks most similar to `query` (cosine similarity of embeddings), best first;
	 * only one session's with `sessionId`. Reads the base's own knowledge base, hidden or not.
	 */
	async search(
		query: string,
		options: { k?: number; sessionId?: string } = {},
	): Promise<SearchMatch[]> {
		if (typeof query !== 'string' || query.trim() === '')
			throw new InvalidInputError('query', 'is empty: give the text to search for');
		const k = options.k ?? 4;
		if (!Number.isSafeInteger(k) || k < 1 || k > MAX_TOP_K)
			throw new InvalidInputError('topK', `must be a whole number from 1 to ${MAX_TOP_K}`);
		const sessionId =
			options.sessionId === undefined ? undefined : validateId('session_id', options.sessionId);
		const vector = await this.embedder('Search').embedQuery(query);
		const external = this.external();
		const matches = external
			? await external.search(vector, k, sessionId)
			: await this.index(await this.knowledgeBaseId()).search(vector, k, sessionId);
		return matches.map(toMatch);
	}

	// ── status ───────────────────────────────────────────────────────────────────────────────────

	/**
	 * Per session: cursor, total processed, last sync time, pending count, whether a sync runs; and a
	 * mismatch flag when metadata says messages were processed but the index is missing, empty, lost
	 * segments, or holds none of a session's chunks (Regenerate rebuilds it).
	 */
	async status(options: { sessionId?: string } = {}): Promise<BaseStatus> {
		const config = await this.config();
		const kbId = config?.kb_id ?? this.options.knowledgeBaseId ?? this.baseId;
		const ids =
			options.sessionId !== undefined
				? [validateId('session_id', options.sessionId)]
				: await this.sessions();
		const logs: Array<SessionLog | null> = [];
		const leases: boolean[] = [];
		for (let i = 0; i < ids.length; i += PARALLEL) {
			const batch = ids.slice(i, i + PARALLEL);
			const read = await Promise.all(
				batch.map(async (s) => {
					const [log, lease] = await Promise.all([
						this.logs.read(this.logKey(s)),
						readLease(this.storage, sessionLeaseKey(this.baseId, s, this.keyPrefix)),
					]);
					return {
						log: log.version === null ? null : log.doc,
						running: !!lease && isFresh(lease.lease),
					};
				}),
			);
			for (const r of read) {
				logs.push(r.log);
				leases.push(r.running);
			}
		}
		const baseLease = await readLease(
			this.storage,
			memoryBaseLeaseKey(this.baseId, this.keyPrefix),
		);
		const meta = await this.metadata.read(knowledgeBaseMetadataKey(kbId, this.keyPrefix));
		const external = this.external();
		const stats = external ? undefined : await this.index(kbId).stats();
		const processed = logs.reduce((n, l) => n + (l?.total_processed ?? 0), 0);
		let externalEmpty = false;
		const dims = meta.version === null ? null : meta.doc.dimensions;
		if (external && processed > 0)
			externalEmpty = dims === null || !(await external.holdsAny(dims));
		const missingSessions = new Set<string>();
		if (stats) {
			const manifest = await this.index(kbId).readManifest();
			const missing = new Set(stats.missing);
			for (const ref of manifest.version === null ? [] : manifest.doc.segments)
				if (missing.has(ref.key)) ref.sessions.forEach((s) => missingSessions.add(s));
		}
		const sessions: SessionStatus[] = ids.map((sessionId, i) => {
			const log = logs[i] ?? emptyLog(sessionId, '');
			const mismatch =
				log.total_processed > 0 &&
				(external
					? externalEmpty
					: (stats?.bySession[sessionId] ?? 0) === 0 || missingSessions.has(sessionId));
			return {
				sessionId,
				cursor: log.cursor,
				cursorMessageId: log.cursor_message_id,
				totalProcessed: log.total_processed,
				lastSyncAt: log.last_sync_at,
				captured: log.next_seq - 1,
				pending: log.next_seq - 1 - log.cursor,
				syncRunning: leases[i],
				mismatch,
			};
		});
		let reason: string | null = null;
		if (processed > 0) {
			if (external && externalEmpty)
				reason = `metadata says ${processed} message(s) were processed, but the vector store holds none of this base`;
			else if (stats && !stats.exists)
				reason = `metadata says ${processed} message(s) were processed, but the vector index is missing`;
			else if (stats && stats.missing.length > 0)
				reason = `the vector index lost ${stats.missing.length} of its ${stats.segments} segment(s)`;
			else if (stats && stats.vectors === 0)
				reason = `metadata says ${processed} message(s) were processed, but the vector index is empty`;
			else if (sessions.some((s) => s.mismatch))
				reason = `the vector index holds nothing of session(s) ${sessions
					.filter((s) => s.mismatch)
					.map((s) => JSON.stringify(s.sessionId))
					.join(', ')}, which metadata says were processed`;
		}
		return {
			baseId: this.baseId,
			knowledgeBaseId: kbId,
			exists: config !== null,
			threshold: config?.threshold ?? null,
			autoCapture: config?.auto_capture ?? null,
			vectorStore: this.vectorStoreKind,
			index: stats
				? {
						exists: stats.exists,
						vectors: stats.vectors,
						segments: stats.segments,
						missingSegments: stats.missing.length,
					}
				: null,
			dimensions: dims,
			syncRunning: (!!baseLease && isFresh(baseLease.lease)) || leases.some(Boolean),
			mismatch: reason !== null,
			mismatchReason: reason,
			sessions,
		};
	}

	// ── regenerate ───────────────────────────────────────────────────────────────────────────────

	/**
	 * Rebuilds the knowledge base from the capture log (the seed's Regenerate): with every lock held,
	 * resets each session's cursor (and raises its epoch, so no older sync can move it), deletes the
	 * index, then syncs every session from the start. Interrupted, it leaves cursors at or below what
	 * is indexed, so the next sync or Regenerate carries on.
	 */
	async regenerate(): Promise<SyncResult> {
		const embedder = this.embedder('Regenerate');
		const config = await this.config();
		if (config?.deleting) throw new MemoryBaseDeletingError(this.baseId);
		return this.locked(undefined, 'regenerate', async (sessions, leases) => {
			const kbId = config?.kb_id ?? (await this.configure()).kb_id;
			await this.ensureKnowledgeBase(kbId);
			const ids = await this.resetCursors(sessions);
			const external = this.external();
			if (external) await external.remove(ids);
			else await this.index(kbId).clear();
			await this.metadata.update(knowledgeBaseMetadataKey(kbId, this.keyPrefix), (cur) =>
				cur.version === null
					? undefined
					: { ...cur.doc, dimensions: null, updated_at: new Date().toISOString() },
			);
			const results: SessionSyncResult[] = [];
			for (const s of sessions)
				results.push(await this.ingest(s, kbId, embedder, leases.sessions.get(s) as HeldLease));
			return this.summary(results);
		});
	}

	/** Sets every session's cursor to 0 (epoch + 1); returns the chunk IDs the sessions had ingested. */
	private async resetCursors(sessions: string[]): Promise<string[]> {
		const kbId = await this.knowledgeBaseId();
		const ids: string[] = [];
		for (const s of sessions) {
			const result = await this.logs.update(this.logKey(s), (cur) =>
				cur.version === null
					? undefined
					: {
							...cur.doc,
							cursor: 0,
							cursor_message_id: null,
							total_processed: 0,
							epoch: cur.doc.epoch + 1,
							updated_at: new Date().toISOString(),
						},
			);
			if (this.options.vectorStore && result.current.version !== null) {
				const log = result.current.doc;
				const all = await this.readMessages(log, 1, log.next_seq - 1);
				ids.push(...this.chunksOf(kbId, s, all).map((c) => c.id));
			}
		}
		return ids;
	}

	// ── delete ───────────────────────────────────────────────────────────────────────────────────

	/**
	 * Deletes everything of the base: configuration, capture logs, cursors, its knowledge base and index
	 * (and its vectors in a connected store that can delete). A running sync is cancelled at its next
	 * batch (mode "cancel", the default) or waited for (mode "wait"), up to `timeoutMs`; then every lock
	 * is taken so none starts, and objects are deleted configuration first.
	 */
	async delete(
		options: { mode?: 'wait' | 'cancel'; timeoutMs?: number } = {},
	): Promise<DeleteResult> {
		const mode = options.mode ?? 'cancel';
		if (mode !== 'wait' && mode !== 'cancel')
			throw new InvalidOptionError('mode', 'must be "wait" or "cancel"');
		const timeoutMs = options.timeoutMs ?? this.leaseMs + 5000;
		const kbId = await this.knowledgeBaseId();
		const marked = await this.configs.update(this.configKey, (cur) =>
			cur.version === null
				? undefined
				: {
						...cur.doc,
						deleting: { since: new Date().toISOString(), mode },
						updated_at: new Date().toISOString(),
					},
		);
		const unmark = () =>
			this.configs
				.update(this.configKey, (cur) => {
					if (cur.version === null || !cur.doc.deleting) return undefined;
					const rest = { ...cur.doc };
					delete rest.deleting;
					return rest;
				})
				.catch(() => undefined);
		const deadline = Date.now() + timeoutMs;
		let waitedFor = 0;
		for (let first = true; ; first = false) {
			const running = await this.runningSyncs();
			if (first) waitedFor = running.length;
			if (running.length === 0) {
				try {
					const deleted = await this.locked(undefined, 'delete', async (sessions) =>
						this.deleteAll(kbId, sessions),
					);
					return { baseId: this.baseId, deleted: deleted.length, waitedFor };
				} catch (error) {
					if (!(error instanceof SyncRunningError)) {
						if (marked.written) await unmark();
						throw error;
					}
				}
			}
			if (Date.now() > deadline) {
				if (marked.written) await unmark();
				const lease = running[0];
				throw this.running(lease?.sessionId ?? null, lease?.lease);
			}
			await sleep(Math.min(250, Math.max(10, deadline - Date.now())));
		}
	}

	/**
	 * Forgets one conversation (the right to be forgotten): its vectors and chunk texts (embedded
	 * segments holding them are rewritten without them; a connected store is asked to delete them by
	 * ID), then its capture log and sealed blocks. Holds the session's lock, so no sync of it runs
	 * meanwhile; a capture that arrives afterwards starts a new log. A connected store that cannot
	 * delete is an error before anything is removed, so the log that names its chunks is kept.
	 */
	async forget(sessionId: string): Promise<ForgetResult> {
		const id = validateId('session_id', sessionId);
		const config = await this.config();
		const result: ForgetResult = {
			baseId: this.baseId,
			sessionId: id,
			messages: 0,
			vectors: 0,
			deleted: [],
		};
		if (!config) return result;
		return this.locked(id, 'forget', async () => {
			const captured = await this.capturedChunks(config.kb_id, id);
			result.messages = captured.messages;
			const external = this.external();
			if (external) {
				const ids = captured.chunkIds;
				if (!(await external.remove(ids)))
					throw new InvalidOptionError(
						'vectorStore',
						'the connected vector store cannot delete by ID, so this conversation cannot be forgotten from it',
					);
				result.vectors = ids.length;
			} else {
				const index = this.index(config.kb_id);
				result.vectors = await index.forgetSession(id, this.maxAttempts);
				result.deleted.push(...(await index.sweepOrphans(this.leaseMs)));
			}
			const folder = memoryBaseSessionPrefix(this.baseId, id, this.keyPrefix);
			const lease = sessionLeaseKey(this.baseId, id, this.keyPrefix);
			result.deleted.push(...(await this.deleteUnder(folder, new Set([lease]))));
			return result;
		});
	}

	private async runningSyncs(): Promise<
		Array<{
			sessionId: string | null;
			lease: { acquired_at: string; expires_at: string; operation: string };
		}>
	> {
		const out: Array<{
			sessionId: string | null;
			lease: { acquired_at: string; expires_at: string; operation: string };
		}> = [];
		const base = await readLease(this.storage, memoryBaseLeaseKey(this.baseId, this.keyPrefix));
		if (base && isFresh(base.lease)) out.push({ sessionId: null, lease: base.lease });
		const sessions = await this.sessions();
		for (let i = 0; i < sessions.length; i += PARALLEL) {
			const batch = sessions.slice(i, i + PARALLEL);
			const found = await Promise.all(
				batch.map((s) => readLease(this.storage, sessionLeaseKey(this.baseId, s, this.keyPrefix))),
			);
			found.forEach((l, j) => {
				if (l && isFresh(l.lease)) out.push({ sessionId: batch[j], lease: l.lease });
			});
		}
		return out;
	}

	/**
	 * Deletes every object under a folder of the base except `keep` (the leases its caller holds), logs
	 * before their sealed blocks so a reader never finds a log naming a missing block, then any temporary
	 * copies there. Returns the keys deleted.
	 */
	private async deleteUnder(prefix: string, keep: Set<string>): Promise<string[]> {
		const objects = (await this.storage.list(prefix)).filter((o) => !keep.has(o.key));
		objects.sort(
			(a, b) => Number(b.key.endsWith('/log.json')) - Number(a.key.endsWith('/log.json')),
		);
		const deleted: string[] = [];
		for (const o of objects) {
			if (o.key.endsWith('/log.json')) await this.logs.delete(o.key);
			else await this.blocks.deleteImmutable(o.key);
			deleted.push(o.key);
		}
		deleted.push(...((await this.storage.sweep?.(prefix, 0)) ?? []));
		return deleted;
	}

	private async deleteAll(kbId: string, sessions: string[]): Promise<string[]> {
		const deleted: string[] = [];
		const external = this.external();
		if (external) {
			const ids: string[] = [];
			for (const s of sessions) ids.push(...(await this.capturedChunks(kbId, s)).chunkIds);
			await external.remove(ids);
		}
		// Configuration first: a capture or sync that still holds it fails its compare-and-swap.
		await this.configs.delete(this.configKey);
		deleted.push(this.configKey);
		deleted.push(...(await this.index(kbId).clear()));
		const kbPrefix = knowledgeBasePrefix(kbId, this.keyPrefix);
		for (const o of await this.storage.list(kbPrefix)) {
			await this.metadata.delete(o.key);
			deleted.push(o.key);
		}
		const prefix = memoryBasePrefix(this.baseId, this.keyPrefix);
		const leaseKeys = new Set([
			memoryBaseLeaseKey(this.baseId, this.keyPrefix),
			...sessions.map((s) => sessionLeaseKey(this.baseId, s, this.keyPrefix)),
		]);
		deleted.push(...(await this.deleteUnder(prefix, leaseKeys)));
		deleted.push(...((await this.storage.sweep?.(kbPrefix, 0)) ?? []));
		deleted.push(...leaseKeys);
		return deleted;
	}
}
