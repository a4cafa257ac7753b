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
import { COUNTED_CELLS } from './cell-layout';
import { MAX_CELLS } from './codebook';

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

/**
 * A tier's buckets match its layout: per-range splits listed in order, each range's buckets added to
 * its ranges (a 22-digit ID); or ranges (a power of two) times one split (20 digits), or unsplit (18).
 */
function layoutHolds(t: {
	id: string;
	buckets: number;
	split?: number;
	ranges?: number;
	parts?: Array<[number, number]>;
}): boolean {
	if (t.parts || t.ranges !== undefined) {
		if (!t.parts || t.ranges === undefined || t.split !== undefined || t.id.length !== 22)
			return false;
		let [last, buckets] = [-1, t.ranges];
		for (const [r, s] of t.parts) {
			if (r <= last || r >= t.ranges) return false;
			[last, buckets] = [r, buckets + s - 1];
		}
		return buckets === t.buckets;
	}
	if (!isPowerOfTwo(t.buckets)) return false;
	return t.split === undefined ? t.id.length === 18 : t.buckets >= t.split && t.id.length === 20;
}

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
						// 20 digits: a split tier; 22: one split per range (cell-tiers.ts, newCellTierId).
						id: z.string().regex(/^[0-9a-f]{18}([0-9a-f]{2}){0,2}$/),
						codebook: z.string().min(1),
						segments: z.number().int().min(1),
						rows: z.number().int().min(0),
						buckets: z.number().int().min(1),
						bytes: z.number().int().min(0),
						split: z.number().int().min(2).refine(isPowerOfTwo, 'is not a power of two').optional(),
						ranges: z
							.number()
							.int()
							.min(1)
							.max(MAX_CELLS)
							.refine(isPowerOfTwo, 'is not a power of two')
							.optional(),
						parts: z
							.array(
								z.tuple([
									z.number().int().min(0),
									z.number().int().min(2).refine(isPowerOfTwo, 'is not a power of two'),
								]),
							)
							.min(1)
							.optional(),
						largest: z.number().int().min(0).optional(),
						cellRows: z.array(z.number().int().min(0)).max(COUNTED_CELLS).optional(),
						versions: z
							.record(z.string().regex(/^[0-9]{1,7}$/), z.string().regex(/^[0-9a-f]{12}$/))
							.optional(),
					})
					.refine(layoutHolds, 'buckets do not match its split'),
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
