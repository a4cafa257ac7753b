// Export and import of one conversation as one JSON value: its chat memory (the Memory Manager's
// conversation-memory export: documents and copied files) and its versioned data (every version object,
// every branch head, the counter).
import { deleteConversationMemory, listConversationKeys } from '../admin/housekeeping';
import type { ScopeOptions } from '../admin/housekeeping';
import {
	exportConversationMemory,
	importConversationMemory,
	parseConversationMemoryExport,
} from '../admin/memory-transfer';
import type {
	ConversationMemoryExport,
	ImportResult as MemoryImportResult,
} from '../admin/memory-transfer';
import {
	ConversationExistsError,
	CorruptDocumentError,
	InvalidExportError,
	MemoryError,
	NoMemoryStoredError,
} from '../errors';
import { validateBranchName, validateId } from '../keys/ids';
import {
	branchKey,
	parseKey,
	versionCounterKey,
	versionedDataPrefix,
	versionKey,
} from '../keys/layout';
import { decodeJsonObject, encodeJson } from '../store/codec';
import type { MemoryStorage } from '../store/storage';
import { MAX_DATA_BYTES, toJsonText } from './json';
import { validateBranchHead, validateCounter, validateVersionRecord } from './records';
import type { BranchHead, VersionCounter, VersionRecord } from './records';

export const CONVERSATION_EXPORT_FORMAT = 'n8n-nodes-llm-memory/conversation';
export const CONVERSATION_EXPORT_VERSION = 1;

/** A conversation's versioned data, as stored. */
export interface VersionedDataExport {
	/** The next-number hint (null when none is stored). */
	counter: VersionCounter | null;
	/** Every branch head, by name. */
	branches: BranchHead[];
	/** Every version object as stored, by number (also versions no branch reaches). */
	versions: VersionRecord[];
}

/** One conversation, whole: what exportConversation returns and importConversation takes. */
export interface ConversationExport {
	format: typeof CONVERSATION_EXPORT_FORMAT;
	version: typeof CONVERSATION_EXPORT_VERSION;
	conversationId: string;
	/** Its chat memory (exportConversationMemory's value), or null when it has none. */
	memory: ConversationMemoryExport | null;
	versionedData: VersionedDataExport;
}

export interface ConversationImportOptions extends ScopeOptions {
	/** Import into this conversation instead of the one the export names. */
	conversationId?: string;
	/** Delete everything the conversation holds first (default: refuse with ConversationExistsError). */
	overwrite?: boolean;
}

export interface ConversationImportResult {
	conversationId: string;
	/** What importConversationMemory reported, or null when the export had no chat memory. */
	memory: MemoryImportResult | null;
	versions: number;
	branches: number;
	/** Keys deleted first (overwrite). */
	replaced: string[];
}

const PARALLEL = 16;

async function mapLimit<T, R>(items: T[], fn: (item: T) => Promise<R>): Promise<R[]> {
	const out: R[] = [];
	for (let i = 0; i < items.length; i += PARALLEL)
		out.push(...(await Promise.all(items.slice(i, i + PARALLEL).map(fn))));
	return out;
}

/** Reads a conversation's versioned data: every version object, every branch head, the counter. */
export async function exportVersionedData(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ScopeOptions = {},
): Promise<VersionedDataExport> {
	const prefix = options.keyPrefix;
	const listed = (await storage.list(versionedDataPrefix(appId, conversationId, prefix)))
		.map((o) => ({ key: o.key, parsed: parseKey(o.key, prefix) }))
		.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
	const read = async (key: string) => {
		const got = await storage.get(key);
		return got ? decodeJsonObject(key, got.body) : undefined; // undefined: deleted since the listing
	};
	const versions = (
		await mapLimit(
			listed.filter((l) => l.parsed?.kind === 'version'),
			async ({ key, parsed }) => {
				const value = await read(key);
				return value && validateVersionRecord(key, value, parsed?.version);
			},
		)
	).filter((v) => v !== undefined);
	const branches = (
		await mapLimit(
			listed.filter((l) => l.parsed?.kind === 'branch'),
			async ({ key, parsed }) => {
				const value = await read(key);
				return value && validateBranchHead(key, value, parsed?.branch);
			},
		)
	).filter((b) => b !== undefined);
	const counterKey = versionCounterKey(appId, conversationId, prefix);
	const counter = listed.some((l) => l.key === counterKey) ? await read(counterKey) : undefined;
	return {
		counter: counter ? validateCounter(counterKey, counter) : null,
		branches,
		versions,
	};
}

/**
 * Reads one conversation into one JSON value: its chat memory as exportConversationMemory gives it
 * (conversation and node documents with every message, sealed ones included, and the copied files), and
 * its versioned data exactly as stored. Not a snapshot: writes made while it reads may or may not be in it.
 */
export async function exportConversation(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ScopeOptions = {},
): Promise<ConversationExport> {
	const [memory, versionedData] = await Promise.all([
		exportConversationMemory(storage, appId, conversationId, options).catch((error: unknown) => {
			if (error instanceof NoMemoryStoredError) return null;
			throw error;
		}),
		exportVersionedData(storage, appId, conversationId, options),
	]);
	return {
		format: CONVERSATION_EXPORT_FORMAT,
		version: CONVERSATION_EXPORT_VERSION,
		conversationId,
		memory,
		versionedData,
	};
}

function invalid(path: string, reason: string): never {
	throw new InvalidExportError(path, reason);
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function arrayAt(value: unknown, path: string): unknown[] {
	if (!Array.isArray(value)) invalid(path, 'must be an array');
	return value;
}

/** Runs a check; a MemoryError it throws (corrupt record, bad name, not JSON) becomes an InvalidExportError at `path`. */
function at<T>(path: string, check: () => T): T {
	try {
		return check();
	} catch (error) {
		if (error instanceof InvalidExportError) throw error;
		if (error instanceof CorruptDocumentError) invalid(path, error.detail);
		if (error instanceof MemoryError) invalid(path, error.message);
		throw error;
	}
}

/** Checks versioned data: records, unique numbers, every parent and branch target present. */
function checkVersionedData(value: unknown): VersionedDataExport {
	const base = 'versionedData';
	if (!isRecord(value)) invalid(base, 'must be an object');
	const numbers = new Set<number>();
	const versions = arrayAt(value.versions, `${base}.versions`).map((v, i) => {
		const path = `${base}.versions[${i}]`;
		const record = at(path, () => validateVersionRecord(path, v));
		at(`${path}.data`, () => toJsonText('data', record.data, MAX_DATA_BYTES));
		if (numbers.has(record.version))
			invalid(`${path}.version`, `version ${record.version} appears twice`);
		numbers.add(record.version);
		return record;
	});
	versions.forEach((v, i) => {
		if (v.parent !== null && !numbers.has(v.parent))
			invalid(`${base}.versions[${i}].parent`, `version ${v.parent} is not in the export`);
	});
	const names = new Set<string>();
	const branches = arrayAt(value.branches, `${base}.branches`).map((b, i) => {
		const path = `${base}.branches[${i}]`;
		const head = at(path, () => validateBranchHead(path, b));
		at(`${path}.branch`, () => validateBranchName(head.branch));
		if (names.has(head.branch)) invalid(`${path}.branch`, `"${head.branch}" appears twice`);
		names.add(head.branch);
		if (!numbers.has(head.version))
			invalid(`${path}.version`, `version ${head.version} is not in the export`);
		return head;
	});
	const counter =
		value.counter === null
			? null
			: at(`${base}.counter`, () => validateCounter(`${base}.counter`, value.counter));
	return { counter, branches, versions };
}

/**
 * Stores an export (see exportConversation) as conversation `conversationId` (default: the one it
 * names) of `appId`. The whole value is checked first: the chat memory as importConversationMemory
 * checks it, the versioned data for a consistent history (every parent and every branch's version
 * present). A conversation that holds anything (chat memory, files, versioned data) is refused with
 * ConversationExistsError unless `overwrite`, which deletes all of it first (deleteConversationMemory);
 * nothing is written before those checks. Then the chat memory is imported, then the version objects,
 * the counter and last the branch heads, byte for byte as exported, each create-only. Not atomic: a
 * failure part-way (an outage, a concurrent writer) leaves part of it written.
 */
export async function importConversation(
	storage: MemoryStorage,
	appId: string,
	value: unknown,
	options: ConversationImportOptions = {},
): Promise<ConversationImportResult> {
	if (!isRecord(value)) invalid('', 'must be an exported conversation (an object)');
	if (value.format !== CONVERSATION_EXPORT_FORMAT)
		invalid('format', `must be "${CONVERSATION_EXPORT_FORMAT}": this is not a conversation export`);
	if (value.version !== CONVERSATION_EXPORT_VERSION)
		invalid(
			'version',
			`must be ${CONVERSATION_EXPORT_VERSION} (this package reads version ${CONVERSATION_EXPORT_VERSION})`,
		);
	const memory =
		value.memory === null
			? null
			: at('memory', () => {
					try {
						return parseConversationMemoryExport(value.memory);
					} catch (error) {
						if (error instanceof InvalidExportError)
							invalid(error.path === '' ? 'memory' : `memory.${error.path}`, error.reason);
						throw error;
					}
				});
	const data = checkVersionedData(value.versionedData);
	validateId('app_id', appId);
	const conversationId = validateId(
		'conversation_id',
		options.conversationId ?? (value.conversationId as unknown),
	);
	const scope = { keyPrefix: options.keyPrefix };
	const existing = await listConversationKeys(storage, appId, conversationId, scope);
	let replaced: string[] = [];
	if (existing.length > 0) {
		if (!options.overwrite)
			throw new ConversationExistsError(
				appId,
				conversationId,
				existing.map((o) => o.key),
			);
		replaced = await deleteConversationMemory(storage, appId, conversationId, scope);
	}
	const memoryResult = memory
		? await importConversationMemory(storage, appId, memory, { ...scope, conversationId })
		: null;
	const create = (key: string, doc: unknown) =>
		storage.put(key, encodeJson(doc), { ifVersion: null, contentType: 'application/json' });
	await mapLimit(data.versions, (v) =>
		create(versionKey(appId, conversationId, v.version, options.keyPrefix), v),
	);
	if (data.counter)
		await create(versionCounterKey(appId, conversationId, options.keyPrefix), data.counter);
	for (const b of data.branches)
		await create(branchKey(appId, conversationId, b.branch, options.keyPrefix), b);
	return {
		conversationId,
		memory: memoryResult,
		versions: data.versions.length,
		branches: data.branches.length,
		replaced,
	};
}
