// Before a search answers: are the indexes it reads there, and do they hold what the capture logs say
// they should? A search of a missing or lagging index would return too little without saying so.
import { IndexMismatchError } from '../errors';
import type { ChunkFilter, VectorManifest } from '../indexes';
import type { Versioned } from '../store/document-store';
import { listedPages } from '../store/storage';
import type { BaseIndexes } from './base-indexes';
import { memoryBaseSessionsPrefix } from './keys';
import type { BaseParts } from './parts';
import { metadataOf } from './read-ahead';
import { lexicalPartFolder, userPart, vectorPartFolder } from './partitions';
import { registered } from './registry';
import type { PartKind } from './registry';
import { vectorsElsewhere } from './settings';
import type { KnowledgeBaseMetadata, MemoryBaseConfig, SessionLog } from './records';
import type { SearchMode } from './types';

/** Where a partition's index is kept (for errors). */
function partitionPath(p: BaseParts, kbId: string, kind: PartKind, part: string): string {
	return kind === 'lexical'
		? lexicalPartFolder(p.baseId, { part }, p.keyPrefix)
		: vectorPartFolder(kbId, { part }, p.keyPrefix);
}

/** Throws IndexMismatchError when an index the search needs is missing or behind its capture log. */
export async function checkIndexes(
	p: BaseParts,
	config: MemoryBaseConfig | null,
	indexes: BaseIndexes,
	mode: SearchMode,
	filter: ChunkFilter,
	users: string[],
): Promise<void> {
	const kbId = indexes.kbId;
	const single = indexes.kind === 'single';
	if (!config) return; // nothing was ever captured: an empty answer is the truth
	const lexicalNeeded = mode !== 'vector';
	const vectorsNeeded = mode !== 'lexical';
	const vectorNeeded = vectorsNeeded && !p.options.vectorStore;
	if (lexicalNeeded && config.lexical_since === undefined)
		throw new IndexMismatchError(
			p.baseId,
			'it was created before captures went into a lexical index, so that index does not hold its older captures',
		);
	// Independent reads, side by side: a search waits for one round of them, not four. The manifests
	// are the search's own reads (SearchReads): the rankings use the same ones.
	const [session, lexical, meta, manifests] = await Promise.all([
		filter.sessionId === undefined ? undefined : p.logs.read(p.logKey(filter.sessionId)),
		// A partitioned base has no index of its own: a partition is there once it holds something.
		lexicalNeeded ? lexicalManifests(p, indexes, filter, users) : undefined,
		vectorsNeeded ? metadataOf(p, indexes) : undefined,
		vectorNeeded ? manifestsOf(indexes, filter, users) : undefined,
	]);
	if (lexical && lexicalMissing(lexical, single, filter, session?.doc))
		throw new IndexMismatchError(p.baseId, 'its lexical index is missing');
	if (!single && filter.userId !== undefined)
		await refuseLostPartition(p, kbId, filter.userId, lexical, manifests);
	if (meta?.version != null && meta.doc.dimensions !== null)
		if (meta.doc.vector_store !== p.vectorStoreKind)
			throw vectorsElsewhere(p, meta.doc.vector_store);
	if (!meta || !manifests) return;
	const refilling = config.wide?.refill !== undefined;
	checkVectors(p, { single, filter, manifests, log: session?.doc, refilling }, meta);
}

/** The vector side: an index gone, or a conversation's processed messages nowhere in it. */
function checkVectors(
	p: BaseParts,
	read: {
		single: boolean;
		filter: ChunkFilter;
		manifests: Array<Versioned<VectorManifest>>;
		log: SessionLog | undefined;
		/** Regenerate refills the base-wide index: its vectors come at the end (refill.ts). */
		refilling: boolean;
	},
	meta: Versioned<KnowledgeBaseMetadata>,
): void {
	const { single, filter, manifests, log } = read;
	const ingested = meta.version !== null && meta.doc.dimensions !== null;
	// The base's one index, or (a search of every user) every partition: gone while metadata says
	// something was embedded. A user's partition may be absent because the user has nothing yet.
	const everything =
		single || (filter.userId === undefined && filter.sessionId === undefined && !read.refilling);
	if (everything && ingested && manifests.every((m) => m.version === null))
		throw new IndexMismatchError(
			p.baseId,
			'metadata says messages were embedded, but the vector index is missing',
		);
	// A user's search in a conversation of several users reads only that user's partition, which
	// need not hold any of the conversation's processed messages.
	const whole = single || filter.userId === undefined || sameUsers(log?.users, filter.userId);
	if (!log || log.total_processed === 0 || !whole) return;
	const said = `conversation "${log.session_id}" has ${log.total_processed} message(s) marked indexed, but the vector index`;
	if (manifests.every((m) => m.version === null))
		throw new IndexMismatchError(p.baseId, `${said} is missing`);
	const listed = manifests.some(
		(m) => m.version !== null && m.doc.segments.some((s) => s.sessions.includes(log.session_id)),
	);
	if (!listed) throw new IndexMismatchError(p.baseId, `${said} holds none of them`);
}

/**
 * The lexical manifests a search reads, to tell a missing index from an empty one: the base's one
 * index; a conversation's partitions; for every user, none when partitions are listed, or one
 * missing when none is although a conversation has a log. A user's partition is absent until the
 * user's first capture, so nothing can say it should be there: undefined.
 */
async function lexicalManifests(
	p: BaseParts,
	indexes: BaseIndexes,
	filter: ChunkFilter,
	users: string[],
): Promise<Array<{ version: unknown }> | undefined> {
	if (indexes.kind === 'single') return [await indexes.single().readManifest()];
	if (filter.userId !== undefined)
		return Promise.all((await indexes.lexicalFor(filter, users)).map((i) => i.readManifest()));
	// The base-wide index is made with the base (or by its upgrade): gone, it is lost.
	if (filter.sessionId === undefined && indexes.wide === 'ready')
		return [await indexes.wideLexical().readManifest()];
	if (filter.sessionId !== undefined)
		return Promise.all((await indexes.lexicalFor(filter, users)).map((i) => i.readManifest()));
	if ((await indexes.lexicalFor(filter, users)).length > 0) return undefined;
	// Stops at the first page holding a log.
	for await (const page of listedPages(p.storage, memoryBaseSessionsPrefix(p.baseId, p.keyPrefix)))
		if (page.some((o) => o.key.endsWith('/log.json'))) return [{ version: null }];
	return undefined;
}

/**
 * Whether an index the search needs is gone: the base's one index; for a conversation that has
 * captured messages, every partition its messages went to; for every user, all of them.
 */
function lexicalMissing(
	manifests: Array<{ version: unknown }>,
	single: boolean,
	filter: ChunkFilter,
	log: SessionLog | undefined,
): boolean {
	// A user's partition absent: refuseLostPartition tells a lost one from a user with nothing yet.
	if (!single && filter.userId !== undefined && filter.sessionId === undefined) return false;
	if (single || filter.sessionId === undefined) return manifests.every((m) => m.version === null);
	if (!log || log.next_seq <= 1) return false;
	return manifests.every((m) => m.version === null);
}

/** The vector manifests a search reads. */
async function manifestsOf(indexes: BaseIndexes, filter: ChunkFilter, users: string[]) {
	return Promise.all((await indexes.vectorsFor(filter, users)).map((i) => i.readManifest()));
}

/** Whether a conversation's users are exactly this one (a log from before it kept them: unknown, no). */
function sameUsers(users: string[] | undefined, userId: string): boolean {
	return users !== undefined && users.length === 1 && users[0] === userId;
}

/**
 * A user's search whose partition (word or vector index) is not there: an error naming it when the
 * base made it (registry.ts), since the user's memories are lost, not absent; nothing otherwise (a
 * user with nothing captured yet, or nothing embedded yet).
 */
async function refuseLostPartition(
	p: BaseParts,
	kbId: string,
	userId: string,
	lexical: Array<{ version: unknown }> | undefined,
	vectors: Array<{ version: unknown }> | undefined,
): Promise<void> {
	const part = userPart(userId);
	const gone: PartKind[] = [
		...(lexical?.some((m) => m.version === null) ? (['lexical'] as const) : []),
		...(vectors?.some((m) => m.version === null) ? (['vector'] as const) : []),
	];
	for (const kind of gone)
		if (await registered(p, kind, part))
			throw new IndexMismatchError(
				p.baseId,
				`the ${kind === 'lexical' ? 'word' : 'vector'} index partition of user "${userId}" (${partitionPath(p, kbId, kind, part)}) is missing, although the base made it`,
			);
}
