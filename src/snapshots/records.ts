// The three kinds of object versioned data is stored as, and how each is read back (validated).
import { z } from 'zod';

import { CorruptDocumentError } from '../errors';
import { isVersionNumber, MAX_VERSION_NUMBER } from './keys';
import { decodeJsonObject, encodeJson } from '../store/codec';
import { parse } from '../store/parse';
import { expireAfterDaysSchema } from '../store/retention';
import type { DocumentCodec } from '../store/document-store';
import type { JsonValue } from './json';
import { MAX_KEEP_LAST } from './types';

/**
 * One version, written once under `versions/{n}.json` and never changed. `parent` is the version the
 * branch was at when it was saved (null for the first): history walks these pointers.
 */
export interface VersionRecord {
	version: number;
	parent: number | null;
	summary: string;
	created_at: string;
	/** The chat message this version belongs to, when the caller named one. */
	message_id?: string;
	/** The data (stored last, so `head` of the file shows the metadata). */
	data: JsonValue;
}

/** A branch head, `branches/{name}.json`: the only per-branch object that is rewritten (compare-and-swap). */
export interface BranchHead {
	branch: string;
	version: number;
	updated_at: string;
	/** Expire After (days) from `updated_at`, stored by the saves that set it (snapshots/retention.ts). */
	expire_after_days?: number;
	/** Keep Last N Versions: each save on the branch deletes its versions older than the newest N. */
	keep_last?: number;
	/** The oldest version this branch's history still shows: older ones were (or may be) deleted. */
	truncated_before?: number;
}

/** `counter.json`: at least the next free version number (a hint: numbers are claimed by create-only writes). */
export interface VersionCounter {
	next: number;
}

const versionNumber = z.number().int().min(1).max(MAX_VERSION_NUMBER);
const timestamp = z.iso.datetime({ offset: true });

// Loose: fields a newer package adds are kept (and exported).
const versionRecordSchema = z.looseObject({
	version: versionNumber,
	parent: versionNumber.nullable(),
	summary: z.string().min(1),
	created_at: timestamp,
	message_id: z.string().min(1).optional(),
	data: z.unknown(),
});

const branchHeadSchema = z.looseObject({
	branch: z.string().min(1),
	version: versionNumber,
	updated_at: timestamp,
	expire_after_days: expireAfterDaysSchema.optional(),
	keep_last: z.number().int().min(1).max(MAX_KEEP_LAST).optional(),
	truncated_before: versionNumber.optional(),
});

const counterSchema = z.looseObject({ next: versionNumber });

/** Checks a version record (parsed JSON) against its number; a CorruptDocumentError naming `key` otherwise. */
export function validateVersionRecord(
	key: string,
	value: unknown,
	expected?: number,
): VersionRecord {
	const record = parse<VersionRecord>(key, versionRecordSchema, value);
	if (!Object.prototype.hasOwnProperty.call(record, 'data'))
		throw new CorruptDocumentError(key, '"data" is missing');
	if (expected !== undefined && record.version !== expected)
		throw new CorruptDocumentError(key, `it says it is version ${record.version}, not ${expected}`);
	if (record.parent !== null && record.parent >= record.version)
		throw new CorruptDocumentError(
			key,
			`its parent ${record.parent} is not older than the version itself (${record.version})`,
		);
	return record;
}

export function decodeVersionRecord(
	key: string,
	bytes: Uint8Array,
	expected: number,
): VersionRecord {
	return validateVersionRecord(key, decodeJsonObject(key, bytes), expected);
}

export function validateBranchHead(key: string, value: unknown, branch?: string): BranchHead {
	const head = parse<BranchHead>(key, branchHeadSchema, value);
	if (branch !== undefined && head.branch !== branch)
		throw new CorruptDocumentError(
			key,
			`it is the head of branch "${head.branch}", not "${branch}"`,
		);
	return head;
}

export function validateCounter(key: string, value: unknown): VersionCounter {
	return parse<VersionCounter>(key, counterSchema, value);
}

/**
 * The stored bytes of a version. The data's JSON text is spliced in as it is (it was serialized once
 * when it was checked); the result is exactly JSON.stringify of the record, so an export re-encoded by
 * import gives the same bytes.
 */
export function encodeVersionRecord(record: Omit<VersionRecord, 'data'>, dataText: string): Buffer {
	const meta: Record<string, unknown> = {
		version: record.version,
		parent: record.parent,
		summary: record.summary,
		created_at: record.created_at,
	};
	if (record.message_id !== undefined) meta.message_id = record.message_id;
	const head = JSON.stringify(meta);
	return Buffer.from(`${head.slice(0, -1)},"data":${dataText}}`, 'utf8');
}

export function headCodec(branch: string): DocumentCodec<BranchHead> {
	return {
		decode: (key, bytes) => validateBranchHead(key, decodeJsonObject(key, bytes), branch),
		encode: (doc) => encodeJson(doc),
		// Never stored: a missing head reads as version null and is checked for that first.
		empty: () => ({ branch, version: 1, updated_at: new Date(0).toISOString() }),
	};
}

export const counterCodec: DocumentCodec<VersionCounter> = {
	decode: (key, bytes) => validateCounter(key, decodeJsonObject(key, bytes)),
	encode: (doc) => encodeJson(doc),
	empty: () => ({ next: 1 }),
};

export { isVersionNumber };
