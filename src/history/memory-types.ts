// What a chat memory is given and gives back: its options, the turn to append, the history to read.
import type { FileOptions } from '../prompt/file-kinds';
import type { ImageDetail, ToolCall } from '../prompt/types';
import type { FileInput } from '../store/blobs';
import type { StoredDataVersion } from '../store/schema';
import type { MemoryStorage } from '../store/storage';
import type { TokenCounter } from '../tokens/tokens';
import type { WarningHandler } from '../common/warn';
import type { LogOptions } from '../store/message-log';
import type { SummaryOptions } from './summarized';
import type { ToolResultsMode } from './tool-results';
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
	/** The clock: message times, and when a stored Expire After has passed (default: the system clock). */
	now?: () => Date;
	newId?: () => string;
	/**
	 * Expire After (days), stored with the memory by every write and counted from the last one: past it
	 * the memory reads as empty and is deleted when next touched. Undefined keeps the stored rule; 0
	 * removes it (never expire).
	 */
	expireAfterDays?: number;
	/** Non-fatal problems (tokenizer fallback). Default: process.emitWarning. */
	onWarning?: WarningHandler;
	/**
	 * What is stored of a tool turn (see tool-results.ts): `keep` (the default) the tool results, cut at
	 * maxToolOutputChars; `note` a one-line note of each result's size and tool instead; `leaveOut` the
	 * user message and the final answer only. Applied when a turn is stored: stored turns stay as they are.
	 */
	toolResults?: ToolResultsMode;
	/** With `keep`: tool results longer than this many characters are cut, with a note (default 16,000). */
	maxToolOutputChars?: number;
	/** When the document seals its older messages into write-once segments (docs/format.md); defaults suit chat. */
	log?: Partial<LogOptions>;
	/** Files: the token limit of each file's text (default 2,000), how PDFs and audio are sent (default text). */
	files?: FileOptions;
}

export { DEFAULT_MAX_TOOL_OUTPUT_CHARS } from './tool-results';

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
	/**
	 * The versioned data the answer is based on (stored as the assistant message's `data_version`):
	 * the version the turn produced, or the one it read when it changed nothing.
	 */
	dataVersion?: StoredDataVersion;
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
	/** Summarize the turns that no longer fit instead of only dropping them (see SummaryOptions). */
	summary?: SummaryOptions;
}

export interface FlushResult {
	written: boolean;
	attempts: number;
}
