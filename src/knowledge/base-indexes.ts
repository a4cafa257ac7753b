// A base's word and vector indexes as its operations use them, whatever the layout (partitions.ts):
// writes go to the partition of each chunk (or to the single index of an older base), reads to the
// partitions a scope spans. A writer that finds the single index moved (an upgrade began after it
// read the layout) writes to the partitions instead; while a base moves, reads take both.
import { IndexMovedError } from '../errors';
import { lexicalStats, lexicalView, rankOver } from '../indexes';
import type {
	ChunkFilter,
	ClosedSource,
	EmbeddedIndex,
	LexicalIndex,
	IndexedChunk,
	LexicalManifest,
	LexicalStats,
	LexicalView,
	Listing,
	OpenSource,
	Touched,
	VectorRanking,
} from '../indexes';
import { lexicalPartsPrefix, vectorIndexPrefix, vectorPartsPrefix } from './keys';
import type { BaseParts } from './parts';
import {
	byPart,
	layoutKind,
	lexicalPartFolder,
	vectorPartFolder,
	partsOfFilter,
	partsOfSession,
	sessionPart,
	userPart,
} from './partitions';
import type { LayoutKind } from './partitions';
import type { MemoryBaseConfig } from './records';
import { PARALLEL } from './types';

/** Users listed per open source in a single index; past it, a search of any user reads the source. */
const SINGLE_USERS_MAX = 16;

/**
 * An open source as the capture logs list it: in the partition of each of its users, and in the
 * conversation's own when messages without a user came (`anon`).
 */
export type PartOpen = OpenSource & { anon?: boolean };

/** A closed source with the users (and `anon`) its opening was listed for: its partitions. */
export type PartClosed = ClosedSource & { users: readonly string[] | null; anon?: boolean };

/** What a lexical write lists and unlists beside the chunks it adds. */
export interface PartListing {
	open?: PartOpen[];
	closed?: PartClosed[];
}

/** Runs `fn` over items, PARALLEL at a time, results in order. */
async function each<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
	const out: R[] = [];
	for (let i = 0; i < items.length; i += PARALLEL)
		out.push(...(await Promise.all(items.slice(i, i + PARALLEL).map(fn))));
	return out;
}

/** The listing as a single index keeps it (open users capped: past it, any user reads the log). */
function singleListing(listing: PartListing): Listing {
	return {
		open: listing.open?.map(({ anon: _anon, ...o }) =>
			o.users !== null && o.users.length > SINGLE_USERS_MAX ? { ...o, users: null } : o,
		),
		closed: listing.closed?.map((c) => ({ session_id: c.session_id, gen: c.gen })),
	};
}

/** The listing per partition: each open source in the partition of each of its users. */
function partListings(listing: PartListing): Map<string, Listing> {
	const out = new Map<string, Listing>();
	const at = (part: string) => out.get(part) ?? out.set(part, { open: [], closed: [] }).get(part)!;
	for (const { anon, ...o } of listing.open ?? []) {
		for (const u of o.users ?? []) at(userPart(u)).open!.push({ ...o, users: [u] });
		if (anon) at(sessionPart(o.session_id)).open!.push({ ...o, users: [] });
	}
	for (const c of listing.closed ?? []) {
		const closed = { session_id: c.session_id, gen: c.gen };
		for (const u of c.users ?? []) at(userPart(u)).closed!.push(closed);
		if (c.anon) at(sessionPart(c.session_id)).closed!.push(closed);
	}
	return out;
}

export class BaseIndexes {
	private constructor(
		private readonly p: BaseParts,
		/** The layout as read; a writer that finds the single index moved goes on as "moving". */
		public kind: LayoutKind,
		readonly kbId: string,
	) {}

	/** The base's indexes, in the layout its configuration (read now unless given) says. */
	static async open(p: BaseParts, config?: MemoryBaseConfig | null): Promise<BaseIndexes> {
		const c = config === undefined ? await p.config() : config;
		return new BaseIndexes(p, layoutKind(c), await p.knowledgeBaseId(c));
	}

	/** The single word index of a base from before partitions. */
	single(): LexicalIndex {
		return this.p.lexical();
	}

	/** The single vector index of a base from before partitions. */
	singleVectors(): EmbeddedIndex {
		return this.p.index(this.kbId);
	}

	/** One partition's word index (`hash`: found by listing, its owner unknown). */
	lexicalPart(part: string, hash?: string): LexicalIndex {
		const folder = lexicalPartFolder(this.p.baseId, { part, hash }, this.p.keyPrefix);
		return this.p.lexical(folder, hash === undefined ? part : undefined);
	}

	/** One partition's vector index (`hash`: found by listing, its owner unknown). */
	vectorPart(part: string, hash?: string): EmbeddedIndex {
		const folder = vectorPartFolder(this.kbId, { part, hash }, this.p.keyPrefix);
		const owner = hash === undefined ? part : undefined;
		// One cache cap for all the partitions of a knowledge base.
		const cacheGroup = vectorIndexPrefix(this.kbId, this.p.keyPrefix);
		return this.p.index(this.kbId, { folder, owner, cacheGroup });
	}

	/** Runs a write on the single index; false when it was moved (the write then goes to the partitions). */
	private async onSingle(write: () => Promise<unknown>): Promise<boolean> {
		if (this.kind !== 'single') return false;
		try {
			await write();
			return true;
		} catch (error) {
			if (!(error instanceof IndexMovedError)) throw error;
			this.kind = 'moving';
			return false;
		}
	}

	/**
	 * Adds chunks to the word index with what `listing` lists and unlists; returns the manifests
	 * written (a capture folds the longest listed logs of one that lists too many).
	 */
	async addLexical(chunks: IndexedChunk[], listing: PartListing = {}): Promise<LexicalManifest[]> {
		const out: LexicalManifest[] = [];
		const single = () =>
			this.single()
				.add(chunks, singleListing(listing))
				.then((m) => out.push(m.doc));
		if (await this.onSingle(single)) return out;
		const groups = byPart(chunks);
		const listings = partListings(listing);
		const parts = [...new Set([...groups.keys(), ...listings.keys()])];
		const written = await each(parts, (part) =>
			this.lexicalPart(part).add(groups.get(part) ?? [], listings.get(part)),
		);
		return written.map((m) => m.doc);
	}

	/** Adds chunks with their vectors (rows in the same order) to the vector index. */
	async addVectors(chunks: IndexedChunk[], rows: number[][]): Promise<void> {
		if (await this.onSingle(() => this.singleVectors().add(chunks, rows))) return;
		const at = new Map(chunks.map((c, i) => [c, i]));
		for (const [part, group] of byPart(chunks))
			await this.vectorPart(part).add(
				group,
				group.map((c) => rows[at.get(c)!]),
			);
	}

	/** Every partition there is, by folder hash (one listing of each partitions folder). */
	private async partHashes(kind: 'lexical' | 'vector'): Promise<string[]> {
		const prefix =
			kind === 'lexical'
				? lexicalPartsPrefix(this.p.baseId, this.p.keyPrefix)
				: vectorPartsPrefix(this.kbId, this.p.keyPrefix);
		const file = kind === 'lexical' ? 'lexical/manifest.json' : 'index/manifest.json';
		const hashes = new Set<string>();
		for (const o of await this.p.storage.list(prefix)) {
			const m = /^[0-9a-f]{2}\/([0-9a-f]{32})\/(.+)$/.exec(o.key.slice(prefix.length));
			if (m && m[2] === file) hashes.add(m[1]);
		}
		return [...hashes].sort();
	}

	/** The word indexes a scope reads (`users`: its conversation's users), oldest first. */
	async lexicalFor(filter: ChunkFilter, users: readonly string[] = []): Promise<LexicalIndex[]> {
		if (this.kind === 'single') return [this.single()];
		const parts = partsOfFilter(filter, users);
		const indexes = parts
			? parts.map((part) => this.lexicalPart(part))
			: (await this.partHashes('lexical')).map((h) => this.lexicalPart('', h));
		return this.kind === 'moving' ? [this.single(), ...indexes] : indexes;
	}

	/** The vector indexes a scope reads, oldest first. */
	async vectorsFor(filter: ChunkFilter, users: readonly string[] = []): Promise<EmbeddedIndex[]> {
		if (this.kind === 'single') return [this.singleVectors()];
		const parts = partsOfFilter(filter, users);
		const indexes = parts
			? parts.map((part) => this.vectorPart(part))
			: (await this.partHashes('vector')).map((h) => this.vectorPart('', h));
		return this.kind === 'moving' ? [this.singleVectors(), ...indexes] : indexes;
	}

	/** The word indexes in scope as one search sees them. */
	async view(filter: ChunkFilter, users: readonly string[] = []): Promise<LexicalView> {
		return lexicalView(await this.lexicalFor(filter, users), filter);
	}

	/** The exact cosine ranking over the vector indexes in scope. */
	async ranking(
		query: unknown,
		k: number,
		filter: ChunkFilter,
		users: readonly string[] = [],
	): Promise<VectorRanking> {
		return rankOver(await this.vectorsFor(filter, users), query, k, filter);
	}

	/** What every word index of the base holds together. */
	async lexicalStats(): Promise<LexicalStats> {
		return lexicalStats(await this.lexicalFor({}));
	}

	/**
	 * Removes one conversation's chunks from the word indexes of its partitions (or only those `only`
	 * picks), and unlists it from them; returns the chunks removed.
	 */
	async forgetLexical(
		sessionId: string,
		users: readonly string[],
		only?: (d: IndexedChunk) => boolean,
		touched?: Touched,
	): Promise<number> {
		// The single index too, whatever the layout: an upgrade that stopped half-way may have left its
		// chunks there, and what is forgotten must go from everywhere.
		const parts = this.kind === 'single' ? [] : partsOfSession(sessionId, users);
		const indexes = [this.single(), ...parts.map((part) => this.lexicalPart(part))];
		const removed = await each(indexes, (i) => i.forgetSession(sessionId, only, touched));
		return removed.reduce((a, b) => a + b, 0);
	}

	/** Removes one conversation's vectors from its partitions; sweeps their orphans. */
	async forgetVectors(
		sessionId: string,
		users: readonly string[],
		touched?: Touched,
		sweepOlderThanMs?: number,
	): Promise<number> {
		const parts = this.kind === 'single' ? [] : partsOfSession(sessionId, users);
		const indexes = [this.singleVectors(), ...parts.map((part) => this.vectorPart(part))];
		let removed = 0;
		for (const index of indexes) {
			removed += await index.forgetSession(sessionId, this.p.maxAttempts, touched);
			if (sweepOlderThanMs !== undefined)
				touched?.deleted.push(...(await index.sweepOrphans(sweepOlderThanMs)));
		}
		return removed;
	}

	/** Every word index of the base (single first while moving). */
	async allLexical(): Promise<LexicalIndex[]> {
		return this.lexicalFor({});
	}

	/** Every vector index of the base (single first while moving). */
	async allVectors(): Promise<EmbeddedIndex[]> {
		return this.vectorsFor({});
	}
}
