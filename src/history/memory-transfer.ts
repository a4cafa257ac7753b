import { createHash } from 'node:crypto';

import { byText } from '../common/first-of';
import {
	ConversationExistsError,
	CorruptDocumentError,
	InvalidExportError,
	InvalidIdError,
	NoMemoryStoredError,
} from '../errors';
import { validateId } from '../keys/ids';
import { forgetCachedUnder } from '../store/document-store';
import { validateDocument } from '../store/schema';
import type { MemoryDocument, StoredMessage } from '../store/schema';
import type { LogOptions } from '../store/message-log';
import type { MemoryStorage } from '../store/storage';
import { exportDocument, importDocument } from './document-transfer';
import { conversationFilesPrefix, conversationMemoryKey, nodeMemoryKey } from './keys';
import { chatConversationPrefixes, listChatConversation } from './objects';

/** Where in storage: the key prefix every key starts with. */
interface ScopeOptions {
	keyPrefix?: string;
}

/** What an export says it is, so an import never mistakes another file for one. */
export const MEMORY_EXPORT_FORMAT = 'n8n-nodes-llm-memory/conversation-memory';
export const MEMORY_EXPORT_VERSION = 1;

/** A copied file, named by its SHA-256 (hex) as in storage, its bytes in base64. */
export interface ExportedFile {
	name: string;
	data: string;
}

/**
 * All memory of one conversation: its Conversation-mode document and every node's Node-mode document,
 * each as one whole version-1 document (sealed segments folded in), and the files they reference.
 * File references name the file only (`key` is its SHA-256), so the export does not depend on where it
 * came from: exporting, importing elsewhere and exporting again gives the same bytes. Deterministic:
 * nodes sorted by ID, files by name, no timestamps.
 */
export interface ConversationMemoryExport {
	format: typeof MEMORY_EXPORT_FORMAT;
	version: typeof MEMORY_EXPORT_VERSION;
	conversationId: string;
	conversation: MemoryDocument | null;
	nodes: Array<{ nodeId: string; memory: MemoryDocument }>;
	files: ExportedFile[];
}

const FILE_NAME = /^[0-9a-f]{64}$/;

/** Every document of an export with the path an error should name. */
function documentsOf(e: ConversationMemoryExport): Array<{ path: string; doc: MemoryDocument }> {
	return [
		...(e.conversation ? [{ path: 'conversation', doc: e.conversation }] : []),
		...e.nodes.map((n, i) => ({ path: `nodes[${i}].memory`, doc: n.memory })),
	];
}

/** Names of the files an export's messages reference that the export does not carry (they were gone). */
export function missingFilesOf(e: ConversationMemoryExport): string[] {
	const carried = new Set(e.files.map((f) => f.name));
	const missing = new Set<string>();
	for (const { doc } of documentsOf(e))
		for (const m of doc.messages)
			for (const f of m.files) if (f.key !== undefined && !carried.has(f.key)) missing.add(f.key);
	return [...missing].sort(byText);
}

/** The messages with each stored file's key mapped by `rekey` (which may throw for a key it refuses). */
function withFileKeys(
	doc: MemoryDocument,
	rekey: (key: string, at: string) => string,
	path: string,
): MemoryDocument {
	return {
		...doc,
		messages: doc.messages.map((m, i): StoredMessage =>
			m.files.some((f) => f.key !== undefined)
				? {
						...m,
						files: m.files.map((f, j) =>
							f.key === undefined
								? f
								: { ...f, key: rekey(f.key, `${path}.messages[${i}].files[${j}].key`) },
						),
					}
				: m,
		),
	};
}

/**
 * Exports all memory of one conversation (see ConversationMemoryExport). A conversation without any
 * memory document is an error; an unreadable document or segment is an error naming its key. A
 * referenced file that is gone is left out (missingFilesOf lists it), as reading history skips it too.
 */
export async function exportConversationMemory(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ScopeOptions = {},
): Promise<ConversationMemoryExport> {
	const filesPrefix = conversationFilesPrefix(appId, conversationId, options.keyPrefix);
	const heads = (
		await listChatConversation(storage, appId, conversationId, options.keyPrefix)
	).filter((h) => h.kind === 'conversation' || h.kind === 'node');
	const relative = (key: string, at: string): string => {
		const name = key.startsWith(filesPrefix) ? key.slice(filesPrefix.length) : '';
		if (!FILE_NAME.test(name))
			throw new InvalidExportError(
				at,
				`file "${key}" is not one of this conversation's copied files, so it cannot be exported`,
			);
		return name;
	};
	let conversation: MemoryDocument | null = null;
	const nodes: ConversationMemoryExport['nodes'] = [];
	for (const h of heads) {
		const doc = await exportDocument(storage, h.object.key);
		if (!doc) continue; // deleted since the listing
		if (h.kind === 'conversation') conversation = withFileKeys(doc, relative, 'conversation');
		else {
			const nodeId = h.nodeId as string;
			nodes.push({ nodeId, memory: withFileKeys(doc, relative, `nodes["${nodeId}"].memory`) });
		}
	}
	if (!conversation && nodes.length === 0) throw new NoMemoryStoredError(appId, conversationId);
	nodes.sort((a, b) => byText(a.nodeId, b.nodeId));
	const partial: ConversationMemoryExport = {
		format: MEMORY_EXPORT_FORMAT,
		version: MEMORY_EXPORT_VERSION,
		conversationId,
		conversation,
		nodes,
		files: [],
	};
	const files: ExportedFile[] = [];
	for (const name of missingFilesOf(partial)) {
		const got = await storage.get(filesPrefix + name);
		if (got) files.push({ name, data: Buffer.from(got.body).toString('base64') });
	}
	return { ...partial, files };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
	typeof v === 'object' && v !== null && !Array.isArray(v);

const describe = (v: unknown) =>
	v === null
		? 'null'
		: Array.isArray(v)
			? 'an array'
			: typeof v === 'object'
				? 'an object'
				: JSON.stringify(v);

function checkId(path: string, value: unknown): string {
	try {
		return validateId(path, value);
	} catch (error) {
		if (error instanceof InvalidIdError) throw new InvalidExportError(path, error.reason);
		throw error;
	}
}

function checkDocument(path: string, value: unknown): MemoryDocument {
	if (!isObject(value))
		throw new InvalidExportError(path, `must be a memory document, got ${describe(value)}`);
	let doc: MemoryDocument;
	try {
		doc = validateDocument(path, value);
	} catch (error) {
		if (error instanceof CorruptDocumentError) throw new InvalidExportError(path, error.detail);
		throw error;
	}
	// File references must name exported files: a path would reach into another conversation's files.
	return withFileKeys(
		doc,
		(key, at) => {
			if (!FILE_NAME.test(key))
				throw new InvalidExportError(
					at,
					`must be the name of an exported file (64 hexadecimal characters), got ${JSON.stringify(key)}`,
				);
			return key;
		},
		path,
	);
}

function checkNodes(value: unknown): ConversationMemoryExport['nodes'] {
	if (!Array.isArray(value))
		throw new InvalidExportError('nodes', `must be an array, got ${describe(value)}`);
	const seen = new Set<string>();
	return value.map((n: unknown, i) => {
		if (!isObject(n))
			throw new InvalidExportError(`nodes[${i}]`, `must be an object, got ${describe(n)}`);
		const nodeId = checkId(`nodes[${i}].nodeId`, n.nodeId);
		if (seen.has(nodeId))
			throw new InvalidExportError(`nodes[${i}].nodeId`, `"${nodeId}" appears twice`);
		seen.add(nodeId);
		return { nodeId, memory: checkDocument(`nodes[${i}].memory`, n.memory) };
	});
}

function checkFiles(value: unknown): ExportedFile[] {
	if (!Array.isArray(value))
		throw new InvalidExportError('files', `must be an array, got ${describe(value)}`);
	const seen = new Set<string>();
	return value.map((f: unknown, i): ExportedFile => {
		const at = `files[${i}]`;
		if (!isObject(f)) throw new InvalidExportError(at, `must be an object, got ${describe(f)}`);
		if (typeof f.name !== 'string' || !FILE_NAME.test(f.name))
			throw new InvalidExportError(
				`${at}.name`,
				`must be 64 hexadecimal characters, got ${describe(f.name)}`,
			);
		if (seen.has(f.name)) throw new InvalidExportError(`${at}.name`, `"${f.name}" appears twice`);
		seen.add(f.name);
		const bytes = typeof f.data === 'string' ? Buffer.from(f.data, 'base64') : undefined;
		if (!bytes || bytes.toString('base64') !== f.data)
			throw new InvalidExportError(`${at}.data`, 'must be the file’s bytes in base64');
		if (createHash('sha256').update(bytes).digest('hex') !== f.name)
			throw new InvalidExportError(`${at}.data`, `its SHA-256 is not its name "${f.name}"`);
		return { name: f.name, data: f.data };
	});
}

/**
 * Checks a whole export (an object, or its JSON as a string or bytes) and returns it typed. Every
 * document passes the reader's schema, every file its SHA-256; the first problem is an
 * InvalidExportError naming where.
 */
export function parseConversationMemoryExport(value: unknown): ConversationMemoryExport {
	let data = value;
	if (data instanceof Uint8Array) data = Buffer.from(data).toString('utf8');
	if (typeof data === 'string') {
		try {
			data = JSON.parse(data);
		} catch (error) {
			throw new InvalidExportError('', `not JSON (${(error as Error).message})`);
		}
	}
	if (!isObject(data))
		throw new InvalidExportError(
			'',
			`must be an exported conversation memory, got ${describe(data)}`,
		);
	if (data.format !== MEMORY_EXPORT_FORMAT)
		throw new InvalidExportError(
			'format',
			`must be "${MEMORY_EXPORT_FORMAT}", got ${describe(data.format)}: this is not a conversation memory export`,
		);
	if (data.version !== MEMORY_EXPORT_VERSION)
		throw new InvalidExportError(
			'version',
			`must be ${MEMORY_EXPORT_VERSION} (this package reads version ${MEMORY_EXPORT_VERSION}), got ${describe(data.version)}`,
		);
	const conversationId = checkId('conversationId', data.conversationId);
	const conversation =
		data.conversation === null ? null : checkDocument('conversation', data.conversation);
	const nodes = checkNodes(data.nodes);
	const files = checkFiles(data.files);
	const parsed: ConversationMemoryExport = {
		format: MEMORY_EXPORT_FORMAT,
		version: MEMORY_EXPORT_VERSION,
		conversationId,
		conversation,
		nodes,
		files,
	};
	if (documentsOf(parsed).length === 0)
		throw new InvalidExportError(
			'',
			'holds no memory (neither a conversation document nor node documents)',
		);
	return parsed;
}

export interface ImportOptions extends ScopeOptions {
	/** Import into this conversation instead of the one the export names. */
	conversationId?: string;
	/** Replace the conversation's memory (deleted first) instead of refusing when it has any. */
	overwrite?: boolean;
	gzip?: boolean;
	/** When documents seal their older messages (docs/format.md); the defaults suit chat. */
	log?: Partial<LogOptions>;
}

export interface ImportResult {
	conversationId: string;
	/** Memory documents written. */
	documents: string[];
	messages: number;
	files: number;
	/** Referenced files the export did not carry (see missingFilesOf). */
	missingFiles: string[];
	/** What was deleted first (Overwrite). */
	replaced: string[];
}

/**
 * Refuses a conversation that has memory documents unless `overwrite`, which deletes its memory
 * (documents first: a writer still holding one then fails its compare-and-swap). Returns what went.
 */
async function clearForImport(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: ImportOptions,
): Promise<string[]> {
	// What chat memory names of the conversation (a stray object in its folders is left alone).
	const existing = (
		await listChatConversation(storage, appId, conversationId, options.keyPrefix)
	).filter((h) => h.kind !== undefined);
	const documents = existing.filter((h) => h.kind === 'conversation' || h.kind === 'node');
	if (documents.length > 0 && !options.overwrite)
		throw new ConversationExistsError(
			appId,
			conversationId,
			documents.map((h) => h.object.key),
		);
	const replaced: string[] = [];
	if (options.overwrite)
		for (const h of existing) {
			await storage.delete(h.object.key);
			replaced.push(h.object.key);
		}
	for (const prefix of chatConversationPrefixes(appId, conversationId, options.keyPrefix))
		forgetCachedUnder(storage, prefix);
	return replaced;
}

/**
 * Imports an export (see parseConversationMemoryExport) into a conversation of `appId`. The whole
 * export is checked before anything is written. A conversation that already has a memory document is
 * refused (ConversationExistsError) unless `overwrite`, which deletes the conversation's memory
 * (documents, sealed segments, files) first; nothing but memory is touched. Files are written before
 * the documents that reference them, and each document is created only if it does not exist.
 */
export async function importConversationMemory(
	storage: MemoryStorage,
	appId: string,
	value: unknown,
	options: ImportOptions = {},
): Promise<ImportResult> {
	const data = parseConversationMemoryExport(value);
	const conversationId = validateId(
		'conversation_id',
		options.conversationId ?? data.conversationId,
	);
	validateId('app_id', appId);
	const filesPrefix = conversationFilesPrefix(appId, conversationId, options.keyPrefix);
	const targets = [
		...(data.conversation
			? [
					{
						key: conversationMemoryKey(appId, conversationId, options.keyPrefix),
						doc: data.conversation,
					},
				]
			: []),
		...data.nodes.map((n) => ({
			key: nodeMemoryKey(appId, conversationId, n.nodeId, options.keyPrefix),
			doc: n.memory,
		})),
	];
	const replaced = await clearForImport(storage, appId, conversationId, options);
	const mimeTypes = new Map<string, string>();
	for (const t of targets)
		for (const m of t.doc.messages)
			for (const f of m.files)
				if (f.key !== undefined && f.mime_type !== undefined) mimeTypes.set(f.key, f.mime_type);
	for (const f of data.files)
		await storage.put(filesPrefix + f.name, Buffer.from(f.data, 'base64'), {
			contentType: mimeTypes.get(f.name) ?? 'application/octet-stream',
		});
	for (const t of targets)
		await importDocument(
			storage,
			t.key,
			withFileKeys(t.doc, (name) => filesPrefix + name, ''),
			{ gzip: options.gzip === true, log: options.log },
		);
	return {
		conversationId,
		documents: targets.map((t) => t.key),
		messages: targets.reduce((n, t) => n + t.doc.messages.length, 0),
		files: data.files.length,
		missingFiles: missingFilesOf(data),
		replaced,
	};
}
