// Versioned data's public shapes and the checks its inputs pass before anything is read or written.
import { isMissing } from '../common/missing';
import { InvalidIdError, InvalidInputError } from '../errors';
import { validateDerivedId } from '../keys/ids';
import { isVersionNumber, MAX_VERSION_NUMBER } from './keys';
import type { MemoryStorage } from '../store/storage';
import type { VersionLayout } from './layout';
import type { JsonPatch } from './patch';
import type { VersionRecord } from './records';

/** The branch every conversation has without creating it (empty until the first save). */
export const MAIN_BRANCH = 'main';
/** The most bytes (UTF-8) of a version's summary. */
export const MAX_SUMMARY_BYTES = 4096;
/** history() returns at most this many entries per page. */
export const MAX_HISTORY_PAGE = 1000;
/** Keep Last N Versions takes at most this many (a save reads the N newest versions of its branch). */
export const MAX_KEEP_LAST = 1000;
export interface VersionedDataOptions {
	storage: MemoryStorage;
	/** The n8n workflow ID (as for chat memory). */
	appId: string;
	conversationId: string;
	keyPrefix?: string;
	/**
	 * A JSON Schema (draft-07, 2019-09 or 2020-12) every saved version must satisfy; checked with Ajv.
	 * Unknown keywords make the schema invalid; "format" is not checked.
	 */
	schema?: unknown;
	/** Compare-and-swap attempts of one save (the branch head) before giving up (default 12). */
	maxAttempts?: number;
	/** The clock: version and head times, and when a stored Expire After has passed (default: the system clock). */
	now?: () => Date;
	/**
	 * Where the versions live, for a memory that keeps its own data as versions (facts): its own folder
	 * instead of the conversation's versioned data. `appId` and `conversationId` then only name it.
	 */
	layout?: VersionLayout;
}

export interface SaveVersionInput {
	/** Any plain JSON value, at most MAX_DATA_BYTES serialized. It is copied; the caller's value is left as it is. */
	data: unknown;
	/** What changed, for history and for a model asked "what did I change?". Required. */
	summary: string;
	/** Default "main". Other branches must be created with branch() first. */
	branch?: string;
	/** The chat message this change belongs to. */
	messageId?: string;
	/**
	 * Save only if the branch is still at this version (null: only if the branch is empty); otherwise
	 * VersionConflictError. Without it, the save lands after whatever the branch is at (linear history).
	 */
	expectedVersion?: number | null;
	/**
	 * Expire After (days), stored on the branch head and counted from this save: once every branch is
	 * past its rule, the conversation's versioned data reads as empty and is deleted when next touched.
	 * Undefined keeps the stored rule; 0 removes it.
	 */
	expireAfterDays?: number;
	/**
	 * Keep Last N Versions (1–1000), stored on the branch head: after the save, the branch's versions
	 * older than its newest N are deleted (those another branch still reaches stay). Undefined keeps the
	 * stored number; 0 removes it.
	 */
	keepLastVersions?: number;
}

export interface HistoryOptions {
	branch?: string;
	/** Entries per page, 1–1000 (default 20). */
	limit?: number;
	/** Continue below this version: the page starts at its parent (pass the previous page's nextBefore). */
	before?: number;
}

export interface HistoryEntry {
	version: number;
	parent: number | null;
	summary: string;
	created_at: string;
	message_id?: string;
	/** The data's size as JSON, in bytes (UTF-8). */
	size: number;
}

export interface HistoryPage {
	branch: string;
	/** Newest first, following parent pointers. */
	entries: HistoryEntry[];
	/** Pass as `before` for the next page; null when the page reached the first version (or the cut). */
	nextBefore: number | null;
	/**
	 * Set when the page reached the oldest version the branch still keeps (Keep Last N Versions): the
	 * versions before it were deleted.
	 */
	truncatedBefore?: number;
}

export interface VersionDiff {
	from: number;
	to: number;
	/** RFC 6902 operations turning version `from`'s data into version `to`'s. */
	patch: JsonPatch;
	/** One short line per change, e.g. `replaced /category: "PERFUME" → "FRAGRANCE"`. */
	summary: string[];
}

export interface RollbackOptions {
	messageId?: string;
	expectedVersion?: number | null;
}

const sizes = new WeakMap<VersionRecord, number>();

export function sizeOf(record: VersionRecord): number {
	let size = sizes.get(record);
	if (size === undefined) {
		size = Buffer.byteLength(JSON.stringify(record.data), 'utf8');
		sizes.set(record, size);
	}
	return size;
}

export function checkVersionNumber(field: string, value: unknown): number {
	if (!isVersionNumber(value))
		throw new InvalidInputError(
			field,
			`must be a version number (an integer from 1 to ${MAX_VERSION_NUMBER}), got ${typeof value === 'number' ? value : typeof value}`,
		);
	return value;
}

export function checkSummary(value: unknown): string {
	if (typeof value !== 'string' || value.trim() === '')
		throw new InvalidInputError(
			'summary',
			'is required: a non-empty text saying what changed (e.g. "Changed category to FRAGRANCE")',
		);
	const bytes = Buffer.byteLength(value, 'utf8');
	if (bytes > MAX_SUMMARY_BYTES)
		throw new InvalidInputError(
			'summary',
			`must be at most ${MAX_SUMMARY_BYTES} bytes, got ${bytes}`,
		);
	return value;
}

export function checkExpected(value: unknown): number | null | undefined {
	if (value === undefined || value === null) return value;
	return checkVersionNumber('expectedVersion', value);
}

/** Keep Last N Versions as given: undefined keeps the stored number, 0 removes it, else 1–MAX_KEEP_LAST. */
export function checkKeepLast(value: unknown): number | undefined {
	if (value === undefined || value === null) return undefined;
	if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) > MAX_KEEP_LAST)
		throw new InvalidInputError(
			'keepLastVersions',
			`must be a whole number from 1 to ${MAX_KEEP_LAST} (0: keep every version)`,
		);
	return value as number;
}

export function checkMessageId(value: unknown): string | undefined {
	if (isMissing(value)) return undefined;
	if (typeof value !== 'string') throw new InvalidIdError('message_id', 'must be a string');
	return validateDerivedId('message_id', value);
}
