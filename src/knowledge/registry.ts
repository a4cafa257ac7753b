// Which partitions a base made. A user's search reads only that user's partition, and a partition that
// is not there may be a user with nothing captured yet (an empty answer) or one whose objects were lost
// (an error naming it, never an empty answer): the registry tells them apart. A partition is registered
// after its first manifest was written, by hash only (no ID is kept here), in one of 256 shards.
import { z } from 'zod';

import { decodeJsonObject, encodeJson } from '../store/codec';
import type { DocumentCodec } from '../store/document-store';
import { DocumentStore } from '../store/document-store';
import { parse } from '../store/parse';
import { registryKey } from './keys';
import type { BaseParts } from './parts';
import { partHash } from './partitions';
import { inBatches } from './types';

/** Which index of a partition: its word index or its vector index. */
export type PartKind = 'lexical' | 'vector';

/** `memory_base/{base_id}/registry/{h2}.json`: the partitions made, by kind, as sorted hashes. */
interface RegistryShard {
	lexical: string[];
	vector: string[];
	updated_at: string;
}

const hashes = z.array(z.string().regex(/^[0-9a-f]{32}$/));
const shardSchema = z.looseObject({
	lexical: hashes,
	vector: hashes,
	updated_at: z.iso.datetime({ offset: true }),
});

const codec: DocumentCodec<RegistryShard> = {
	decode: (key, bytes) => parse(key, shardSchema, decodeJsonObject(key, bytes)),
	encode: (doc) => encodeJson(doc),
	empty: () => ({ lexical: [], vector: [], updated_at: new Date(0).toISOString() }),
};

function shards(p: BaseParts): DocumentStore<RegistryShard> {
	return new DocumentStore(p.storage, codec, { maxAttempts: p.maxAttempts });
}

/** Partition hashes by shard. */
function byShard(hashes: readonly string[]): Map<string, string[]> {
	const out = new Map<string, string[]>();
	for (const h of new Set(hashes)) {
		const list = out.get(h.slice(0, 2));
		if (list) list.push(h);
		else out.set(h.slice(0, 2), [h]);
	}
	return out;
}

/**
 * Adds (or, with `remove`, takes out) partitions of one kind: one compare-and-swap per shard. Returns
 * the shards written.
 */
export function register(
	p: BaseParts,
	kind: PartKind,
	parts: readonly string[],
	remove = false,
): Promise<string[]> {
	return registerHashes(p, kind, parts.map(partHash), remove);
}

/** The same, by the partitions' folder hashes. */
export async function registerHashes(
	p: BaseParts,
	kind: PartKind,
	hashes: readonly string[],
	remove = false,
): Promise<string[]> {
	const store = shards(p);
	const written = await inBatches([...byShard(hashes)], async ([shard, list]) => {
		const key = registryKey(p.baseId, shard, p.keyPrefix);
		const result = await store.update(key, (cur) => {
			const held = new Set(cur.doc[kind]);
			const before = held.size;
			for (const h of list) {
				if (remove) held.delete(h);
				else held.add(h);
			}
			if (held.size === before) return undefined;
			return { ...cur.doc, [kind]: [...held].sort(), updated_at: new Date().toISOString() };
		});
		return result.written ? [key] : [];
	});
	return written.flat();
}

/** Whether a partition of this kind was made (one read of its shard). */
export async function registered(p: BaseParts, kind: PartKind, part: string): Promise<boolean> {
	const hash = partHash(part);
	const { doc } = await shards(p).read(registryKey(p.baseId, hash.slice(0, 2), p.keyPrefix));
	return doc[kind].includes(hash);
}
