// What every Memory Base operation works on: the checked options, the keys, and the document stores of
// one base. The operations (capture, sync, search, status, lifecycle) are functions over these parts.
import { InvalidOptionError, NoEmbeddingModelError, SyncRunningError } from '../errors';
import { EmbeddedIndex, ExternalIndex, LexicalIndex } from '../indexes';
import type { LexicalIndexOptions, SearchReads } from '../indexes';
import {
	captureLogKey,
	knowledgeBasePrefix,
	memoryBaseConfigKey,
	memoryBaseLeaseKey,
	memoryBasePrefix,
	memoryBaseSessionPrefix,
	sessionLeaseKey,
	vectorIndexPrefix,
} from './keys';
import { DocumentStore } from '../store/document-store';
import type { Lease } from '../store/lease';
import type { LeaseLocks } from '../store/lease-locks';
import { limitRequests } from '../store/limited';
import type { MemoryStorage } from '../store/storage';
import { sessionPages } from './capture-log';
import { checkChunking, DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE } from './chunking';
import { configCodec, logCodec, metadataCodec } from './records';
import type { KnowledgeBaseMetadata, MemoryBaseConfig, SessionLog } from './records';
import { DEFAULT_EMBEDDING_BATCH, DEFAULT_LEASE_MS, PARALLEL } from './types';
import type { Embedder, MemoryBaseOptions } from './types';
import { readTails } from './log-folding';

export function checkPositiveInt(option: string, value: number, min = 1): number {
	if (!Number.isSafeInteger(value) || value < min)
		throw new InvalidOptionError(option, `must be a whole number ≥ ${min}, got ${String(value)}`);
	return value;
}

/** What a sync finds when another holds the lock of a session (or of the whole base: null). */
export function runningError(
	p: BaseParts,
	sessionId: string | null,
	lease: Lease | undefined,
): SyncRunningError {
	return new SyncRunningError(
		p.baseId,
		sessionId,
		lease?.acquired_at,
		lease?.expires_at,
		lease?.operation,
	);
}

export class BaseParts {
	readonly storage: MemoryStorage;
	readonly baseId: string;
	readonly keyPrefix?: string;
	readonly options: MemoryBaseOptions;
	readonly configs: DocumentStore<MemoryBaseConfig>;
	readonly logs: DocumentStore<SessionLog>;
	readonly metadata: DocumentStore<KnowledgeBaseMetadata>;
	/** Write-once sealed blocks only (readWriteOnce, create): its codec is never used. */
	readonly blocks: DocumentStore<unknown>;
	readonly chunkSize: number;
	readonly chunkOverlap: number;
	readonly batchSize: number;
	readonly leaseMs: number;
	readonly maxAttempts: number;
	/** The base's locks: one per session (its sync), one for the whole base (store/lease-locks.ts). */
	readonly locks: LeaseLocks;

	constructor(options: MemoryBaseOptions) {
		this.options = options;
		// Whatever an operation visits side by side (partitions, logs, segments, leases), at most
		// PARALLEL requests run at once.
		this.storage = limitRequests(options.storage, PARALLEL);
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
		if (options.vectorCacheBytes !== undefined)
			checkPositiveInt('vectorCacheBytes', options.vectorCacheBytes);
		const o = { maxAttempts: this.maxAttempts };
		this.configs = new DocumentStore(this.storage, configCodec, o);
		this.logs = new DocumentStore(this.storage, logCodec, o);
		this.metadata = new DocumentStore(this.storage, metadataCodec, o);
		this.blocks = new DocumentStore<unknown>(this.storage, configCodec);
		this.locks = {
			storage: this.storage,
			wholeKey: this.baseLeaseKey,
			partKey: (s) => this.sessionLeaseKey(s),
			partPages: () => sessionPages(this),
			ttlMs: this.leaseMs,
			parallel: PARALLEL,
			held: (s, lease) => runningError(this, s, lease),
		};
	}

	get configKey(): string {
		return memoryBaseConfigKey(this.baseId, this.keyPrefix);
	}

	get baseLeaseKey(): string {
		return memoryBaseLeaseKey(this.baseId, this.keyPrefix);
	}

	logKey(sessionId: string): string {
		return captureLogKey(this.baseId, sessionId, this.keyPrefix);
	}

	sessionLeaseKey(sessionId: string): string {
		return sessionLeaseKey(this.baseId, sessionId, this.keyPrefix);
	}

	sessionPrefix(sessionId: string): string {
		return memoryBaseSessionPrefix(this.baseId, sessionId, this.keyPrefix);
	}

	get vectorStoreKind(): 'embedded' | 'external' {
		return this.options.vectorStore ? 'external' : 'embedded';
	}

	/** The base's configuration, or null when it was never created (or was deleted). */
	async config(): Promise<MemoryBaseConfig | null> {
		const { doc, version } = await this.configs.read(this.configKey);
		return version === null ? null : doc;
	}

	/**
	 * The configuration as this process last read it, without a request (undefined if it has not): the
	 * very object config() returns while the stored one has not changed.
	 */
	cachedConfig(): MemoryBaseConfig | undefined {
		return this.configs.cached(this.configKey);
	}

	/** The knowledge base the configuration names (or would name, once created). */
	async knowledgeBaseId(config?: MemoryBaseConfig | null): Promise<string> {
		const c = config === undefined ? await this.config() : config;
		return c?.kb_id ?? this.options.knowledgeBaseId ?? this.baseId;
	}

	/**
	 * An embedded vector index of the knowledge base: its single one (bases from before partitions),
	 * or one partition's (`at`, see base-indexes.ts).
	 */
	index(
		kbId: string,
		at: {
			folder?: string;
			owner?: string;
			cacheGroup?: string;
			reads?: SearchReads;
			segmentBytes?: number;
			tiers?: boolean;
		} = {},
	): EmbeddedIndex {
		const folder = at.folder ?? vectorIndexPrefix(kbId, this.keyPrefix);
		return new EmbeddedIndex(this.storage, kbId, folder, this.maxAttempts, {
			cacheBytes: this.options.vectorCacheBytes,
			cacheGroup: at.cacheGroup,
			owner: at.owner,
			reads: at.reads,
			segmentBytes: at.segmentBytes,
			tiers: at.tiers,
		});
	}

	/**
	 * A word index of the base, whose open sources are capture logs: its single one (`lexical/` in the
	 * base's folder, bases from before partitions), one partition's or the base-wide one (`folder`).
	 */
	lexical(folder?: string, options: LexicalIndexOptions = {}): LexicalIndex {
		const at = folder ?? `${memoryBasePrefix(this.baseId, this.keyPrefix)}lexical/`;
		return new LexicalIndex(
			this.storage,
			this.baseId,
			at,
			this.maxAttempts,
			(ids) => readTails(this, ids),
			options,
		);
	}

	external(): ExternalIndex | undefined {
		return this.options.vectorStore
			? new ExternalIndex(this.options.vectorStore, this.baseId)
			: undefined;
	}

	embedder(what: string): Embedder {
		if (!this.options.embedder) throw new NoEmbeddingModelError(what);
		return this.options.embedder;
	}
}
