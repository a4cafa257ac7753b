// The embedded vector index's manifest: its write-once segments, oldest first, moved by compare-and-swap.
import { z } from 'zod';

import { isPowerOfTwo } from '../../common/power-of-two';
import { decodeJsonObject, encodeJson } from '../../store/codec';
import type { DocumentCodec } from '../../store/document-store';
import { parse } from '../../store/parse';
import type { Guarded } from '../chunks/manifest-guard';
import { retiredSchema } from '../chunks/retiring';
import type { Retiring } from '../chunks/retiring';
import type { TierPlace } from '../chunks/tiering';
import type { CellTier } from './cell-tiers';

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
	/** Its place in a cell tier (an index kept in tiers: the base-wide one). */
	tier?: TierPlace;
}

/** The cells of an index kept in tiers: its codebook (written once, by the first tier) and its tiers. */
export interface CellIndex {
	/** The codebook's key; tiers built with another are stale. */
	codebook?: string;
	tiers: CellTier[];
}

/**
 * `manifest.json` in the index's folder (a knowledge base's: `knowledge_base/{kb_id}/index/`): the
 * segments, oldest first (a later chunk ID wins).
 */
export interface IndexManifest extends Guarded, Retiring {
	dimensions: number;
	segments: SegmentRef[];
	/** Cell tiers over settled segments (cell-tiers.ts); manifests written before there were any have none. */
	cells?: CellIndex;
	/** Conversations a running Forget is rewriting, until when: no merge takes their segments (vector-merge.ts). */
	forgetting?: Array<{ session: string; until: string }>;
	updated_at: string;
}

const timestamp = z.iso.datetime({ offset: true });

/**
 * A segment's conversations (or users): checked by one loop, not a schema per element. The base-wide
 * index's manifest lists every conversation of the base (100,000 texts at 100,000 users), and a schema
 * per element made decoding it, on every sync and on each search after one, twice as slow.
 */
const idList = (what: string) =>
	z.custom<string[]>(
		(v) => Array.isArray(v) && v.every((s) => typeof s === 'string' && s.length > 0),
		`must be a list of ${what} IDs`,
	);

const manifestSchema = z.looseObject({
	dimensions: z.number().int().min(1),
	segments: z.array(
		z.looseObject({
			key: z.string().min(1),
			count: z.number().int().min(1),
			sessions: idList('conversation'),
			users: idList('user').optional(),
			bytes: z.number().int().min(0),
			created_at: timestamp,
			tier: z.object({ id: z.string().min(1), ord: z.number().int().min(0) }).optional(),
		}),
	),
	cells: z
		.looseObject({
			codebook: z.string().min(1).optional(),
			tiers: z.array(
				z
					.looseObject({
						// 20 digits: a split tier (cell-tiers.ts, newCellTierId).
						id: z.string().regex(/^[0-9a-f]{18}([0-9a-f]{2})?$/),
						codebook: z.string().min(1),
						segments: z.number().int().min(1),
						rows: z.number().int().min(0),
						buckets: z.number().int().min(1),
						bytes: z.number().int().min(0),
						split: z.number().int().min(2).refine(isPowerOfTwo, 'is not a power of two').optional(),
						largest: z.number().int().min(0).optional(),
						versions: z
							.record(z.string().regex(/^[0-9]{1,7}$/), z.string().regex(/^[0-9a-f]{12}$/))
							.optional(),
					})
					// Ranges of cells (a power of two) times the split: a power of two, at least the split.
					.refine(
						(t) =>
							isPowerOfTwo(t.buckets) &&
							(t.split === undefined
								? t.id.length === 18
								: t.buckets >= t.split && t.id.length === 20),
						'buckets do not match its split',
					),
			),
		})
		.optional(),
	retired: retiredSchema,
	forgetting: z.array(z.object({ session: z.string().min(1), until: timestamp })).optional(),
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
