// Export and import of one whole conversation as one JSON value, one section per memory: its chat
// memory (the Memory Manager's conversation-memory export: documents and copied files), its versioned
// data (every version object, every branch head, the counter), its own facts (kept when no User ID was
// set: every version of them) and its Memory Base captures. Each memory reads, checks and writes its
// own section (store/memory-admin.ts).
import { ConversationExistsError } from '../errors';
import { validateId } from '../keys/ids';
import type {
	ConversationMemoryExport,
	ImportResult as MemoryImportResult,
} from '../history/memory-transfer';
import type { ExportedFacts } from '../facts/admin';
import type { ExportedCaptures } from '../knowledge/admin';
import type { VersionedDataExport } from '../snapshots/transfer';
import { invalid, isRecord } from '../store/parse';
import type { MemoryStorage } from '../store/storage';
import { deleteConversationMemory, forgetConversationCache } from './housekeeping';
import type { ScopeOptions } from './housekeeping';
import { memoriesOf } from './memories';
import type { Memories } from './memories';

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
	/** Its own facts (kept when no User ID was set), per facts space (left out when it has none). */
	facts?: ExportedFacts[];
	/** Its Memory Base captures, per base (left out when it has none). */
	memoryBase?: ExportedCaptures[];
}

export interface ConversationExportOptions extends ScopeOptions {
	/**
	 * Memory bases whose captures of the conversation (and facts spaces whose facts of it) go with it
	 * (default: the one whose ID is the app's).
	 */
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
	/** Versions of the conversation's own facts imported. */
	factVersions: number;
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
	const ref = { appId, conversationId, memoryBaseIds: options.memoryBaseIds };
	const { history, snapshots, facts, knowledge } = memoriesOf(storage, options.keyPrefix);
	// Each memory reads its own section, side by side.
	const [memory, versionedData, learned, captures] = await Promise.all([
		history.exportConversation(ref),
		snapshots.exportConversation(ref),
		facts.exportConversation(ref),
		knowledge.exportConversation(ref),
	]);
	return {
		format: CONVERSATION_EXPORT_FORMAT,
		version: CONVERSATION_EXPORT_VERSION,
		conversationId,
		memory,
		versionedData,
		...(learned.length ? { facts: learned } : {}),
		...(captures.length ? { memoryBase: captures } : {}),
	};
}

/** Checks a whole export before anything is read or written: InvalidExportError naming where. */
function parseConversationExport(m: Memories, value: unknown) {
	if (!isRecord(value)) invalid('', 'must be an exported conversation (an object)');
	if (value.format !== CONVERSATION_EXPORT_FORMAT)
		invalid('format', `must be "${CONVERSATION_EXPORT_FORMAT}": this is not a conversation export`);
	if (value.version !== CONVERSATION_EXPORT_VERSION)
		invalid(
			'version',
			`must be ${CONVERSATION_EXPORT_VERSION} (this package reads version ${CONVERSATION_EXPORT_VERSION})`,
		);
	// Each memory checks its own section, in the order they are written.
	const memory = m.history.parseExport(value.memory, 'memory');
	const data = m.snapshots.parseExport(value.versionedData, 'versionedData');
	const facts = m.facts.parseExport(value.facts, 'facts');
	const captures = m.knowledge.parseExport(value.memoryBase, 'memoryBase');
	return { memory, data, facts, captures };
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
	const m = memoriesOf(storage, options.keyPrefix);
	const { memory, data, facts, captures } = parseConversationExport(m, value);
	validateId('app_id', appId);
	const conversationId = validateId(
		'conversation_id',
		options.conversationId ?? ((value as { conversationId?: unknown }).conversationId as unknown),
	);
	const scope = { keyPrefix: options.keyPrefix };
	// What it holds already: everything under the workflow's keys, and its captures and own facts in
	// the bases and spaces the export names.
	const bases = [...captures.map((c) => c.baseId), ...facts.map((f) => f.space)];
	const held = { appId, conversationId, memoryBaseIds: [...new Set(bases)] };
	const existing = (await Promise.all(m.all.map((x) => x.listConversation(held)))).flat();
	let replaced: string[] = [];
	if (existing.length > 0) {
		if (!options.overwrite)
			throw new ConversationExistsError(
				appId,
				conversationId,
				existing.map((h) => h.object.key),
			);
		replaced = await deleteConversationMemory(storage, appId, conversationId, scope);
	}
	// Whatever this process still holds of an earlier life of this conversation is stale now.
	forgetConversationCache(storage, appId, conversationId, scope);
	const ref = { appId, conversationId };
	const memoryResult = await m.history.importConversation(ref, memory);
	const versioned = await m.snapshots.importConversation(ref, data);
	const factVersions = await m.facts.importConversation(ref, facts, {
		overwrite: options.overwrite,
	});
	const imported = await m.knowledge.importConversation(ref, captures, {
		overwrite: options.overwrite,
		path: 'memoryBase',
	});
	return {
		conversationId,
		memory: memoryResult,
		versions: versioned.versions,
		branches: versioned.branches,
		replaced,
		captures: imported,
		factVersions,
	};
}
