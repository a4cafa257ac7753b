// Where one set of versions lives: a folder holding `versions/{n}.json` (write-once), `branches/{b}.json`
// (compare-and-swap heads) and `counter.json` (the next-number hint). Versioned data keeps one per
// conversation (keys.ts); another memory that keeps its data as versions (facts) hands its own folder.
import { validateBranchName } from '../keys/ids';
import { InvalidIdError } from '../errors';
import { isVersionNumber, MAX_VERSION_NUMBER, versionedDataPrefix } from './keys';

/** What a key under a version folder names. */
export interface VersionObjectKey {
	kind: 'version' | 'branch' | 'version_counter';
	version?: number;
	branch?: string;
}

export interface VersionLayout {
	/** The folder, ending in "/": every object of these versions is under it. */
	readonly prefix: string;
	/** How errors name the owner of these versions (e.g. `{app_id}/{conversation_id}`). */
	readonly scope: string;
	versionKey(n: number): string;
	branchKey(branch: string): string;
	readonly counterKey: string;
	/** What a key under the folder names; undefined for any other key. */
	parse(key: string): VersionObjectKey | undefined;
}

const VERSION_NAME = /^(\d{10})\.json$/;

/** What a key's part below a version folder (`versions/…`, `branches/…`, `counter.json`) names. */
export function parseVersionObject(rest: string): VersionObjectKey | undefined {
	const parts = rest.split('/');
	if (parts.length === 1 && parts[0] === 'counter.json') return { kind: 'version_counter' };
	if (parts.length !== 2) return undefined;
	const [folder, name] = parts;
	const number = folder === 'versions' ? VERSION_NAME.exec(name) : null;
	if (number && isVersionNumber(Number(number[1])))
		return { kind: 'version', version: Number(number[1]) };
	if (folder === 'branches' && name.endsWith('.json') && name.length > 5)
		return { kind: 'branch', branch: name.slice(0, -5) };
	return undefined;
}

/** The layout of versions kept under `prefix` (already checked, ending in "/"). */
export function layoutUnder(prefix: string, scope: string): VersionLayout {
	return {
		prefix,
		scope,
		versionKey(n: number): string {
			if (!isVersionNumber(n))
				throw new InvalidIdError(
					'version',
					`must be an integer from 1 to ${MAX_VERSION_NUMBER}, got ${String(n)}`,
				);
			return `${prefix}versions/${String(n).padStart(10, '0')}.json`;
		},
		branchKey: (branch: string) => `${prefix}branches/${validateBranchName(branch)}.json`,
		counterKey: `${prefix}counter.json`,
		parse: (key: string) =>
			key.startsWith(prefix) ? parseVersionObject(key.slice(prefix.length)) : undefined,
	};
}

/** Versioned data's layout: the conversation's folder, `{prefix}versioned_data/{app_id}/{conversation_id}/`. */
export function versionedDataLayout(
	appId: string,
	conversationId: string,
	keyPrefix?: string,
): VersionLayout {
	return layoutUnder(
		versionedDataPrefix(appId, conversationId, keyPrefix),
		`${appId}/${conversationId}`,
	);
}
