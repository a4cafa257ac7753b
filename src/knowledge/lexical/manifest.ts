// The lexical index's manifest: the newest chunks inline (the tail) and its segments, oldest first.
import { randomUUID } from 'node:crypto';

import { z } from 'zod';

import { decodeJsonObject, encodeJson } from '../../store/codec';
import type { DocumentCodec } from '../../store/document-store';
import { parse } from '../../store/parse';
import type { IndexedChunk } from '../vector-segment';
import { chunksSchema } from './segment';
import type { LexicalRef } from './segment';

/** `memory_base/{base_id}/lexical/manifest.json` */
export interface LexicalManifest {
	/** Random, new whenever the index is created or cleared (what a cached view is valid for). */
	generation: string;
	tail: IndexedChunk[];
	segments: LexicalRef[];
	updated_at: string;
}

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
		}),
	),
	updated_at: z.string().min(1),
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
