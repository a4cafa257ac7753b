// Every export of the engine, for the tests, benchmarks and demo (the public API is src/index.ts).
export { BoundedCache, cacheStats } from './common/bounded-cache';
export type { BoundedCacheOptions, CacheStats } from './common/bounded-cache';
export * from './errors';
export {
	MAX_BRANCH_BYTES,
	MAX_ID_BYTES,
	validateBranchName,
	validateId,
	validateKeyPrefix,
} from './keys/ids';
export { appPrefixes, parseKey } from './admin/keys';
export type { ParsedKey } from './admin/keys';
export {
	conversationFilesPrefix,
	conversationMemoryKey,
	conversationNodesPrefix,
	nodeMemoryKey,
	summariesKey,
} from './history/keys';
export { isSealedKeyOf, sealedPrefix } from './store/log-keys';
export {
	branchKey,
	isVersionNumber,
	MAX_VERSION_NUMBER,
	versionCounterKey,
	versionedDataPrefix,
	versionKey,
} from './snapshots/keys';
export {
	DOCUMENT_VERSION,
	emptyDocument,
	LOG_DOCUMENT_VERSION,
	memoryDocumentSchema,
	sealedCountOf,
	sealedRefsOf,
} from './store/schema';
export type {
	HeadDocument,
	LogHead,
	MemoryDocument,
	SealedIndex,
	SealedRef,
	SealedSegment,
	StoredDataVersion,
	StoredFile,
	StoredMessage,
	WrittenFile,
} from './store/schema';
export { decodeDocument, decodeHead, encodeDocument } from './store/codec';
export { DEFAULT_LOG_OPTIONS, MessageLog, resolveLogOptions } from './store/message-log';
export type { LogOptions, ThreadFacts } from './store/message-log';
export { BLOOM_BITS, bloomMayHave, bloomOf, bloomPositions } from './store/bloom';
export { DocumentStore } from './store/document-store';
export type {
	DocumentCodec,
	DocumentStoreOptions,
	UpdateResult,
	Versioned,
} from './store/document-store';
export {
	collectThread,
	extractThread,
	selectThread,
	threadStart,
	threadStartIn,
	threadSummary,
	ThreadSpan,
	UUID_NIL,
	walkSpan,
	walkThread,
} from './history/thread';
export type { MessageChunk, ThreadGap, ThreadLoader } from './history/thread';
export {
	DEFAULT_MAX_TOKEN_LIMIT,
	effectiveWindow,
	MAX_HISTORY_TURNS,
	selectHistory,
} from './history/truncate';
export type { HistorySelection, SelectOptions, Turn } from './history/truncate';
export {
	encodingForModel,
	fallbackTokenCount,
	loadedEncodings,
	safeCounter,
	TiktokenCounter,
} from './tokens/tokens';
export type { Encoding, TokenCounter } from './tokens/tokens';
export { mergeTurns } from './history/turns';
export { fileTypeOf } from './store/blobs';
export type { FileInput, FileText, FileType } from './store/blobs';
export {
	AUDIO_TOKENS_PER_SECOND,
	IMAGE_TOKEN_ESTIMATE,
	inputFileParts,
	messageTokenCount,
	PDF_PAGE_TOKEN_ESTIMATE,
} from './prompt/files';
export type { FilePartOptions, SkippedFile } from './prompt/files';
export {
	audioFormat,
	DEFAULT_MAX_TOKENS_PER_FILE,
	fileKind,
	isReadable,
} from './prompt/file-kinds';
export type { FileKind, FileOptions, PdfAndAudio } from './prompt/file-kinds';
export { capTokens, decodeText, readFiles } from './prompt/file-text';
export { MAX_PDF_BYTES, MAX_PDF_MS, MAX_PDF_PAGES, pdfText } from './prompt/pdf-text';
export { contentFiles, parseDataUrl } from './prompt/content-files';
export { ASSISTANT_FILES_LEAD } from './prompt/stored';
export type { ContentPart, ImageDetail, PromptMessage, ToolCall } from './prompt/types';
export { historyToText } from './prompt/text';
export type { TextPrefixes } from './prompt/text';
export { BufferMemory } from './history/buffer-memory';
export { exportDocument, importDocument } from './history/document-transfer';
export type {
	AddedTurn,
	FlushResult,
	History,
	HistoryOptions,
	MemoryOptions,
	TurnIds,
	TurnInput,
} from './history/buffer-memory';
export {
	ConversationMemory,
	NodeMemory,
	NodeTokenBufferMemory,
	TokenBufferMemory,
} from './history/scopes';
export type { RecentTurn, SummaryReport, ThreadView } from './history/thread-view';
export { summaryLimits } from './history/summarized';
export type { Summarizer, SummaryOptions } from './history/summarized';
export { MAX_SUMMARIES, SummaryStore } from './history/summary-store';
export type { StoredSummary, SummaryDocument } from './history/summary-store';
export {
	SUMMARY_END,
	SUMMARY_INSTRUCTIONS,
	SUMMARY_START,
	summaryRequest,
	summarySection,
	turnsText,
} from './history/summary-text';
export {
	DEFAULT_MAX_TOOL_OUTPUT_CHARS,
	TOOL_RESULTS_MODES,
	toolResultNote,
	toolResultsPolicy,
} from './history/tool-results';
export type { ToolResultsMode, ToolResultsPolicy } from './history/tool-results';
export {
	ChatHistory,
	groupTurns,
	pairSteps,
	UnsupportedMessageError,
} from './history/chat-history';
export { IMPORTED_TURN_PREFIX, importChat, InvalidImportSourceError } from './history/chat-import';
export type {
	ChatImportReport,
	ImportSkipReason,
	SourceMessage,
	UnknownMessage,
} from './history/chat-import';
export type {
	ChatMessage,
	GroupedTurn,
	ListedMessage,
	OpenTurn,
	StoredTurn,
} from './history/chat-history';
export type {
	DeleteOptions,
	FolderPage,
	GetOptions,
	ListedObject,
	ListOptions,
	MemoryStorage,
	NotModified,
	PutOptions,
	StoredObject,
} from './store/storage';
export {
	folderAfter,
	folderNames,
	forEachListed,
	forEachKey,
	keyPages,
	listedPages,
	sortFolders,
	storageIdentity,
} from './store/storage';
export { LimitedStorage, limitRequests } from './store/limited';
export { forgetUser } from './admin/forget-user';
export { STATUS_PAGE, STATUS_PAGE_MAX } from './knowledge/status';
export { reencrypt } from './admin/reencrypt';
export type { ReencryptResult, ReencryptScope } from './admin/reencrypt';
export type { ForgetUserResult, ForgetUserTarget } from './admin/forget-user';
export { EncryptedStorage, encryptionKeyId, isSealed, parseEncryptionKey } from './store/encrypted';
export type { EncryptionKey, EncryptionOptions } from './store/encrypted';
export { LocalDiskStorage } from './store/local-disk';
export type { LocalDiskStorageOptions } from './store/local-disk';
export { S3Storage } from './store/s3';
export type { ConditionalWriteSupport, S3StorageOptions } from './store/s3';
export {
	deleteConversationMemory,
	listAppKeys,
	listConversationKeys,
	pruneMemory,
	sweepLeftovers,
} from './admin/housekeeping';
export type { PruneOptions, PruneResult, ScopeOptions, SweepOptions } from './admin/housekeeping';
// Retention stored with the memory: Expire After (every kind) and Prune Expired.
export {
	checkExpireAfterDays,
	DAY_MS,
	expiresAt,
	isExpired,
	LEFTOVER_SAFE_AGE_MS,
	MAX_EXPIRE_AFTER_DAYS,
} from './store/retention';
export type { RetentionFields } from './store/retention';
export { pruneExpired } from './admin/retention';
export { REPORT_LISTED } from './store/memory-admin';
export type { ExpiredKind, PruneExpiredOptions, PruneExpiredResult } from './admin/retention';
// Versioned data (src/snapshots): write-once versions, compare-and-swap branch heads, diff and patch.
export { MAIN_BRANCH, MAX_HISTORY_PAGE, MAX_KEEP_LAST, MAX_SUMMARY_BYTES } from './snapshots/types';
export { VersionedData } from './admin/versioned-data';
export type {
	HistoryEntry,
	HistoryOptions as VersionHistoryOptions,
	HistoryPage,
	RollbackOptions,
	SaveVersionInput,
	VersionDiff,
	VersionedDataOptions,
} from './snapshots/types';
export type { BranchHead, VersionCounter, VersionRecord } from './snapshots/records';
export { diffJson, MAX_SUMMARY_LINES } from './snapshots/diff';
export type { JsonDiff } from './snapshots/diff';
export { applyPatch, parsePointer } from './snapshots/patch';
export type { JsonPatch, PatchOperation } from './snapshots/patch';
export { jsonEqual, MAX_DATA_BYTES, MAX_JSON_DEPTH, toJsonText } from './snapshots/json';
export type { JsonValue } from './snapshots/json';
export { compileSchema } from './snapshots/schema';
export type { DataValidator } from './snapshots/schema';
export { exportVersionedData } from './snapshots/transfer';
export type { VersionedDataExport } from './snapshots/transfer';
export {
	CONVERSATION_EXPORT_FORMAT,
	CONVERSATION_EXPORT_VERSION,
	exportConversation,
	importConversation,
} from './admin/conversation-transfer';
export type {
	ConversationExport,
	ConversationImportOptions,
	ConversationImportResult,
} from './admin/conversation-transfer';
// Test and benchmark hooks (cache, tokenizer counters), kept for existing callers.
export { clearAllCaches, clearDocumentCache, setCandidateLimits, tokenizerStats } from './testing';
// Memory administration for the LLM Memory Manager node: read, list, clear, export, import.
export {
	clearMemory,
	listConversations,
	memoryKeyOf,
	readMessages,
	readSummaries,
} from './admin/conversation-memory';
export type {
	ConversationList,
	ConversationSummary,
	MemoryAddress,
	MessagePage,
	PageOptions,
	PositionedMessage,
	ReadMessagesOptions,
} from './admin/conversation-memory';
export {
	clearConversationMemories,
	listConversationMemories,
	readConversationMemories,
} from './admin/conversation-memories';
export { listNodesWithMemory } from './history/objects';
export type { NodeWithMemory } from './history/objects';
export type {
	ClearedMemory,
	ConversationMemories,
	ConversationMemoryPage,
	ConversationMemoryPages,
	ListedMemory,
	MemoryScopeKind,
} from './admin/conversation-memories';
export {
	exportConversationMemory,
	importConversationMemory,
	MEMORY_EXPORT_FORMAT,
	MEMORY_EXPORT_VERSION,
	missingFilesOf,
	parseConversationMemoryExport,
} from './history/memory-transfer';
export type {
	ConversationMemoryExport,
	ExportedFile,
	ImportOptions,
	ImportResult,
} from './history/memory-transfer';
// Memory Base (src/knowledge): per-session capture log, sync into a knowledge base; its indexes (src/indexes).
export {
	captureLogKey,
	captureSealedKey,
	knowledgeBaseMetadataKey,
	memoryBaseConfigKey,
	memoryBaseLeaseKey,
	memoryBaseSessionPrefix,
	memoryBaseSessionsPrefix,
	sessionLeaseKey,
} from './knowledge/keys';
// The folders of a base and of its knowledge base, and the vector index's keys: shared with the index code.
export {
	KNOWLEDGE_BASE_ROOT,
	knowledgeBasePrefix,
	MEMORY_BASE_ROOT,
	memoryBasePrefix,
	vectorIndexPrefix,
	vectorManifestKey,
	vectorSegmentKey,
	vectorSegmentsPrefix,
	lexicalPartsPrefix,
	vectorPartsPrefix,
	registryKey,
	wideLexicalPrefix,
	wideVectorPrefix,
} from './knowledge/keys';
export { MemoryBase } from './knowledge/memory-base';
export { listMemoryBases } from './knowledge/listing';
export type { CapturedPage } from './knowledge/listing';
export {
	chooseRecall,
	RECALL_END,
	RECALL_HALF_LIFE_DAYS,
	RECALL_START,
	recallSection,
} from './knowledge/recall';
export type {
	RecallCandidates,
	RecallOptions,
	RecallResult,
	RecallSearch,
} from './knowledge/recall';
export { isSmallTalk } from './knowledge/small-talk';
export {
	fuse,
	mergeDuplicates,
	NEWER_WITHIN,
	newerFirst,
	RECENCY_WEIGHT,
	recencyFactor,
} from './indexes/fusion/fuse';
export type { LexicalCandidate, Ranked, VectorCandidate } from './indexes/fusion/fuse';
export { Calibration, calibrationOf, clearCalibrations } from './indexes/fusion/calibration';
export { standout } from './indexes/fusion/standout';
export {
	VECTOR_WEIGHT_MAX,
	VECTOR_WEIGHT_MIN,
	VECTOR_WEIGHT_PRIOR,
	weigh,
	weightOf,
} from './indexes/fusion/weights';
export type { FusionWeights } from './indexes/fusion/weights';
export { CONTEXT_WEIGHT } from './indexes/lexical/context';
export type { ChunkFilter } from './indexes/chunks/filter';
export {
	clearLexicalCache,
	FAN,
	LexicalIndex,
	LEXICAL_CACHE_BYTES,
	TAIL_BYTES,
	TAIL_MAX,
} from './indexes/lexical/lexical-index';
export type { LexicalStats } from './indexes/lexical/lexical-index';
export { FOLD_BATCH, IDLE_FOLD_AT, IDLE_FOLD_MS, OPEN_MAX } from './knowledge/log-folding';
export { WideBatches } from './knowledge/wide';
export { WIDE_SEGMENT_BYTES, WIDE_SEGMENT_CHUNKS } from './knowledge/base-indexes';
export {
	lexicalPartFolder,
	partHash,
	partOf,
	sessionPart,
	userPart,
	vectorPartFolder,
} from './knowledge/partitions';
export type { LexicalManifest, OpenSource as OpenLog } from './indexes/lexical/manifest';
export { stem, termCounts, tokenize } from './indexes/lexical/tokenize';
export {
	DEFAULT_EMBEDDING_BATCH,
	DEFAULT_LEASE_MS,
	DEFAULT_THRESHOLD,
	isEmbedder,
	SEAL_AT,
	SEAL_AT_BYTES,
} from './knowledge/types';
export type {
	BaseStatus,
	StatusOptions,
	CaptureInput,
	CaptureMessageInput,
	CaptureMetadata,
	CaptureResult,
	DeleteResult,
	EarlierTurn,
	Embedder,
	ExpireResult,
	ForgetResult,
	MemoryBaseOptions,
	SearchMatch,
	SearchMode,
	SearchOptions,
	SessionStatus,
	SessionSyncResult,
	SyncResult,
	WideCoverage,
} from './knowledge/types';
export {
	chunkId,
	chunkText,
	DEFAULT_CHUNK_OVERLAP,
	DEFAULT_CHUNK_SIZE,
} from './knowledge/chunking';
export { isExternalVectorStore } from './indexes/vector/external-store';
export type { ExternalDocument, ExternalVectorStore } from './indexes/vector/external-store';
export { clearVectorCache, EmbeddedIndex } from './indexes/vector/vector-index';
export { VECTOR_CACHE_BYTES } from './indexes/vector/caches';
export { streamedRanking } from './indexes/vector/stream';
export type { IndexStats } from './indexes/vector/vector-index';
export {
	FORGET_MARK_MS,
	forgetting,
	runToMerge,
	smallRun,
	tailRun,
	TAIL_FLOOR_BYTES,
	withForgetMark,
} from './indexes/vector/vector-merge';
export {
	settleTiers,
	settleCellTiers,
	maintainCellTiers,
	maintainTiers,
	tiersOf,
	bucketKeys,
	TIER_SEGMENTS,
	SETTLING,
	GROWTH,
	MAX_TIERS,
	sizeClass,
} from './indexes';
export {
	chunkAt,
	COMPACT_BELOW,
	MAX_SEGMENTS,
	MAX_TOP_K,
	partsOf,
	rowCount,
	SEGMENT_MAX_VECTORS,
} from './indexes/vector/vector-segment';
export { decodeSegment, messageHash } from './indexes/vector/stored-vectors';
export { encodeSegment, encodeWholeSegment } from './indexes/vector/segment-writer';
export { chunkOrder } from './indexes/chunks/chunk';
export type { IndexedChunk } from './indexes/chunks/chunk';
export type { VectorMatch } from './indexes/vector/vector-segment';
export { simdAvailable, useSimd } from './indexes/vector/simd';
export { listKnowledgeBases } from './knowledge/knowledge-bases';
export type { ListKnowledgeBasesOptions } from './knowledge/knowledge-bases';
export { acquireLease, HeldLease, isFresh, readLease } from './store/lease';
export type { Lease } from './store/lease';
export type {
	CapturedMessage,
	KnowledgeBaseMetadata,
	LexicalState,
	MemoryBaseConfig,
	SessionLog,
} from './knowledge/records';
export { captureTurn, ChatTurn, rereadReport, summaryReport } from './turn/turn';
export type { TurnOptions, TurnReport } from './turn/turn';
export { EMPTY_USER_ID_WARNING, LongTermMemory } from './turn/long-term';
export type { CapturedTurn, LongTermSettings } from './turn/long-term';
export { failedRecall, notRecalled, recallReport } from './turn/recalled';
export type { Recalled } from './turn/recalled';
export {
	dataReport,
	dataSection,
	initializeData,
	proposeChange,
	readVersionedData,
	UPDATE_DATA_TOOL,
	updateDataTool,
} from './turn/versioned';
export type { DataChange, OpenedData, RecentChange, VersionedSettings } from './turn/versioned';
export { changeOfCalls, followUp, parseJsonReply, toolCallsOf } from './turn/data-reply';
export type { CallSeen, DataOutcome } from './turn/data-reply';
export type { IndexManifest, SegmentRef } from './indexes/vector/manifest';
export { MESSAGE_FRAMING_TOKENS, requestTokens } from './prompt/request-tokens';
// Long-term facts (src/facts) and their use in a turn.
export { Facts } from './facts/facts';
export type { FactView, FactsView } from './facts/facts';
export { FactsStore } from './facts/store';
export type { FactsChange, FactsOptions, FactsState } from './facts/store';
export {
	checkSource,
	DEFAULT_FACTS_THRESHOLD,
	DEFAULT_MAX_INPUT_TOKENS,
	DEFAULT_MAX_UNREAD_TURNS,
	learn,
	unreadOf,
} from './facts/learn';
export type { Extractor, LearnInput, LearnResult } from './facts/learn';
export {
	applyExtracted,
	findQuote,
	MIN_QUOTE_CHARS,
	normalize as normalizeQuote,
} from './facts/operations';
export type {
	Applied,
	DropReason,
	FactOperation,
	FactsSource,
	ReadMessage,
} from './facts/operations';
export { MAX_OPERATIONS, parseReply } from './facts/reply';
export type { ParsedReply } from './facts/reply';
export {
	extractionRequest,
	FACTS_END,
	FACTS_INSTRUCTIONS,
	FACTS_START,
	factsSection,
} from './facts/request';
export type { FactsSection } from './facts/request';
export {
	emptyFacts,
	FACTS_FORMAT,
	MAX_FACT_CHARS,
	MAX_FACTS,
	statusOf,
	validateFacts,
} from './facts/records';
export type {
	Cursor,
	Evidence,
	Fact,
	FactStatus,
	FactsDocument,
	PersonEvidence,
	QuoteEvidence,
} from './facts/records';
export type { AddFactInput, EditFactInput, RetireFactInput } from './facts/edits';
export { FORGETTING, forgetInFacts, holdsAny, redacted } from './facts/redact';
export { exportFacts, FACTS_EXPORT_FORMAT, importFacts, parseFactsExport } from './facts/transfer';
export type { FactsExport } from './facts/transfer';
export { FactsAdmin } from './facts/admin';
export type { ExportedFacts } from './facts/admin';
export {
	FACTS_ROOT,
	factsLayout,
	factsPrefix,
	factsRoot,
	factsSpacePrefix,
	factsSubject,
	parseFactsKey,
	subjectRef,
} from './facts/keys';
export type { FactsSubject, SubjectRef } from './facts/keys';
export { layoutUnder, versionedDataLayout } from './snapshots/layout';
export type { VersionLayout } from './snapshots/layout';
export {
	factCaptures,
	factsReport,
	LEARN_WINDOW_MESSAGES,
	learnTurn,
	showFacts,
	threadForFacts,
	withoutHiddenFacts,
} from './turn/facts';
export type { ShownFacts, TurnFacts } from './turn/facts';
export { attachEvidence, EVIDENCE_WINDOW } from './knowledge/evidence';
export type { EvidenceMessage, WithEvidence } from './knowledge/evidence';
