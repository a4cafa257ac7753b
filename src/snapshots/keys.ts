// Versioned data's keys: one folder per conversation holding its write-once versions, its branch heads
// and the next-number hint.
import { InvalidIdError } from '../errors';
import { validateBranchName, validateKeyPrefix } from '../keys/ids';
import { appFolder, conversationPath } from '../keys/paths';

export const VERSIONED_DATA_ROOT = 'versioned_data';
/** Version numbers are zero-padded to 10 digits in keys, so key order is number order. */
export const MAX_VERSION_NUMBER = 9_999_999_999;

/** Folder of a conversation's versioned data: `{prefix}versioned_data/{app_id}/{conversation_id}/`. */
export function versionedDataPrefix(
	appId: string,
	conversationId: string,
	prefix?: string,
): string {
	return `${conversationPath(VERSIONED_DATA_ROOT, appId, conversationId, prefix)}/`;
}

/** Folder of an app's versioned data: `{prefix}versioned_data/{app_id}/`. */
export function versionedDataAppPrefix(appId: string, prefix?: string): string {
	return appFolder(VERSIONED_DATA_ROOT, appId, prefix);
}

/** Whether `n` can be a version number (a positive integer of at most 10 digits). */
export function isVersionNumber(n: unknown): n is number {
	return Number.isSafeInteger(n) && (n as number) >= 1 && (n as number) <= MAX_VERSION_NUMBER;
}

/** Write-once version object: `{prefix}versioned_data/{app_id}/{conversation_id}/versions/{n, 10 digits}.json`. */
export function versionKey(
	appId: string,
	conversationId: string,
	version: number,
	prefix?: string,
): string {
	if (!isVersionNumber(version))
		throw new InvalidIdError(
			'version',
			`must be an integer from 1 to ${MAX_VERSION_NUMBER}, got ${String(version)}`,
		);
	return `${versionedDataPrefix(appId, conversationId, prefix)}versions/${String(version).padStart(10, '0')}.json`;
}

/** Head of a branch (compare-and-swap): `{prefix}versioned_data/{app_id}/{conversation_id}/branches/{branch}.json`. */
export function branchKey(
	appId: string,
	conversationId: string,
	branch: string,
	prefix?: string,
): string {
	return `${versionedDataPrefix(appId, conversationId, prefix)}branches/${validateBranchName(branch)}.json`;
}

/** Next-number hint of a conversation's versions: `{prefix}versioned_data/{app_id}/{conversation_id}/counter.json`. */
export function versionCounterKey(appId: string, conversationId: string, prefix?: string): string {
	return `${versionedDataPrefix(appId, conversationId, prefix)}counter.json`;
}

/** What a versioned data key says about itself (see ParsedKey, which admin/keys.ts makes of it). */
export interface VersionedDataKey {
	/** `version`: a write-once version object; `branch`: a branch head; `version_counter`: the next-number hint. */
	kind: 'version' | 'branch' | 'version_counter';
	appId: string;
	conversationId: string;
	/** Version objects: the version number. */
	version?: number;
	/** Branch heads: the branch name. */
	branch?: string;
}

const VERSION_NAME = /^(\d{10})\.json$/;

/** What a versioned data key names; undefined for every other key. */
export function parseVersionedDataKey(key: string, prefix?: string): VersionedDataKey | undefined {
	const p = validateKeyPrefix('key prefix', prefix);
	if (!key.startsWith(p)) return undefined;
	const parts = key.slice(p.length).split('/');
	if (parts[0] !== VERSIONED_DATA_ROOT) return undefined;
	const [, appId, conversationId, folder, name] = parts;
	if (parts.length === 4 && folder === 'counter.json')
		return { kind: 'version_counter', appId, conversationId };
	const number = parts.length === 5 && folder === 'versions' ? VERSION_NAME.exec(name) : null;
	if (number && isVersionNumber(Number(number[1])))
		return { kind: 'version', appId, conversationId, version: Number(number[1]) };
	if (parts.length === 5 && folder === 'branches' && name.endsWith('.json') && name.length > 5)
		return { kind: 'branch', appId, conversationId, branch: name.slice(0, -5) };
	return undefined;
}
