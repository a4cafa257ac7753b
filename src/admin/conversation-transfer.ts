// Export and import of one whole conversation as one JSON value: its chat memory (the Memory Manager's
// conversation-memory export: documents and copied files) and its versioned data (every version object,
// every branch head, the counter).
import { InvalidExportError, NoMemoryStoredError } from '../errors';
import { validateId } from '../keys/ids';
import { at, invalid, isRecord } from '../store/parse';
import type { ListedObject, MemoryStorage } from '../store/storage';
import { captureLogKey } from '../keys/layout';
import {
	exportVersionedData,
	parseVersionedDataExport,
	writeVersionedData,
} from '../snapshots/transfer';
import type { VersionedDataExport } from '../snapshots/transfer';
import {
	deleteConversationMemory,
	forgetConversationCache,
	listConversationKeys,
} from './housekeeping';
import type { ScopeOptions } from './housekeeping';
import { exportCaptures, importCaptures, parseCaptures } from './conversation-captures';
import type { ExportedCaptures } from './conversation-captures';
import {
	exportConversationMemory,
	importConversationMemory,
	parseConversationMemoryExport,
} from './memory-transfer';
import type {
	ConversationMemoryExport,
	ImportResult as MemoryImportResult,
} from './memory-transfer';
import { ConversationExistsError } from '../errors';

export const CONVERSATION_EXPORT_FORMAT = 'n8n-nodes-llm-memory/conversation';
export const CONVERSATION_EXPORT_VERSION = 1;

/** One conversation, whole: what exportConversation returns and importConversation takes. */
export interface ConversationExport {
	format: typeof CONVERSATION_EXPORT_FORMAT;
	version: typeof CONVERSATION_EXPORT_VERSION;
	conversationId: string;
	/** Its chat memory (exportConversationMemory's value), or null when it has none. */
	memory: ConversationMemoryExport | null;
	versionedData: VersionedDataExport;
	/** Its Memory Base captures, per base (left out when it has none). */
	memoryBase?: ExportedCaptures[];
}

export interface ConversationExportOptions extends ScopeOptions {
	/** Memory bases whose captures of the conversation go with it (default: the one whose ID is the app's). */
	memoryBaseIds?: string[];
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
	/** Captured messages imported into Memory Bases. */
	captures: number;
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
	options: ConversationExportOptions = {},
): Promise<ConversationExport> {
	const [memory, versionedData, captures] = await Promise.all([
		exportConversationMemory(storage, appId, conversationId, options).catch((error: unknown) => {
			if (error instanceof NoMemoryStoredError) return null;
			throw error;
		}),
		exportVersionedData(storage, appId, conversationId, options),
		exportCaptures(storage, appId, conversationId, options),
	]);
	return {
		format: CONVERSATION_EXPORT_FORMAT,
		version: CONVERSATION_EXPORT_VERSION,
		conversationId,
		memory,
		versionedData,
		...(captures.length ? { memoryBase: captures } : {}),
	};
}

/** The capture logs the conversation already has in the bases an export names. */
async function capturedIn(
	storage: MemoryStorage,
	conversationId: string,
	captures: ExportedCaptures[],
	keyPrefix?: string,
): Promise<ListedObject[]> {
	const out: ListedObject[] = [];
	for (const c of captures)
		out.push(...(await storage.list(captureLogKey(c.baseId, conversationId, keyPrefix))));
	return out;
}

/** Checks a whole export before anything is read or written: InvalidExportError naming where. */
function parseConversationExport(value: unknown) {
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
	const data = parseVersionedDataExport(value.versionedData);
	const captures = parseCaptures(value.memoryBase, 'memoryBase');
	return { memory, data, captures };
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
	const { memory, data, captures } = parseConversationExport(value);
	validateId('app_id', appId);
	const conversationId = validateId(
		'conversation_id',
		options.conversationId ?? ((value as { conversationId?: unknown }).conversationId as unknown),
	);
	const scope = { keyPrefix: options.keyPrefix };
	const existing = [
		...(await listConversationKeys(storage, appId, conversationId, scope)),
		...(await capturedIn(storage, conversationId, captures, options.keyPrefix)),
	];
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
	// Whatever this process still holds of an earlier life of this conversation is stale now.
	forgetConversationCache(storage, appId, conversationId, scope);
	const memoryResult = memory
		? await importConversationMemory(storage, appId, memory, { ...scope, conversationId })
		: null;
	await writeVersionedData(storage, appId, conversationId, data, options.keyPrefix);
	const imported = await importCaptures(storage, conversationId, captures, {
		keyPrefix: options.keyPrefix,
		overwrite: options.overwrite,
		path: 'memoryBase',
	});
	return {
		conversationId,
		memory: memoryResult,
		versions: data.versions.length,
		branches: data.branches.length,
		replaced,
		captures: imported,
	};
}
