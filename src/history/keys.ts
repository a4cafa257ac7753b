// Chat memory's keys: the memory documents (the conversation's shared one, each node's own), the
// sealed objects and summaries beside each, and the conversation's copied files.
import { validateId, validateKeyPrefix } from '../keys/ids';
import { appFolder, conversationPath } from '../keys/paths';
import { isSealedName, sealedPrefix } from '../store/log-keys';

export const NODE_MEMORY_ROOT = 'node_memory';
export const CONVERSATION_MEMORY_ROOT = 'conversation_memory';
export const FILES_ROOT = 'memory_files';

/** Chat memory's roots, in the order a listing visits them. */
export const CHAT_ROOTS = [NODE_MEMORY_ROOT, CONVERSATION_MEMORY_ROOT, FILES_ROOT] as const;

/** `{prefix}node_memory/{app_id}/{conversation_id}/{node_id}.json` */
export function nodeMemoryKey(
	appId: string,
	conversationId: string,
	nodeId: string,
	prefix?: string,
): string {
	return `${conversationNodesPrefix(appId, conversationId, prefix)}${validateId('node_id', nodeId)}.json`;
}

/** Folder of a conversation's node documents: `{prefix}node_memory/{app_id}/{conversation_id}/`. */
export function conversationNodesPrefix(
	appId: string,
	conversationId: string,
	prefix?: string,
): string {
	return `${conversationPath(NODE_MEMORY_ROOT, appId, conversationId, prefix)}/`;
}

/** `{prefix}conversation_memory/{app_id}/{conversation_id}.json` */
export function conversationMemoryKey(
	appId: string,
	conversationId: string,
	prefix?: string,
): string {
	return `${conversationPath(CONVERSATION_MEMORY_ROOT, appId, conversationId, prefix)}.json`;
}

/** Folder of a conversation's copied files: `{prefix}memory_files/{app_id}/{conversation_id}/`. */
export function conversationFilesPrefix(
	appId: string,
	conversationId: string,
	prefix?: string,
): string {
	return `${conversationPath(FILES_ROOT, appId, conversationId, prefix)}/`;
}

/** Chat memory's folders of one app: node documents, conversation documents, copied files. */
export function chatAppPrefixes(appId: string, prefix?: string): string[] {
	return CHAT_ROOTS.map((root) => appFolder(root, appId, prefix));
}

const SUMMARIES_NAME = 'summaries.json';

/**
 * The summaries of older turns of one memory document (compare-and-swap), beside its sealed objects:
 * `…/{conversation_id}.json` → `…/{conversation_id}.log/summaries.json`.
 */
export function summariesKey(headKey: string): string {
	return `${sealedPrefix(headKey)}${SUMMARIES_NAME}`;
}

/** What a chat memory key says about itself (see ParsedKey, which admin/keys.ts makes of it). */
export interface ChatKey {
	/**
	 * `node` and `conversation` are memory documents (heads); `sealed` is a write-once segment or index
	 * of one, `summary` its summaries of older turns (see `scope` and `headKey`); `file` a copied file.
	 */
	kind: 'node' | 'conversation' | 'file' | 'sealed' | 'summary';
	appId: string;
	conversationId: string;
	nodeId?: string;
	/** Sealed objects and summaries: the scope of the document they belong to. */
	scope?: 'node' | 'conversation';
	/** Sealed objects and summaries: the key of the document they belong to. */
	headKey?: string;
}

/** What a chat memory key names; undefined for every other key. */
export function parseChatKey(key: string, prefix?: string): ChatKey | undefined {
	const p = validateKeyPrefix('key prefix', prefix);
	if (!key.startsWith(p)) return undefined;
	const parts = key.slice(p.length).split('/');
	if (parts[0] === NODE_MEMORY_ROOT && parts.length === 4 && parts[3].endsWith('.json'))
		return {
			kind: 'node',
			appId: parts[1],
			conversationId: parts[2],
			nodeId: parts[3].slice(0, -5),
		};
	if (parts[0] === CONVERSATION_MEMORY_ROOT && parts.length === 3 && parts[2].endsWith('.json'))
		return { kind: 'conversation', appId: parts[1], conversationId: parts[2].slice(0, -5) };
	if (parts[0] === FILES_ROOT && parts.length === 4)
		return { kind: 'file', appId: parts[1], conversationId: parts[2] };
	const name = parts[parts.length - 1];
	const kind = isSealedName(name) ? 'sealed' : name === SUMMARIES_NAME ? 'summary' : undefined;
	if (kind && parts[0] === NODE_MEMORY_ROOT && parts.length === 5 && parts[3].endsWith('.log')) {
		const nodeId = parts[3].slice(0, -4);
		return {
			kind,
			scope: 'node',
			appId: parts[1],
			conversationId: parts[2],
			nodeId,
			headKey: `${p}${parts.slice(0, 3).join('/')}/${nodeId}.json`,
		};
	}
	if (
		kind &&
		parts[0] === CONVERSATION_MEMORY_ROOT &&
		parts.length === 4 &&
		parts[2].endsWith('.log')
	) {
		const conversationId = parts[2].slice(0, -4);
		return {
			kind,
			scope: 'conversation',
			appId: parts[1],
			conversationId,
			headKey: `${p}${parts[0]}/${parts[1]}/${conversationId}.json`,
		};
	}
	return undefined;
}
