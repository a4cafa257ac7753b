// Export and import of one conversation's versioned data: every version object, every branch head,
// the counter, exactly as stored. (The whole conversation, chat memory included, is admin/'s job.)
import { mapLimit, MAX_PARALLEL } from '../common/parallel';
import { validateBranchName } from '../keys/ids';
import { versionedDataLayout } from './layout';
import type { VersionLayout } from './layout';
import { decodeJsonObject, encodeJson } from '../store/codec';
import { arrayAt, at, invalid, isRecord } from '../store/parse';
import type { MemoryStorage } from '../store/storage';
import { MAX_DATA_BYTES, toJsonText } from './json';
import { validateBranchHead, validateCounter, validateVersionRecord } from './records';
import type { BranchHead, VersionCounter, VersionRecord } from './records';

/** A conversation's versioned data, as stored. */
export interface VersionedDataExport {
	/** The next-number hint (null when none is stored). */
	counter: VersionCounter | null;
	/** Every branch head, by name. */
	branches: BranchHead[];
	/** Every version object as stored, by number (also versions no branch reaches). */
	versions: VersionRecord[];
}

/** Reads a conversation's versioned data: every version object, every branch head, the counter. */
export function exportVersionedData(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	options: { keyPrefix?: string } = {},
): Promise<VersionedDataExport> {
	return exportVersions(storage, versionedDataLayout(appId, conversationId, options.keyPrefix));
}

/** Reads every version object, branch head and the counter of a layout's folder, as stored. */
export async function exportVersions(
	storage: MemoryStorage,
	layout: VersionLayout,
): Promise<VersionedDataExport> {
	const listed = (await storage.list(layout.prefix))
		.map((o) => ({ key: o.key, parsed: layout.parse(o.key) }))
		.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
	const read = async (key: string) => {
		const got = await storage.get(key);
		return got ? decodeJsonObject(key, got.body) : undefined; // undefined: deleted since the listing
	};
	const versions = (
		await mapLimit(
			listed.filter((l) => l.parsed?.kind === 'version'),
			MAX_PARALLEL,
			async ({ key, parsed }) => {
				const value = await read(key);
				return value && validateVersionRecord(key, value, parsed?.version);
			},
		)
	).filter((v) => v !== undefined);
	const branches = (
		await mapLimit(
			listed.filter((l) => l.parsed?.kind === 'branch'),
			MAX_PARALLEL,
			async ({ key, parsed }) => {
				const value = await read(key);
				return value && validateBranchHead(key, value, parsed?.branch);
			},
		)
	).filter((b) => b !== undefined);
	const counterKey = layout.counterKey;
	const counter = listed.some((l) => l.key === counterKey) ? await read(counterKey) : undefined;
	return {
		counter: counter ? validateCounter(counterKey, counter) : null,
		branches,
		versions,
	};
}

/**
 * Checks versioned data: records, unique numbers, every parent and branch target present. Errors name
 * where, under `base` (the field of a whole-conversation export that holds it).
 */
export function parseVersionedDataExport(
	value: unknown,
	base = 'versionedData',
): VersionedDataExport {
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
	// Keep Last N Versions deleted the versions below a branch's cut: parents there may be missing.
	const cut = Math.max(0, ...branches.map((b) => b.truncated_before ?? 0));
	versions.forEach((v, i) => {
		if (v.parent !== null && v.parent >= cut && !numbers.has(v.parent))
			invalid(`${base}.versions[${i}].parent`, `version ${v.parent} is not in the export`);
	});
	const counter =
		value.counter === null
			? null
			: at(`${base}.counter`, () => validateCounter(`${base}.counter`, value.counter));
	return { counter, branches, versions };
}

/**
 * Writes checked versioned data (parseVersionedDataExport) into a conversation that holds none: the
 * version objects, the counter and last the branch heads, byte for byte as exported, each create-only.
 */
export function writeVersionedData(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	data: VersionedDataExport,
	keyPrefix?: string,
): Promise<void> {
	return writeVersions(storage, versionedDataLayout(appId, conversationId, keyPrefix), data);
}

/** The same into a layout's folder: versions, counter, then branch heads, each create-only. */
export async function writeVersions(
	storage: MemoryStorage,
	layout: VersionLayout,
	data: VersionedDataExport,
): Promise<void> {
	const create = (key: string, doc: unknown) =>
		storage.put(key, encodeJson(doc), { ifVersion: null, contentType: 'application/json' });
	await mapLimit(data.versions, MAX_PARALLEL, (v) => create(layout.versionKey(v.version), v));
	if (data.counter) await create(layout.counterKey, data.counter);
	for (const b of data.branches) await create(layout.branchKey(b.branch), b);
}
