import { validateId, validateKeyPrefix } from './ids';

export const NODE_MEMORY_ROOT = 'node_memory';
export const CONVERSATION_MEMORY_ROOT = 'conversation_memory';
export const FILES_ROOT = 'memory_files';

/** `{prefix}node_memory/{app_id}/{conversation_id}/{node_id}.json` */
export function nodeMemoryKey(appId: string, conversationId: string, nodeId: string, prefix?: string): string {
	return `${conversationNodesPrefix(appId, conversationId, prefix)}${validateId('node_id', nodeId)}.json`;
}

/** Folder of a conversation's node documents: `{prefix}node_memory/{app_id}/{conversation_id}/`. */
export function conversationNodesPrefix(appId: string, conversationId: string, prefix?: string): string {
	return (
		validateKeyPrefix('key prefix', prefix) +
		`${NODE_MEMORY_ROOT}/${validateId('app_id', appId)}/${validateId('conversation_id', conversationId)}/`
	);
}

/** `{prefix}conversation_memory/{app_id}/{conversation_id}.json` */
export function conversationMemoryKey(appId: string, conversationId: string, prefix?: string): string {
	return (
		validateKeyPrefix('key prefix', prefix) +
		`${CONVERSATION_MEMORY_ROOT}/${validateId('app_id', appId)}/${validateId('conversation_id', conversationId)}.json`
	);
}

/** Folder of a conversation's copied files: `{prefix}memory_files/{app_id}/{conversation_id}/`. */
export function conversationFilesPrefix(appId: string, conversationId: string, prefix?: string): string {
	return (
		validateKeyPrefix('key prefix', prefix) +
		`${FILES_ROOT}/${validateId('app_id', appId)}/${validateId('conversation_id', conversationId)}/`
	);
}

/** Every key prefix under which an app's memory lives. */
export function appPrefixes(appId: string, prefix?: string): string[] {
	const p = validateKeyPrefix('key prefix', prefix);
	const app = validateId('app_id', appId);
	return [`${p}${NODE_MEMORY_ROOT}/${app}/`, `${p}${CONVERSATION_MEMORY_ROOT}/${app}/`, `${p}${FILES_ROOT}/${app}/`];
}

/** What a memory key says about itself; undefined for keys that are not memory documents. */
export interface ParsedKey {
	kind: 'node' | 'conversation' | 'file';
	appId: string;
	conversationId: string;
	nodeId?: string;
}

export function parseKey(key: string, prefix?: string): ParsedKey | undefined {
	const p = validateKeyPrefix('key prefix', prefix);
	if (!key.startsWith(p)) return undefined;
	const parts = key.slice(p.length).split('/');
	if (parts[0] === NODE_MEMORY_ROOT && parts.length === 4 && parts[3].endsWith('.json'))
		return { kind: 'node', appId: parts[1], conversationId: parts[2], nodeId: parts[3].slice(0, -5) };
	if (parts[0] === CONVERSATION_MEMORY_ROOT && parts.length === 3 && parts[2].endsWith('.json'))
		return { kind: 'conversation', appId: parts[1], conversationId: parts[2].slice(0, -5) };
	if (parts[0] === FILES_ROOT && parts.length === 4) return { kind: 'file', appId: parts[1], conversationId: parts[2] };
	return undefined;
}
