import { KeyedQueue } from '../common/keyed-queue';
import { isMissing } from '../common/missing';
import {
	BranchExistsError,
	ConflictError,
	CorruptDocumentError,
	InvalidIdError,
	InvalidInputError,
	InvalidOptionError,
	SchemaViolationError,
	UnknownBranchError,
	UnknownVersionError,
	VersionConflictError,
} from '../errors';
import { validateBranchName, validateDerivedId } from '../keys/ids';
import {
	branchKey,
	isVersionNumber,
	MAX_VERSION_NUMBER,
	parseKey,
	versionCounterKey,
	versionedDataPrefix,
	versionKey,
} from '../keys/layout';
import { DocumentStore } from '../store/document-store';
import type { Versioned } from '../store/document-store';
import type { MemoryStorage } from '../store/storage';
import { diffJson } from './diff';
import { toJsonText } from './json';
import type { JsonValue } from './json';
import type { JsonPatch } from './patch';
import { counterCodec, decodeVersionRecord, encodeVersionRecord, headCodec } from './records';
import type { BranchHead, VersionCounter, VersionRecord } from './records';
import { compileSchema } from './schema';
import type { DataValidator } from './schema';
import { exportConversation, importConversation } from './transfer';
import type { ConversationExport, ConversationImportResult } from './transfer';

/** The branch every conversation has without creating it (empty until the first save). */
export const MAIN_BRANCH = 'main';
/** The most bytes (UTF-8) of a version's summary. */
export const MAX_SUMMARY_BYTES = 4096;
/** history() returns at most this many entries per page. */
export const MAX_HISTORY_PAGE = 1000;
/**
 * Create-only attempts at consecutive numbers before a save lists the stored versions once to find the
 * highest (only when the counter is far behind, e.g. deleted by hand; normally the first attempt lands).
 */
const STEPS_BEFORE_LISTING = 16;

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
	/** Pass as `before` for the next page; null when the page reached the first version. */
	nextBefore: number | null;
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

/**
 * Saves on one branch by this process run one after another: each then starts from the head and counter
 * the previous one left (read in parallel), instead of racing it and stepping past its number.
 */
const saves = new KeyedQueue();

function sizeOf(record: VersionRecord): number {
	let size = sizes.get(record);
	if (size === undefined) {
		size = Buffer.byteLength(JSON.stringify(record.data), 'utf8');
		sizes.set(record, size);
	}
	return size;
}

function checkVersionNumber(field: string, value: unknown): number {
	if (!isVersionNumber(value))
		throw new InvalidInputError(
			field,
			`must be a version number (an integer from 1 to ${MAX_VERSION_NUMBER}), got ${typeof value === 'number' ? value : typeof value}`,
		);
	return value;
}

function checkSummary(value: unknown): string {
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

function checkExpected(value: unknown): number | null | undefined {
	if (value === undefined || value === null) return value;
	return checkVersionNumber('expectedVersion', value);
}

function checkMessageId(value: unknown): string | undefined {
	if (isMissing(value)) return undefined;
	if (typeof value !== 'string') throw new InvalidIdError('message_id', 'must be a string');
	return validateDerivedId('message_id', value);
}

/**
 * Versioned working data of one conversation (the "data memory" beside chat memory): JSON snapshots
 * with a summary each, on branches, with history, diff and rollback. Each version is a write-once object;
 * each branch a small head moved by compare-and-swap. See src/README.md ("Versioned data").
 *
 * Records returned are deeply frozen (they are shared through the process cache): copy a version's data
 * (structuredClone) before changing it.
 */
export class VersionedData {
	readonly storage: MemoryStorage;
	readonly appId: string;
	readonly conversationId: string;
	readonly keyPrefix?: string;
	private readonly validate?: DataValidator;
	private readonly maxAttempts: number;
	private readonly objects: DocumentStore<unknown>;
	private readonly counters: DocumentStore<VersionCounter>;

	constructor(options: VersionedDataOptions) {
		this.storage = options.storage;
		this.appId = options.appId;
		this.conversationId = options.conversationId;
		this.keyPrefix = options.keyPrefix;
		versionedDataPrefix(options.appId, options.conversationId, options.keyPrefix); // checks the IDs now
		if (options.schema !== undefined) this.validate = compileSchema(options.schema);
		const maxAttempts = options.maxAttempts ?? 12;
		if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1)
			throw new InvalidOptionError('maxAttempts', 'must be a positive integer');
		this.maxAttempts = maxAttempts;
		// Write-once objects only (readImmutable, create): its codec is never used.
		this.objects = new DocumentStore<unknown>(this.storage, counterCodec);
		this.counters = new DocumentStore(this.storage, counterCodec, { maxAttempts });
	}

	/** `{app_id}/{conversation_id}`, as errors name it. */
	get scope(): string {
		return `${this.appId}/${this.conversationId}`;
	}

	/** `{prefix}versioned_data/{app_id}/{conversation_id}/`: every object of this conversation's versioned data. */
	get prefix(): string {
		return versionedDataPrefix(this.appId, this.conversationId, this.keyPrefix);
	}

	private heads(branch: string): DocumentStore<BranchHead> {
		return new DocumentStore(this.storage, headCodec(branch), { maxAttempts: this.maxAttempts });
	}

	private versionKey(n: number): string {
		return versionKey(this.appId, this.conversationId, n, this.keyPrefix);
	}

	private branchKey(branch: string): string {
		return branchKey(this.appId, this.conversationId, branch, this.keyPrefix);
	}

	private get counterKey(): string {
		return versionCounterKey(this.appId, this.conversationId, this.keyPrefix);
	}

	/**
	 * Saves `data` as a new version on a branch and moves the branch to it. Costs the same at any number
	 * of versions: read the head and the counter, create the version (create-only), compare-and-swap the
	 * head, raise the counter. Concurrent saves on one branch from any number of processes all land, one
	 * after another (each new version's parent is the one before it); with `expectedVersion` a save that
	 * lost the race is refused instead (VersionConflictError). Bad input (non-JSON data, too large, no
	 * summary, schema violation, bad branch name) is refused before anything is written.
	 */
	async saveVersion(input: SaveVersionInput): Promise<VersionRecord> {
		if (typeof input !== 'object' || input === null)
			throw new InvalidInputError('input', 'must be an object with "data" and "summary"');
		const branch = validateBranchName(input.branch ?? MAIN_BRANCH);
		const summary = checkSummary(input.summary);
		const messageId = checkMessageId(input.messageId);
		const expected = checkExpected(input.expectedVersion);
		const { text } = toJsonText('data', input.data);
		const data = JSON.parse(text) as JsonValue;
		if (this.validate) {
			const errors = this.validate(data);
			if (errors.length > 0) throw new SchemaViolationError(errors);
		}
		return this.commit(branch, summary, messageId, text, data, expected);
	}

	private commit(
		branch: string,
		summary: string,
		messageId: string | undefined,
		dataText: string,
		data: JsonValue,
		expected: number | null | undefined,
	): Promise<VersionRecord> {
		const headKey = this.branchKey(branch);
		return saves.run(`${this.storage.describe()}\n${headKey}`, () =>
			this.commitNow(branch, headKey, summary, messageId, dataText, data, expected),
		);
	}

	private async commitNow(
		branch: string,
		headKey: string,
		summary: string,
		messageId: string | undefined,
		dataText: string,
		data: JsonValue,
		expected: number | null | undefined,
	): Promise<VersionRecord> {
		const heads = this.heads(branch);
		const [head, counter] = await Promise.all([
			heads.read(headKey),
			this.counters.read(this.counterKey),
		]);
		const createdAt = new Date().toISOString();
		/** Versions this save created, by number: a head found at one of them is this save's own write. */
		const mine = new Map<number, VersionRecord>();
		let saved: VersionRecord | undefined;
		let hint = counter.version === null ? 1 : counter.doc.next;
		let counterWrite: Promise<void> = Promise.resolve();
		let counterAssumed: Versioned<VersionCounter> | undefined = counter;
		await heads.update(
			headKey,
			async (current) => {
				const at = current.version === null ? null : current.doc.version;
				if (at !== null && mine.has(at)) {
					// A compare-and-swap whose response was lost (and retried) did land.
					saved = mine.get(at);
					return undefined;
				}
				if (current.version === null && branch !== MAIN_BRANCH)
					throw new UnknownBranchError(this.scope, branch);
				if (expected !== undefined && expected !== at)
					throw new VersionConflictError(branch, expected, at);
				const record = await this.allocate(
					{ parent: at, summary, created_at: createdAt, message_id: messageId },
					dataText,
					data,
					Math.max(hint, (at ?? 0) + 1),
				);
				hint = record.version + 1;
				mine.set(record.version, record);
				saved = record;
				const next = hint;
				const assumed = counterAssumed;
				counterAssumed = undefined;
				counterWrite = counterWrite.then(() => this.raiseCounter(next, assumed));
				return { branch, version: record.version, updated_at: createdAt };
			},
			head,
		);
		await counterWrite;
		return saved as VersionRecord;
	}

	/** Creates the version at the first free number from `start` (create-only, stepping on conflict). */
	private async allocate(
		meta: Omit<VersionRecord, 'version' | 'data'>,
		dataText: string,
		data: JsonValue,
		start: number,
	): Promise<VersionRecord> {
		let n = start;
		for (let steps = 0; ; steps++) {
			if (steps === STEPS_BEFORE_LISTING) n = Math.max(n, (await this.highestStored()) + 1);
			if (!isVersionNumber(n))
				throw new InvalidInputError(
					'version',
					`this conversation has used every version number up to ${MAX_VERSION_NUMBER}`,
				);
			const record: VersionRecord = {
				version: n,
				parent: meta.parent,
				summary: meta.summary,
				created_at: meta.created_at,
				...(meta.message_id !== undefined ? { message_id: meta.message_id } : {}),
				data,
			};
			try {
				await this.objects.create(
					this.versionKey(n),
					encodeVersionRecord(record, dataText),
					record,
				);
				return record;
			} catch (error) {
				if (!(error instanceof ConflictError)) throw error;
				n++;
			}
		}
	}

	/** The highest stored version number (0 if none), by listing: only when the counter is far behind. */
	private async highestStored(): Promise<number> {
		let highest = 0;
		for (const o of await this.storage.list(`${this.prefix}versions/`)) {
			const parsed = parseKey(o.key, this.keyPrefix);
			if (parsed?.kind === 'version' && (parsed.version as number) > highest)
				highest = parsed.version as number;
		}
		return highest;
	}

	/** Raises the counter to `next` (never lowers it). A hint only: failing to write it costs a later save a step. */
	private async raiseCounter(next: number, assumed?: Versioned<VersionCounter>): Promise<void> {
		try {
			await this.counters.update(
				this.counterKey,
				(cur) => (cur.version !== null && cur.doc.next >= next ? undefined : { next }),
				assumed,
			);
		} catch {
			// The version and the head are saved; the next save steps past a stale counter.
		}
	}

	private async readVersion(n: number): Promise<VersionRecord | null> {
		const key = this.versionKey(n);
		return this.objects.readImmutable(key, (bytes) => decodeVersionRecord(key, bytes, n));
	}

	/** The head of a branch, or null when the branch is "main" and nothing was saved yet. */
	private async headOf(branch: string): Promise<BranchHead | null> {
		const { doc, version } = await this.heads(branch).read(this.branchKey(branch));
		if (version !== null) return doc;
		if (branch === MAIN_BRANCH) return null;
		throw new UnknownBranchError(this.scope, branch);
	}

	private async mustRead(n: number, referrer: string, what: string): Promise<VersionRecord> {
		const record = await this.readVersion(n);
		if (!record)
			throw new CorruptDocumentError(referrer, `${what} version ${n}, which does not exist`);
		return record;
	}

	/** The version a branch is at (default "main"); null when nothing was saved on "main" yet. Two small reads. */
	async getCurrent(branch: string = MAIN_BRANCH): Promise<VersionRecord | null> {
		const name = validateBranchName(branch);
		const head = await this.headOf(name);
		if (!head) return null;
		return this.mustRead(head.version, this.branchKey(name), 'it points to');
	}

	/** One version by number (on any branch); UnknownVersionError when there is none. */
	async getVersion(version: number): Promise<VersionRecord> {
		const n = checkVersionNumber('version', version);
		const record = await this.readVersion(n);
		if (!record) throw new UnknownVersionError(this.scope, n);
		return record;
	}

	/**
	 * One page of a branch's history, newest first, following parent pointers from the head (or from
	 * `before`'s parent). Costs one read per entry (O(page), whatever the number of versions), each a
	 * whole version object the first time in this process.
	 */
	async history(options: HistoryOptions = {}): Promise<HistoryPage> {
		const branch = validateBranchName(options.branch ?? MAIN_BRANCH);
		const limit = options.limit ?? 20;
		if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_HISTORY_PAGE)
			throw new InvalidInputError('limit', `must be an integer from 1 to ${MAX_HISTORY_PAGE}`);
		let next: number | null;
		let referrer: string;
		if (options.before !== undefined) {
			const from = await this.getVersion(checkVersionNumber('before', options.before));
			next = from.parent;
			referrer = this.versionKey(from.version);
		} else {
			const head = await this.headOf(branch);
			next = head ? head.version : null;
			referrer = this.branchKey(branch);
		}
		const entries: HistoryEntry[] = [];
		while (next !== null && entries.length < limit) {
			const r: VersionRecord = await this.mustRead(
				next,
				referrer,
				entries.length === 0 && options.before === undefined ? 'it points to' : 'its parent is',
			);
			entries.push({
				version: r.version,
				parent: r.parent,
				summary: r.summary,
				created_at: r.created_at,
				...(r.message_id !== undefined ? { message_id: r.message_id } : {}),
				size: sizeOf(r),
			});
			referrer = this.versionKey(r.version);
			next = r.parent;
		}
		return {
			branch,
			entries,
			nextBefore:
				next === null || entries.length === 0 ? null : entries[entries.length - 1].version,
		};
	}

	/** What changed from version `from` to version `to`: an RFC 6902 patch and one line per change. */
	async diff(from: number, to: number): Promise<VersionDiff> {
		const [a, b] = await Promise.all([this.getVersion(from), this.getVersion(to)]);
		return { from: a.version, to: b.version, ...diffJson(a.data, b.data) };
	}

	/**
	 * A new version on `branch` whose data equals version `version`'s, summary "Rolled back to v{n}".
	 * Nothing is deleted: the versions after it stay in history (and readable by number).
	 */
	async rollback(
		version: number,
		branch: string = MAIN_BRANCH,
		options: RollbackOptions = {},
	): Promise<VersionRecord> {
		const target = await this.getVersion(version);
		return this.saveVersion({
			data: target.data,
			summary: `Rolled back to v${target.version}`,
			branch,
			messageId: options.messageId,
			expectedVersion: options.expectedVersion,
		});
	}

	/** Creates branch `name` at version `fromVersion`. BranchExistsError if it exists (also "main" once saved to). */
	async branch(name: string, fromVersion: number): Promise<BranchHead> {
		const branch = validateBranchName(name);
		const from = await this.getVersion(fromVersion);
		const now = new Date().toISOString();
		const result = await this.heads(branch).update(this.branchKey(branch), (current) => {
			if (current.version !== null) throw new BranchExistsError(this.scope, branch);
			return { branch, version: from.version, updated_at: now };
		});
		return result.current.doc;
	}

	/** Every branch with the version it is at, by name. Costs a listing of the branches and one read each. */
	async listBranches(): Promise<BranchHead[]> {
		const listed = await this.storage.list(`${this.prefix}branches/`);
		const names = listed
			.map((o) => parseKey(o.key, this.keyPrefix))
			.filter((p) => p?.kind === 'branch')
			.map((p) => p?.branch as string)
			.sort();
		const heads: BranchHead[] = [];
		for (let i = 0; i < names.length; i += 16) {
			const batch = await Promise.all(
				names.slice(i, i + 16).map(async (name) => {
					const { doc, version } = await this.heads(name).read(this.branchKey(name));
					return version === null ? undefined : doc; // deleted since the listing
				}),
			);
			for (const h of batch) if (h) heads.push(h);
		}
		return heads;
	}

	/** This conversation as one JSON value: chat memory, files, and every version and branch (see exportConversation). */
	exportConversation(): Promise<ConversationExport> {
		return exportConversation(this.storage, this.appId, this.conversationId, {
			keyPrefix: this.keyPrefix,
		});
	}

	/** Imports an export into this conversation; refuses existing data unless `overwrite` (see importConversation). */
	importConversation(
		value: unknown,
		options: { overwrite?: boolean } = {},
	): Promise<ConversationImportResult> {
		return importConversation(this.storage, this.appId, value, {
			conversationId: this.conversationId,
			keyPrefix: this.keyPrefix,
			overwrite: options.overwrite,
		});
	}
}
