// Export and import of one subject's facts: every version, the branch head and the counter, exactly as
// stored (a user's facts on their own; a conversation's also as a section of the whole-conversation
// export, admin/'s job). Checked whole before anything is written.
import { FactsExistError } from '../errors';
import { validateId } from '../keys/ids';
import { invalid, isRecord, at } from '../store/parse';
import { deleteListed } from '../store/memory-admin';
import type { MemoryStorage } from '../store/storage';
import { exportVersions, parseVersionedDataExport, writeVersions } from '../snapshots/transfer';
import type { VersionedDataExport } from '../snapshots/transfer';
import { factsLayout, factsPrefix, subjectRef } from './keys';
import type { FactsSubject, SubjectRef } from './keys';
import { validateFacts } from './records';

export const FACTS_EXPORT_FORMAT = 'n8n-nodes-llm-memory/facts-export';
export const FACTS_EXPORT_VERSION = 1;

/** One subject's facts, as stored. */
export interface FactsExport {
	format: typeof FACTS_EXPORT_FORMAT;
	version: typeof FACTS_EXPORT_VERSION;
	space: string;
	subject: FactsSubject;
	versionedData: VersionedDataExport;
}

export interface FactsTarget {
	storage: MemoryStorage;
	space: string;
	subject: FactsSubject;
	keyPrefix?: string;
}

const subjectOf = (ref: SubjectRef): FactsSubject =>
	ref.kind === 'user' ? { userId: ref.id } : { conversationId: ref.id };

/** Every stored object of a subject's facts, as one value (null versions list: none stored). */
export async function exportFacts(target: FactsTarget): Promise<FactsExport> {
	const ref = subjectRef(target.subject);
	const layout = factsLayout(validateId('facts_space', target.space), ref, target.keyPrefix);
	return {
		format: FACTS_EXPORT_FORMAT,
		version: FACTS_EXPORT_VERSION,
		space: target.space,
		subject: subjectOf(ref),
		versionedData: await exportVersions(target.storage, layout),
	};
}

/** Checks exported facts versions: a consistent version chain whose every version is a facts document. */
export function parseFactsVersions(value: unknown, path: string): VersionedDataExport {
	const data = parseVersionedDataExport(value, path);
	data.versions.forEach((v, i) =>
		at(`${path}.versions[${i}].data`, () => validateFacts(`${path}.versions[${i}].data`, v.data)),
	);
	return data;
}

/** Checks a whole facts export; InvalidExportError naming where. */
export function parseFactsExport(value: unknown): FactsExport {
	if (!isRecord(value)) invalid('', 'must be exported facts (an object)');
	if (value.format !== FACTS_EXPORT_FORMAT)
		invalid('format', `must be "${FACTS_EXPORT_FORMAT}": this is not a facts export`);
	if (value.version !== FACTS_EXPORT_VERSION) invalid('version', `must be ${FACTS_EXPORT_VERSION}`);
	const space = at('space', () => validateId('facts_space', value.space));
	const subject = at('subject', () => subjectOf(subjectRef(value.subject as FactsSubject)));
	const versionedData = parseFactsVersions(value.versionedData, 'versionedData');
	return {
		format: FACTS_EXPORT_FORMAT,
		version: FACTS_EXPORT_VERSION,
		space,
		subject,
		versionedData,
	};
}

/**
 * Writes checked facts versions into a subject's folder that holds none (`overwrite`: deletes what
 * it holds first): versions, counter, then the branch head, each create-only. Returns the keys replaced.
 */
export async function writeFacts(
	target: FactsTarget,
	data: VersionedDataExport,
	options: { overwrite?: boolean } = {},
): Promise<string[]> {
	const ref = subjectRef(target.subject);
	const prefix = factsPrefix(target.space, ref, target.keyPrefix);
	const held = await target.storage.list(prefix);
	let replaced: string[] = [];
	if (held.length > 0) {
		if (!options.overwrite)
			throw new FactsExistError(
				`${target.space}/${ref.kind}:${ref.id}`,
				held.map((o) => o.key),
			);
		const heads = held.filter((o) => o.key.startsWith(`${prefix}branches/`));
		const rest = held.filter((o) => !o.key.startsWith(`${prefix}branches/`));
		const objects = [...heads, ...rest].map((object) => ({ object, conversationId: ref.id }));
		replaced = await deleteListed(target.storage, objects, [prefix]);
	}
	await writeVersions(target.storage, factsLayout(target.space, ref, target.keyPrefix), data);
	return replaced;
}

/**
 * Imports a facts export (see exportFacts) as the facts of `options.subject` in `options.space`
 * (default: those it names). Refuses a subject that holds facts unless `overwrite`.
 */
export async function importFacts(
	storage: MemoryStorage,
	value: unknown,
	options: { space?: string; subject?: FactsSubject; keyPrefix?: string; overwrite?: boolean } = {},
): Promise<{ space: string; subject: FactsSubject; versions: number; replaced: string[] }> {
	const parsed = parseFactsExport(value);
	const space = options.space ?? parsed.space;
	const subject = options.subject ?? parsed.subject;
	const target = { storage, space, subject, keyPrefix: options.keyPrefix };
	const replaced = await writeFacts(target, parsed.versionedData, options);
	return { space, subject, versions: parsed.versionedData.versions.length, replaced };
}
