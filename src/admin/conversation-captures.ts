// A conversation's Memory Base captures, as part of whole-conversation work: by default in the base
// whose ID is the workflow's (what the Memory Base nodes use unless told otherwise), or in the bases
// the caller names.
import { InvalidExportError } from '../errors';
import { validateId } from '../keys/ids';
import { MemoryBase } from '../knowledge/memory-base';
import { checkCapturedMessages } from '../knowledge/transfer';
import type { CapturedMessage } from '../knowledge/records';
import { arrayAt, invalid, isRecord } from '../store/parse';
import type { MemoryStorage } from '../store/storage';

export interface CaptureScope {
	keyPrefix?: string;
	/** Memory bases to include (default: the one whose ID is the app ID). */
	memoryBaseIds?: string[];
}

/** One base's captures of the conversation, as exported. */
export interface ExportedCaptures {
	baseId: string;
	messages: CapturedMessage[];
}

function basesOf(storage: MemoryStorage, appId: string, scope: CaptureScope): MemoryBase[] {
	const ids = scope.memoryBaseIds ?? [appId];
	return [...new Set(ids.map((id) => validateId('memory_base_id', id)))].map(
		(baseId) => new MemoryBase({ storage, baseId, keyPrefix: scope.keyPrefix }),
	);
}

/** Forgets the conversation in every base of the scope that captured it; returns the deleted keys. */
export async function forgetCaptures(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	scope: CaptureScope = {},
): Promise<string[]> {
	const deleted: string[] = [];
	for (const base of basesOf(storage, appId, scope))
		if ((await base.captured(conversationId)) > 0)
			deleted.push(...(await base.forget(conversationId)).deleted);
	return deleted;
}

/** The conversation's captures in every base of the scope that has any. */
export async function exportCaptures(
	storage: MemoryStorage,
	appId: string,
	conversationId: string,
	scope: CaptureScope = {},
): Promise<ExportedCaptures[]> {
	const out: ExportedCaptures[] = [];
	for (const base of basesOf(storage, appId, scope)) {
		const messages = await base.exportSession(conversationId);
		if (messages) out.push({ baseId: base.baseId, messages: [...messages] });
	}
	return out;
}

/** Checks exported captures (an array of { baseId, messages }); InvalidExportError naming where. */
export function parseCaptures(value: unknown, path: string): ExportedCaptures[] {
	if (value === undefined) return [];
	return arrayAt(value, path).map((c, i) => {
		if (!isRecord(c)) invalid(`${path}[${i}]`, 'must be an object');
		try {
			validateId('memory_base_id', c.baseId);
		} catch (error) {
			throw new InvalidExportError(`${path}[${i}].baseId`, (error as Error).message);
		}
		const messages = checkCapturedMessages(`${path}[${i}].messages`, 'session', c.messages);
		return { baseId: c.baseId as string, messages };
	});
}

/** Stores exported captures as the conversation's in each base (checked as the reader checks them). */
export async function importCaptures(
	storage: MemoryStorage,
	conversationId: string,
	captures: ExportedCaptures[],
	options: { keyPrefix?: string; overwrite?: boolean; path: string },
): Promise<number> {
	let n = 0;
	for (const [i, c] of captures.entries()) {
		const base = new MemoryBase({ storage, baseId: c.baseId, keyPrefix: options.keyPrefix });
		n += (
			await base.importSession(conversationId, c.messages, {
				overwrite: options.overwrite,
				path: `${options.path}[${i}].messages`,
			})
		).messages;
	}
	return n;
}
