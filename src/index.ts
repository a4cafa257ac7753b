export * from './errors';
export { MAX_ID_BYTES, validateId, validateKeyPrefix } from './ids';
export {
	appPrefixes,
	conversationFilesPrefix,
	conversationMemoryKey,
	conversationNodesPrefix,
	nodeMemoryKey,
	parseKey,
} from './keys';
export type { ParsedKey } from './keys';
export { decodeDocument, DOCUMENT_VERSION, emptyDocument, encodeDocument, memoryDocumentSchema } from './document';
export type { MemoryDocument, StoredFile, StoredMessage } from './document';
export { clearDocumentCache } from './document-cache';
export { extractThread, threadStart, UUID_NIL, walkThread } from './thread';
export { DEFAULT_MAX_TOKEN_LIMIT, effectiveWindow, MAX_HISTORY_TURNS, selectHistory } from './truncate';
export type { HistorySelection, SelectOptions, Turn } from './truncate';
export { encodingForModel, fallbackTokenCount, loadedEncodings, safeCounter, TiktokenCounter, tokenizerStats } from './tokens';
export type { Encoding, TokenCounter } from './tokens';
export { fileTypeOf, IMAGE_TOKEN_ESTIMATE, inputFileParts, messageTokenCount } from './files';
export type { FileInput, FileType, SkippedFile } from './files';
export type { ContentPart, ImageDetail, PromptMessage } from './prompt-types';
export { historyToText } from './prompt-text';
export type { TextPrefixes } from './prompt-text';
export { mergeTurns, NodeTokenBufferMemory, TokenBufferMemory } from './memory';
export type { AddedTurn, FlushResult, History, HistoryOptions, MemoryOptions, TurnInput } from './memory';
export type { GetOptions, ListedObject, MemoryStorage, NotModified, PutOptions, StoredObject } from './storage/storage';
export { LocalDiskStorage } from './storage/local-disk';
export type { LocalDiskStorageOptions } from './storage/local-disk';
export { S3Storage } from './storage/s3';
export type { ConditionalWriteSupport, S3StorageOptions } from './storage/s3';
export { deleteConversationMemory, listAppKeys, listConversationKeys, pruneMemory } from './housekeeping';
export type { PruneOptions, PruneResult, ScopeOptions } from './housekeeping';
