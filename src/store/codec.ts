import { gunzipSync, gzipSync } from 'node:zlib';

import { CorruptDocumentError } from '../errors';
import { isSealedKeyOf } from './log-keys';
import { BLOOM_BITS, bloomMayHave, bloomPositions, isBloom } from './bloom';
import { validateHead, validateSealed } from './schema';
import type { DocumentCodec } from './document-store';
import { emptyDocument, validateDocument as validateV1 } from './schema';
import type { HeadDocument, MemoryDocument, SealedIndex, SealedRef, SealedSegment } from './schema';

const GZIP_MAGIC = [0x1f, 0x8b];

/** Serialises a JSON document, gzipped when asked. */
export function encodeJson(doc: unknown, options: { gzip?: boolean } = {}): Buffer {
	const json = Buffer.from(JSON.stringify(doc), 'utf8');
	return options.gzip ? gzipSync(json) : json;
}

/** Parses stored bytes (plain or gzipped JSON) into an object; anything else is a CorruptDocumentError naming the key. */
export function decodeJsonObject(key: string, bytes: Uint8Array): object {
	let text: string;
	try {
		const raw =
			bytes[0] === GZIP_MAGIC[0] && bytes[1] === GZIP_MAGIC[1]
				? gunzipSync(bytes)
				: Buffer.from(bytes);
		text = raw.toString('utf8');
	} catch (cause) {
		throw new CorruptDocumentError(key, 'gzip data is damaged', { cause });
	}
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (cause) {
		throw new CorruptDocumentError(key, 'not valid JSON', { cause });
	}
	if (typeof value !== 'object' || value === null || Array.isArray(value))
		throw new CorruptDocumentError(key, 'not a JSON object');
	return value;
}

/** Serialises a memory document, gzipped when asked. */
export const encodeDocument: (doc: MemoryDocument, options?: { gzip?: boolean }) => Buffer =
	encodeJson;

/**
 * Parses stored bytes into a validated memory document.
 * Anything else is a CorruptDocumentError naming the key: never an empty document.
 */
export function decodeDocument(key: string, bytes: Uint8Array): MemoryDocument {
	return validateV1(key, decodeJsonObject(key, bytes));
}

/** A reference's key and filter must be well-formed, and it may only point into its own head's folder. */
export function checkSealedRef(headKey: string, ref: SealedRef, where: string): void {
	if (!isSealedKeyOf(headKey, ref.key))
		throw new CorruptDocumentError(
			headKey,
			`${where}.key ${JSON.stringify(ref.key)} is not a sealed object of this document`,
		);
	if (ref.bloom !== undefined && !isBloom(ref.bloom))
		throw new CorruptDocumentError(headKey, `${where}.bloom is not a ${BLOOM_BITS}-bit filter`);
	if (ref.level === 0 && ref.bloom === undefined)
		throw new CorruptDocumentError(headKey, `${where}: a segment reference needs "bloom"`);
}

/**
 * Parses what a memory key holds: a version-1 document or a version-3 head (validated, references
 * included). Anything else is a CorruptDocumentError naming the key: never an empty document.
 */
export function decodeHead(key: string, bytes: Uint8Array): HeadDocument {
	return validateHead(key, decodeJsonObject(key, bytes), (ref, where) =>
		checkSealedRef(key, ref, where),
	);
}

/**
 * Parses a sealed object and checks it is the one `ref` (in the head `headKey`) describes: kind, level,
 * count, first and last IDs, and (segments) every ID in the reference's filter.
 */
export function decodeSealed(
	headKey: string,
	ref: SealedRef,
	bytes: Uint8Array,
): SealedSegment | SealedIndex {
	const key = ref.key;
	const obj = validateSealed(
		key,
		decodeJsonObject(key, bytes),
		ref.level === 0 ? 'segment' : 'index',
	);
	checkSealed(headKey, ref, obj);
	return obj;
}

/** Segments whose messages were checked against a filter (by the filter): the check hashes every ID. */
const filterChecked = new WeakMap<SealedSegment | SealedIndex, string | undefined>();

/** The checks decodeSealed makes, for an object already decoded (a cached copy). */
export function checkSealed(
	headKey: string,
	ref: SealedRef,
	obj: SealedSegment | SealedIndex,
): void {
	const key = ref.key;
	const fail = (detail: string) => {
		throw new CorruptDocumentError(key, `${detail} (it is referenced by "${headKey}")`);
	};
	if (obj.head !== headKey) fail(`it belongs to "${obj.head}"`);
	if (obj.kind === 'segment') {
		const m = obj.messages;
		if (m.length !== ref.count)
			fail(`it holds ${m.length} messages, the reference says ${ref.count}`);
		if (m[0].message_id !== ref.first_id || m[m.length - 1].message_id !== ref.last_id)
			fail('its first or last message is not the one referenced');
		if (filterChecked.has(obj) && filterChecked.get(obj) === ref.bloom) return;
		const seen = new Set<string>();
		for (const msg of m) {
			if (seen.has(msg.message_id)) fail(`duplicate message_id "${msg.message_id}"`);
			seen.add(msg.message_id);
			if (!bloomMayHave(ref.bloom, bloomPositions(msg.message_id)))
				fail(`message "${msg.message_id}" is missing from the reference's filter`);
		}
		filterChecked.set(obj, ref.bloom);
	} else {
		const r = obj.refs;
		if (obj.level !== ref.level)
			fail(`it is an index of level ${obj.level}, the reference says ${ref.level}`);
		const count = r.reduce((n, c) => n + c.count, 0);
		if (count !== ref.count) fail(`it covers ${count} messages, the reference says ${ref.count}`);
		if (r[0].first_id !== ref.first_id || r[r.length - 1].last_id !== ref.last_id)
			fail('its first or last message is not the one referenced');
		r.forEach((c, i) => {
			if (c.level >= obj.level) fail(`refs.${i} has level ${c.level}, not below ${obj.level}`);
			try {
				checkSealedRef(headKey, c, `refs.${i}`);
			} catch (error) {
				fail((error as CorruptDocumentError).detail);
			}
		});
	}
}

/** How a memory key is stored: a version-1 document or a version-3 head, plain or gzipped JSON. */
export function headCodec(gzip = false): DocumentCodec<HeadDocument> {
	return { decode: decodeHead, encode: (doc) => encodeJson(doc, { gzip }), empty: emptyDocument };
}
