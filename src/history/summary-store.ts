// Where a memory keeps its summaries of older turns: one small object beside the memory document,
// read with a conditional request and changed by compare-and-swap, like the document itself.
import { z } from 'zod';

import { CorruptDocumentError } from '../errors';
import { summariesKey } from './keys';
import { decodeJsonObject, encodeJson } from '../store/codec';
import { DocumentStore } from '../store/document-store';
import type { DocumentCodec, DocumentStoreOptions, Versioned } from '../store/document-store';
import { parse } from '../store/parse';
import type { MemoryStorage } from '../store/storage';

export const SUMMARY_DOCUMENT_VERSION = 1;
/**
 * Summaries kept per memory: the newest few, so a regeneration from a recent turn still finds one on
 * its thread, while the object stays a few KiB.
 */
export const MAX_SUMMARIES = 8;

/**
 * A summary of a thread's turns from its root up to `boundary` (the ID of the last summarized message:
 * the final answer of the newest turn it covers). It is valid for any thread that passes through that
 * message, and for no other.
 */
export interface StoredSummary {
	boundary: string;
	/** The boundary of the summary this one was folded from (null: the first). */
	previous: string | null;
	text: string;
	/** Turns it covers. */
	turns: number;
	/** When the first and the last summarized message were stored. */
	first_at: string;
	last_at: string;
	created_at: string;
}

export interface SummaryDocument {
	version: typeof SUMMARY_DOCUMENT_VERSION;
	summaries: StoredSummary[];
}

const timestamp = z.iso.datetime({ offset: true });
// Loose: fields a newer package adds are kept when an older one rewrites the object.
const summarySchema = z.looseObject({
	boundary: z.string().min(1),
	previous: z.string().min(1).nullable(),
	text: z.string(),
	turns: z.number().int().positive(),
	first_at: timestamp,
	last_at: timestamp,
	created_at: timestamp,
});
const documentSchema = z.looseObject({
	version: z.literal(SUMMARY_DOCUMENT_VERSION),
	summaries: z.array(summarySchema),
});

/** Parses a stored summaries object; anything else is a CorruptDocumentError naming the key. */
export function decodeSummaries(key: string, bytes: Uint8Array): SummaryDocument {
	const doc = parse<SummaryDocument>(key, documentSchema, decodeJsonObject(key, bytes));
	const seen = new Set<string>();
	for (const s of doc.summaries) {
		if (seen.has(s.boundary))
			throw new CorruptDocumentError(key, `two summaries end at message "${s.boundary}"`);
		seen.add(s.boundary);
	}
	return doc;
}

const codec: DocumentCodec<SummaryDocument> = {
	decode: decodeSummaries,
	encode: (doc) => encodeJson(doc),
	empty: () => ({ version: SUMMARY_DOCUMENT_VERSION, summaries: [] }),
};

/** The summaries object of one memory document. An unreadable one is an error, never empty. */
export class SummaryStore {
	readonly key: string;
	private readonly store: DocumentStore<SummaryDocument>;

	constructor(storage: MemoryStorage, headKey: string, options: DocumentStoreOptions = {}) {
		this.key = summariesKey(headKey);
		this.store = new DocumentStore(storage, codec, options);
	}

	/** One conditional read: the body is transferred and parsed only when it changed. */
	read(): Promise<Versioned<SummaryDocument>> {
		return this.store.read(this.key);
	}

	/**
	 * Adds a summary by compare-and-swap (a conflict re-reads and adds again, so a concurrent writer's
	 * summary is kept too). When one with the same boundary is stored already, that one stays and is
	 * returned: both describe the same turns. Past MAX_SUMMARIES the oldest added go.
	 */
	async add(summary: StoredSummary): Promise<StoredSummary> {
		const result = await this.store.update(
			this.key,
			(current) =>
				current.doc.summaries.some((s) => s.boundary === summary.boundary)
					? undefined
					: {
							version: SUMMARY_DOCUMENT_VERSION,
							summaries: [...current.doc.summaries, summary].slice(-MAX_SUMMARIES),
						},
			this.store.lastKnown(this.key),
		);
		return result.current.doc.summaries.find((s) => s.boundary === summary.boundary) ?? summary;
	}
}
