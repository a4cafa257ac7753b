// Key helpers that span the memories kept by workflow (chat memory and versioned data), for callers
// that look at raw keys: each memory reads its own keys (history/keys.ts, snapshots/keys.ts).
import { chatAppPrefixes, parseChatKey } from '../history/keys';
import { parseVersionedDataKey, versionedDataAppPrefix } from '../snapshots/keys';

/** What a memory key says about itself; undefined for keys that are not memory documents. */
export interface ParsedKey {
	/**
	 * `node` and `conversation` are memory documents (heads); `sealed` is a write-once segment or index
	 * of one (see `scope` and `headKey`); `file` is a copied file. Versioned data: `version` is a
	 * write-once version object (see `version`), `branch` a branch head (see `branch`), `version_counter`
	 * the conversation's next-number hint. `summary` holds a document's summaries of older turns (see
	 * `scope` and `headKey`).
	 */
	kind:
		| 'node'
		| 'conversation'
		| 'file'
		| 'sealed'
		| 'summary'
		| 'version'
		| 'branch'
		| 'version_counter';
	appId: string;
	conversationId: string;
	nodeId?: string;
	/** Sealed objects and summaries: the scope of the document they belong to. */
	scope?: 'node' | 'conversation';
	/** Sealed objects and summaries: the key of the document they belong to. */
	headKey?: string;
	/** Version objects: the version number. */
	version?: number;
	/** Branch heads: the branch name. */
	branch?: string;
}

/** What a chat memory or versioned data key names (each memory parses its own). */
export function parseKey(key: string, prefix?: string): ParsedKey | undefined {
	return parseChatKey(key, prefix) ?? parseVersionedDataKey(key, prefix);
}

/** Every key prefix under which an app's memory lives. */
export function appPrefixes(appId: string, prefix?: string): string[] {
	return [...chatAppPrefixes(appId, prefix), versionedDataAppPrefix(appId, prefix)];
}
