// The lexical index's manifest: the newest chunks inline (the tail), its segments, and the open
// sources whose newest chunks are read from the sources themselves (open-sources.ts).
import { randomUUID } from 'node:crypto';

import { z } from 'zod';

import { isPowerOfTwo } from '../../common/power-of-two';
import { isValidId } from '../../keys/ids';
import { decodeJsonObject, encodeJson } from '../../store/codec';
import type { DocumentCodec } from '../../store/document-store';
import { parse } from '../../store/parse';
import type { IndexedChunk } from '../chunks/chunk';
import type { Guarded } from '../chunks/manifest-guard';
import { retiredSchema } from '../chunks/retiring';
import type { Retiring } from '../chunks/retiring';
import { chunksSchema } from './segment';
import type { LexicalRef } from './segment';
import type { TermTier } from './tiers';

/**
 * A conversation whose source (the Memory Base: its capture log) holds chunks the manifest does not:
 * a search reads them from the source. Listed before the source is opened, unlisted only after it was
 * closed (see open-sources.ts).
 */
export interface OpenSource {
	session_id: string;
	/** The source's opening it was listed for: an older closing does not unlist it. */
	gen: number;
	/** Users of the chunks added since it was opened; null: too many to list (any user). */
	users: string[] | null;
	/** When it was listed: the owner folds the longest listed first, and an opening that never came expires. */
	at: string;
	/**
	 * What the manifest holds of the source: everything up to here (its owner's number). A search that
	 * finds the source moved past it reads the manifest again (open-sources.ts, movedPast). Listings
	 * written before it have none.
	 */
	through?: number;
}

/** `manifest.json` in the index's folder (a Memory Base's: `memory_base/{base_id}/lexical/`). */
export interface LexicalManifest extends Guarded, Retiring {
	/** Random, new whenever the index is created or cleared (what a cached view is valid for). */
	generation: string;
	tail: IndexedChunk[];
	segments: LexicalRef[];
	/** Open sources (manifests written before there were any have none). */
	open?: OpenSource[];
	/** Term tiers over settled segments (tiers.ts); manifests written before there were any have none. */
	terms?: TermTier[];
	updated_at: string;
}

const id = z.string().refine(isValidId, 'is not a valid ID');
const powerOfTwo = z.number().int().min(1).refine(isPowerOfTwo, 'is not a power of two');

const manifestSchema = z.looseObject({
	generation: z.string().min(1),
	tail: chunksSchema,
	segments: z.array(
		z.looseObject({
			key: z.string().min(1),
			level: z.number().int().min(0),
			count: z.number().int().min(1),
			bloom: z.string(),
			from: z.string().min(1),
			to: z.string().min(1),
			bytes: z.number().int().min(0),
			tier: z.object({ id: z.string().min(1), ord: z.number().int().min(0) }).optional(),
			gone: z.number().int().min(1).optional(),
		}),
	),
	terms: z
		.array(
			z.looseObject({
				id: z.string().regex(/^[0-9a-f]{18}$/),
				segments: z.number().int().min(1),
				n: z.number().int().min(0),
				total: z.number().int().min(0),
				buckets: powerOfTwo,
				postings: z.number().int().min(0),
				sessionBuckets: powerOfTwo,
				sessionRows: z.number().int().min(0),
				bytes: z.number().int().min(0),
				timed: z.boolean().optional(),
				binarySessions: z.boolean().optional(),
				versions: z
					.record(z.string().regex(/^[0-9]{1,6}$/), z.string().regex(/^[0-9a-f]{12}$/))
					.optional(),
			}),
		)
		.optional(),
	open: z
		.array(
			z.looseObject({
				session_id: id,
				gen: z.number().int().min(0),
				users: z.array(id).nullable(),
				at: z.iso.datetime({ offset: true }),
				through: z.number().int().min(0).optional(),
			}),
		)
		.optional(),
	retired: retiredSchema,
	updated_at: z.string().min(1),
	owner: z.string().min(1).optional(),
	moved_at: z.string().min(1).optional(),
});

export function emptyManifest(): LexicalManifest {
	return {
		generation: randomUUID(),
		tail: [],
		segments: [],
		updated_at: new Date().toISOString(),
	};
}

export const lexicalManifestCodec: DocumentCodec<LexicalManifest> = {
	decode: (key, bytes) => parse(key, manifestSchema, decodeJsonObject(key, bytes)),
	encode: (doc) => encodeJson(doc),
	// Never stored as such: a missing manifest reads as version null, which callers check first.
	empty: emptyManifest,
};
