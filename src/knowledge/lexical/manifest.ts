// The lexical index's manifest: the newest chunks inline (the tail), its segments, and the capture logs
// whose newest messages are read from the logs themselves (open logs, see open-logs.ts).
import { randomUUID } from 'node:crypto';

import { z } from 'zod';

import { isValidId } from '../../keys/ids';
import { decodeJsonObject, encodeJson } from '../../store/codec';
import type { DocumentCodec } from '../../store/document-store';
import { parse } from '../../store/parse';
import type { IndexedChunk } from '../vector-segment';
import { chunksSchema } from './segment';
import type { LexicalRef } from './segment';

/**
 * A conversation whose capture log holds messages the manifest does not: a search reads them from
 * the log. Listed before the log is opened, unlisted only after it was closed (see open-logs.ts).
 */
export interface OpenLog {
	session_id: string;
	/** The log's opening it was listed for (LexicalState.gen): an older closing does not unlist it. */
	gen: number;
	/** Users of the conversation's captures since it was opened; null: too many to list (any user). */
	users: string[] | null;
	/** When it was listed: the longest listed are folded first, and an opening that never came expires. */
	at: string;
}

/** `memory_base/{base_id}/lexical/manifest.json` */
export interface LexicalManifest {
	/** Random, new whenever the index is created or cleared (what a cached view is valid for). */
	generation: string;
	tail: IndexedChunk[];
	segments: LexicalRef[];
	/** Open capture logs (manifests written before there were any have none). */
	open?: OpenLog[];
	updated_at: string;
}

const id = z.string().refine(isValidId, 'is not a valid ID');

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
	open: z
		.array(
			z.looseObject({
				session_id: id,
				gen: z.number().int().min(0),
				users: z.array(id).nullable(),
				at: z.iso.datetime({ offset: true }),
			}),
		)
		.optional(),
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
