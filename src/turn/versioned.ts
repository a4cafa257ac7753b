// Versioned data in a turn: the conversation's JSON working data opened beside the history (Initial
// Data saved as the first version when there is none), the system message section that shows it with
// its recent changes, the update_data tool, and the model's proposed changes checked before a version
// is saved.
import { InvalidInputError, SchemaViolationError, VersionConflictError } from '../errors';
import { diffJson } from '../snapshots/diff';
import { jsonEqual, toJsonText } from '../snapshots/json';
import { applyPatch } from '../snapshots/patch';
import { compileSchema } from '../snapshots/schema';
import type { JsonValue } from '../snapshots/json';
import type { JsonPatch } from '../snapshots/patch';
import type { VersionRecord } from '../snapshots/records';
import type { HistoryEntry } from '../snapshots/types';
import { VersionedData } from '../snapshots/versioned-data';
import type { MemoryStorage } from '../store/storage';

/** The tool the model changes the data with. */
export const UPDATE_DATA_TOOL = 'update_data';
/** Change lines shown per version in the prompt's "Recent changes" (the rest are counted). */
const CHANGE_LINES_PER_VERSION = 10;

export interface VersionedSettings {
	branch: string;
	/** Saved as version 1 when the branch has no version yet; undefined: none. */
	initialData?: unknown;
	schema?: unknown;
	/** Versions listed in the prompt's "Recent changes". */
	historyEntries: number;
	/** auto: the update_data tool when the model can bind tools, else a JSON reply. */
	method: 'auto' | 'json';
	/** Expire After and Keep Last N Versions, stored on the branch by each save (undefined: as stored). */
	rules: { expireAfterDays?: number; keepLastVersions?: number };
}

/** One version in the prompt's "Recent changes": its history entry and what it changed. */
export interface RecentChange {
	entry: HistoryEntry;
	changes: string[];
}

/** The conversation's versioned data as one turn sees it. */
export interface OpenedData {
	settings: VersionedSettings;
	versions: VersionedData;
	/** The version the branch is at (null: nothing saved yet and no Initial Data). */
	current: VersionRecord | null;
	recent: RecentChange[];
	/** This turn saved the Initial Data as the first version. */
	initialized: boolean;
}

/** The branch's recent versions with what each changed (for the prompt's "Recent changes"). */
async function recentChanges(
	versions: VersionedData,
	settings: VersionedSettings,
): Promise<RecentChange[]> {
	const recent: RecentChange[] = [];
	const page = await versions.history({ branch: settings.branch, limit: settings.historyEntries });
	for (const entry of page.entries) {
		// The oldest kept version's parent may be gone (Keep Last N Versions): no changes to show.
		const { parent } = entry;
		const cut = parent === null || entry.version === page.truncatedBefore;
		const changes = cut ? [] : (await versions.diff(parent, entry.version)).summary;
		recent.push({ entry, changes });
	}
	return recent;
}

/**
 * Reads the conversation's versioned data: the version its branch is at and the recent history with
 * what each version changed. The JSON Schema is compiled here, so a bad one fails before the model is
 * called. Reads only: Initial Data is saved by initializeData, once the turn's other reads succeeded.
 */
export async function readVersionedData(
	storage: MemoryStorage,
	workflowId: string,
	conversationId: string,
	settings: VersionedSettings,
): Promise<OpenedData> {
	const versions = new VersionedData({
		storage,
		appId: workflowId,
		conversationId,
		schema: settings.schema,
	});
	const current = await versions.getCurrent(settings.branch);
	const recent =
		current && settings.historyEntries > 0 ? await recentChanges(versions, settings) : [];
	return { settings, versions, current, recent, initialized: false };
}

/**
 * Saves Initial Data as the first version when the branch has none (a concurrent first turn that saved
 * it first wins; this turn then reads its version). Returns the data as the turn then sees it.
 */
export async function initializeData(data: OpenedData): Promise<OpenedData> {
	const { settings, versions } = data;
	if (data.current || settings.initialData === undefined) return data;
	let current: VersionRecord | null;
	let initialized = false;
	try {
		current = await versions.saveVersion({
			data: settings.initialData,
			summary: 'Initial data',
			branch: settings.branch,
			expectedVersion: null,
			...settings.rules,
		});
		initialized = true;
	} catch (error) {
		if (!(error instanceof VersionConflictError)) throw error;
		current = await versions.getCurrent(settings.branch);
	}
	const recent =
		current && settings.historyEntries > 0 ? await recentChanges(versions, settings) : [];
	return { ...data, current, recent, initialized };
}

/**
 * The system message section that gives the model the data and its recent changes, clearly
 * marked, and says how to change the data (with the tool, or in a JSON reply).
 */
export function dataSection(data: OpenedData, method: 'tool' | 'json'): string {
	const { current, recent, settings } = data;
	const branch = JSON.stringify(settings.branch);
	const lines = [
		current
			? `## Working data (version ${current.version}, branch ${branch})`
			: `## Working data (no version yet, branch ${branch})`,
		'The current JSON data of this conversation, kept in versioned storage outside this chat. It is the only up-to-date copy: rely on it, not on earlier messages.',
		'```json',
		JSON.stringify(current?.data ?? null, null, 2),
		'```',
	];
	if (settings.historyEntries > 0) {
		lines.push('', '## Recent changes (newest first)');
		if (recent.length === 0) lines.push('None yet.');
		for (const { entry, changes } of recent) {
			lines.push(`- Version ${entry.version} (${entry.created_at}): ${entry.summary}`);
			for (const c of changes.slice(0, CHANGE_LINES_PER_VERSION)) lines.push(`  - ${c}`);
			if (changes.length > CHANGE_LINES_PER_VERSION)
				lines.push(`  - … and ${changes.length - CHANGE_LINES_PER_VERSION} more changes`);
		}
	}
	lines.push('', '## Changing the data');
	const when =
		'Change the data only when the user asks for a change; answer questions (about the data or about earlier changes) from the sections above without changing anything.';
	if (method === 'tool')
		lines.push(
			`${when} To change it, call the ${UPDATE_DATA_TOOL} tool once with a JSON Patch (RFC 6902) against the working data above and a one-line summary of the change; it is saved as a new version. Then tell the user what you changed.`,
		);
	else
		lines.push(
			when,
			'Reply with one JSON object and nothing else:',
			'{"answer": "<your reply to the user>", "patch": [<JSON Patch (RFC 6902) operations against the working data above>], "summary": "<one line saying what changed>"}',
			'When nothing should change, reply {"answer": "<your reply>", "patch": []}.',
		);
	return lines.join('\n');
}

/** The update_data tool, in the OpenAI function format LangChain's bindTools accepts. */
export const updateDataTool = {
	type: 'function',
	function: {
		name: UPDATE_DATA_TOOL,
		description:
			'Change the working data of this conversation with a JSON Patch (RFC 6902). The change is saved as a new version with the summary.',
		parameters: {
			type: 'object',
			properties: {
				patch: {
					type: 'array',
					description: 'JSON Patch operations, applied in order to the working data',
					items: {
						type: 'object',
						properties: {
							op: {
								type: 'string',
								enum: ['add', 'remove', 'replace', 'move', 'copy', 'test'],
							},
							path: { type: 'string', description: 'JSON Pointer, e.g. /category' },
							from: { type: 'string', description: 'JSON Pointer (move and copy)' },
							value: { description: 'The value (add, replace and test): any JSON' },
						},
						required: ['op', 'path'],
					},
				},
				summary: {
					type: 'string',
					description: 'One line saying what changed, e.g. "Changed category to FRAGRANCE"',
				},
			},
			required: ['patch', 'summary'],
		},
	},
};

/** A change the model proposed, checked: the new data, the combined patch and summary, what changed. */
export interface DataChange {
	data: JsonValue;
	patch: JsonPatch;
	summary: string;
	changes: string[];
}

/**
 * Applies the model's proposals ({patch, summary} each, e.g. several update_data calls) in order to the
 * current data and checks the result: JSON, size, JSON Schema. Undefined when the data stays equal (a
 * query that changes nothing creates no version). Throws, naming what is wrong, for a patch that does
 * not apply, a missing summary or a schema violation.
 */
export function proposeChange(data: OpenedData, proposals: unknown[]): DataChange | undefined {
	const before: JsonValue = data.current?.data ?? null;
	let after = before;
	const patch: JsonPatch = [];
	const summaries: string[] = [];
	for (const proposal of proposals) {
		const args = (typeof proposal === 'object' && proposal !== null ? proposal : {}) as Record<
			string,
			unknown
		>;
		let ops = args.patch;
		if (typeof ops === 'string') {
			try {
				ops = JSON.parse(ops) as unknown; // some models send nested JSON as text
			} catch {
				throw new InvalidInputError('patch', 'is text that is not JSON');
			}
		}
		after = applyPatch(after, ops);
		patch.push(...(ops as JsonPatch));
		if (typeof args.summary !== 'string' || args.summary.trim() === '')
			throw new InvalidInputError('summary', 'the model proposed a change without a summary');
		summaries.push(args.summary.trim());
	}
	if (jsonEqual(before, after)) return undefined;
	toJsonText('data', after);
	if (data.settings.schema !== undefined) {
		const errors = compileSchema(data.settings.schema)(after);
		if (errors.length > 0) throw new SchemaViolationError(errors);
	}
	return {
		data: after,
		patch,
		summary: summaries.join('; '),
		changes: diffJson(before, after).summary,
	};
}

/** What the turn did to the data, for the output: the data and version after the turn, and what changed. */
export function dataReport(
	data: OpenedData,
	saved: VersionRecord | undefined,
	change: DataChange | undefined,
): Record<string, unknown> {
	const at = saved ?? data.current;
	return {
		data: at ? structuredClone(at.data) : null,
		version: at?.version ?? null,
		changed: saved !== undefined,
		versionedData: {
			branch: data.settings.branch,
			initialized: data.initialized,
			summary: saved ? saved.summary : null,
			changes: saved && change ? change.changes : [],
			patch: saved && change ? structuredClone(change.patch) : [],
		},
	};
}
