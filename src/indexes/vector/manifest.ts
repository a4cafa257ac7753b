// The embedded vector index's manifest: its write-once segments, oldest first, moved by compare-and-swap.
import { z } from 'zod';

import { decodeJsonObject, encodeJson } from '../../store/codec';
import type { DocumentCodec } from '../../store/document-store';
import { parse } from '../../store/parse';
import type { Guarded } from '../chunks/manifest-guard';

/** One segment of the embedded index, as the manifest lists it. */
export interface SegmentRef {
	key: string;
	/** Vectors in the segment (superseded ones included). */
	count: number;
	/** Sessions with chunks in it (a session-filtered search reads only these segments). */
	sessions: string[];
	/** Users with chunks in it (older segments have none listed: a user-filtered search reads them). */
	users?: string[];
	bytes: number;
	created_at: string;
}

/**
 * `manifest.json` in the index's folder (a knowledge base's: `knowledge_base/{kb_id}/index/`): the
 * segments, oldest first (a later chunk ID wins).
 */
export interface IndexManifest extends Guarded {
	dimensions: number;
	segments: SegmentRef[];
	updated_at: string;
}

const timestamp = z.iso.datetime({ offset: true });

const manifestSchema = z.looseObject({
	dimensions: z.number().int().min(1),
	segments: z.array(
		z.looseObject({
			key: z.string().min(1),
			count: z.number().int().min(1),
			sessions: z.array(z.string().min(1)),
			users: z.array(z.string().min(1)).optional(),
			bytes: z.number().int().min(0),
			created_at: timestamp,
		}),
	),
	updated_at: timestamp,
	owner: z.string().min(1).optional(),
	moved_at: timestamp.optional(),
});

export const manifestCodec: DocumentCodec<IndexManifest> = {
	decode: (key, bytes) => parse(key, manifestSchema, decodeJsonObject(key, bytes)),
	encode: (doc) => encodeJson(doc),
	// Never stored as such: a missing manifest reads as version null, which callers check first.
	empty: () => ({ dimensions: 1, segments: [], updated_at: new Date(0).toISOString() }),
};
