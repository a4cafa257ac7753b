// Saving a version: create it at the first free number (create-only), then move the branch head by
// compare-and-swap and raise the counter. Costs the same at any number of versions.
import { KeyedQueue } from '../common/keyed-queue';
import {
	ConflictError,
	InvalidInputError,
	UnknownBranchError,
	VersionConflictError,
} from '../errors';
import { isVersionNumber, MAX_VERSION_NUMBER } from './keys';
import type { Versioned } from '../store/document-store';
import type { JsonValue } from './json';
import { encodeVersionRecord } from './records';
import type { VersionCounter, VersionRecord } from './records';
import { deleteBelowCut, headAfterSave } from './retention';
import type { SaveRules } from './retention';
import { MAIN_BRANCH } from './types';
import type { VersionStore } from './version-store';

/**
 * Create-only attempts at consecutive numbers before a save lists the stored versions once to find the
 * highest (only when the counter is far behind, e.g. deleted by hand; normally the first attempt lands).
 */
const STEPS_BEFORE_LISTING = 16;

/**
 * Saves on one branch by this process run one after another: each then starts from the head and counter
 * the previous one left (read in parallel), instead of racing it and stepping past its number.
 */
const saves = new KeyedQueue();

/** One save: what it stores, where, and on what condition (see saveVersion). */
export interface SaveRequest {
	branch: string;
	summary: string;
	messageId: string | undefined;
	/** The data's JSON text (serialized once, when it was checked) and its value. */
	dataText: string;
	data: JsonValue;
	expected: number | null | undefined;
	/** Expire After and Keep Last N Versions of this save (see SaveVersionInput). */
	rules: SaveRules;
}

export function commit(vs: VersionStore, request: SaveRequest): Promise<VersionRecord> {
	const headKey = vs.branchKey(request.branch);
	return saves.run(`${vs.storage.describe()}\n${headKey}`, () => commitNow(vs, headKey, request));
}

async function commitNow(
	vs: VersionStore,
	headKey: string,
	{ branch, summary, messageId, dataText, data, expected, rules }: SaveRequest,
): Promise<VersionRecord> {
	const heads = vs.heads(branch);
	// An expired branch reads as missing (and its data is deleted when every branch expired).
	const [head, counter] = await Promise.all([vs.liveHead(branch), vs.counters.read(vs.counterKey)]);
	const createdAt = vs.now().toISOString();
	/** Versions this save created, by number: a head found at one of them is this save's own write. */
	const mine = new Map<number, VersionRecord>();
	let saved: VersionRecord | undefined;
	let hint = counter.version === null ? 1 : counter.doc.next;
	let counterWrite: Promise<void> = Promise.resolve();
	let counterAssumed: Versioned<VersionCounter> | undefined = counter;
	const result = await heads.update(
		headKey,
		async (current) => {
			const at = current.version === null ? null : current.doc.version;
			if (at !== null && mine.has(at)) {
				// A compare-and-swap whose response was lost (and retried) did land.
				saved = mine.get(at);
				return undefined;
			}
			if (current.version === null && branch !== MAIN_BRANCH)
				throw new UnknownBranchError(vs.scope, branch);
			if (expected !== undefined && expected !== at)
				throw new VersionConflictError(branch, expected, at);
			const record = await allocate(
				vs,
				{ parent: at, summary, created_at: createdAt, message_id: messageId },
				dataText,
				data,
				Math.max(hint, (at ?? 0) + 1),
			);
			hint = record.version + 1;
			mine.set(record.version, record);
			saved = record;
			const next = hint;
			const assumed = counterAssumed;
			counterAssumed = undefined;
			counterWrite = counterWrite.then(() => raiseCounter(vs, next, assumed));
			const prev = current.version === null ? null : current.doc;
			return headAfterSave(vs, branch, prev, record, rules, createdAt);
		},
		head,
	);
	await counterWrite;
	const record = saved as VersionRecord;
	const after = result.current;
	if (after.version !== null && after.doc.version === record.version) {
		vs.objects.remember(headKey, after.version, record);
		// The save stands whatever happens here: versions a failed delete leaves, the next save deletes.
		if (after.doc.keep_last !== undefined) await deleteBelowCut(vs, after.doc).catch(() => []);
	}
	return record;
}

/** Creates the version at the first free number from `start` (create-only, stepping on conflict). */
async function allocate(
	vs: VersionStore,
	meta: Omit<VersionRecord, 'version' | 'data'>,
	dataText: string,
	data: JsonValue,
	start: number,
): Promise<VersionRecord> {
	let n = start;
	for (let steps = 0; ; steps++) {
		if (steps === STEPS_BEFORE_LISTING) n = Math.max(n, (await highestStored(vs)) + 1);
		if (!isVersionNumber(n))
			throw new InvalidInputError(
				'version',
				`this conversation has used every version number up to ${MAX_VERSION_NUMBER}`,
			);
		const record: VersionRecord = {
			version: n,
			parent: meta.parent,
			summary: meta.summary,
			created_at: meta.created_at,
			...(meta.message_id !== undefined ? { message_id: meta.message_id } : {}),
			data,
		};
		try {
			await vs.objects.create(vs.versionKey(n), encodeVersionRecord(record, dataText), record, {
				reusableKey: true,
			});
			return record;
		} catch (error) {
			if (!(error instanceof ConflictError)) throw error;
			n++;
		}
	}
}

/** The highest stored version number (0 if none), by listing: only when the counter is far behind. */
async function highestStored(vs: VersionStore): Promise<number> {
	let highest = 0;
	for (const o of await vs.storage.list(`${vs.prefix}versions/`)) {
		const parsed = vs.layout.parse(o.key);
		if (parsed?.kind === 'version' && (parsed.version as number) > highest)
			highest = parsed.version as number;
	}
	return highest;
}

/** Raises the counter to `next` (never lowers it). A hint only: failing to write it costs a later save a step. */
async function raiseCounter(
	vs: VersionStore,
	next: number,
	assumed?: Versioned<VersionCounter>,
): Promise<void> {
	try {
		await vs.counters.update(
			vs.counterKey,
			(cur) => (cur.version !== null && cur.doc.next >= next ? undefined : { next }),
			assumed,
		);
	} catch {
		// The version and the head are saved; the next save steps past a stale counter.
	}
}
