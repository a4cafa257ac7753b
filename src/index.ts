// The engine's public API: what a program using the memory without n8n needs (docs/engine.md).
// Framework-free: nothing here imports n8n (enforced by ESLint). The nodes, tests and benchmarks reach
// the rest through its own paths (or src/internal.ts).

// Storage: local disk, S3 and S3-compatible servers, and encryption at rest over either.
export { LocalDiskStorage } from './store/local-disk';
export type { LocalDiskStorageOptions } from './store/local-disk';
export { S3Storage } from './store/s3';
export type { S3StorageOptions } from './store/s3';
export { EncryptedStorage, encryptionKeyId, parseEncryptionKey } from './store/encrypted';
export type { FolderPage, MemoryStorage } from './store/storage';

// Chat memory, per conversation or per node, and a turn assembled across every memory.
export {
	ConversationMemory,
	NodeMemory,
	NodeTokenBufferMemory,
	TokenBufferMemory,
} from './history/scopes';
export { BufferMemory } from './history/buffer-memory';
export { DEFAULT_MAX_TOKEN_LIMIT } from './history/truncate';
export type {
	AddedTurn,
	History,
	HistoryOptions,
	MemoryOptions,
	TurnInput,
} from './history/buffer-memory';
export { ChatHistory } from './history/chat-history';
export { exportDocument, importDocument } from './history/document-transfer';
export { importChat } from './history/chat-import';
export type { ChatImportReport, SourceMessage } from './history/chat-import';
export { ChatTurn } from './turn/turn';
export type { TurnOptions, TurnReport } from './turn/turn';
export { LongTermMemory } from './turn/long-term';
export type { LongTermSettings } from './turn/long-term';
export type { Recalled } from './turn/recalled';
export type { ContentPart, PromptMessage } from './prompt/types';

// Versioned data: write-once versions, branches, history, diff and rollback.
export { VersionedData } from './admin/versioned-data';
export { applyPatch } from './snapshots/patch';
export type { JsonPatch } from './snapshots/patch';
export { diffJson } from './snapshots/diff';
export type { JsonValue } from './snapshots/json';
export { MAIN_BRANCH } from './snapshots/types';
export type { HistoryEntry, HistoryPage } from './snapshots/types';
export type { VersionRecord } from './snapshots/records';

// Long-term memory: capture, sync, search and recall.
export { MemoryBase } from './knowledge/memory-base';
export { listMemoryBases } from './knowledge/listing';
export type {
	CaptureInput,
	CaptureResult,
	Embedder,
	MemoryBaseOptions,
	SearchMatch,
	SearchMode,
	SearchOptions,
} from './knowledge/types';
export type { RecallOptions, RecallResult } from './knowledge/recall';

// Long-term facts: what was learned about each user, with its evidence, as versions (history, diff,
// rollback), correctable by a person.
export { Facts } from './facts/facts';
export type { FactView, FactsView } from './facts/facts';
export type { FactsOptions, FactsState } from './facts/store';
export { DEFAULT_FACTS_THRESHOLD } from './facts/learn';
export type { Extractor, LearnInput, LearnResult } from './facts/learn';
export { factsSubject } from './facts/keys';
export type { FactsSubject } from './facts/keys';
export type { FactsSource, ReadMessage } from './facts/operations';
export type {
	Evidence,
	Fact,
	FactStatus,
	FactsDocument,
	PersonEvidence,
	QuoteEvidence,
} from './facts/records';
export type { AddFactInput, EditFactInput, RetireFactInput } from './facts/edits';
export type { FactsSection } from './facts/request';
export { exportFacts, importFacts } from './facts/transfer';
export type { FactsExport } from './facts/transfer';
export type { ShownFacts, TurnFacts } from './turn/facts';

// Whole conversations, workflows and users across every memory.
export {
	deleteConversationMemory,
	listAppKeys,
	listConversationKeys,
	pruneMemory,
	sweepLeftovers,
} from './admin/housekeeping';
export { exportConversation, importConversation } from './admin/conversation-transfer';
export { forgetUser } from './admin/forget-user';
export { pruneExpired } from './admin/retention';
export { reencrypt } from './admin/reencrypt';

// Token counts, and the caches a long-lived process keeps.
export { TiktokenCounter } from './tokens/tokens';
export { cacheStats } from './common/bounded-cache';
export { clearAllCaches } from './testing';

export * from './errors';
