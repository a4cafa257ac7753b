// A base's word and vector indexes as its operations use them, whatever the layout (partitions.ts):
// writes go to the partition of each chunk (or to the single index of an older base) and to the
// base-wide index beside the partitions; reads go to the partitions a scope spans, and a search of
// every conversation to the base-wide index. A writer that finds the single index moved (an upgrade
// began after it read the layout) writes to the partitions instead; while a base moves, reads take
// both. A writer that read the configuration before the base-wide index was begun looks again after
// its write and, finding it begun, writes there too (upgrade.ts copies what the partitions held).
import { IndexMovedError } from '../errors';
import { forEachKey } from '../store/storage';
import { lexicalStats, lexicalView, rankOver, streamedRanking, streamedView } from '../indexes';
import type { SearchReads } from '../indexes';
import type {
	ChunkFilter,
	EmbeddedIndex,
	LexicalIndex,
	IndexedChunk,
	LexicalManifest,
	LexicalStats,
	LexicalView,
	Touched,
	VectorRanking,
} from '../indexes';
import {
	lexicalPartsPrefix,
	vectorIndexPrefix,
	vectorPartsPrefix,
	wideLexicalPrefix,
	wideVectorPrefix,
} from './keys';
import type { BaseParts } from './parts';
import {
	byPart,
	layoutKind,
	lexicalPartFolder,
	vectorPartFolder,
	partsOfFilter,
	partsOfSession,
	wideState,
} from './partitions';
import type { LayoutKind, WideState } from './partitions';
import { addCarrying } from './closings';
import { partListings, singleListing } from './listings';
import type { PartListing } from './listings';
import type { MemoryBaseConfig } from './records';
import { register } from './registry';
import type { PartKind } from './registry';
import { inBatches } from './types';

/** The owner the base-wide manifests name (no partition's: theirs are "u:…" and "s:…"). */
export const WIDE_OWNER = '*';
/** Chunks per base-wide word-index segment at most: a search reads them one after another. */
export const WIDE_SEGMENT_CHUNKS = 4096;
/**
 * …and its vector segments about this many bytes at most, whatever the dimensions (8,192 vectors of
 * 1,536 dimensions would be 50 MB, read whole by every search of every conversation).
 */
export const WIDE_SEGMENT_BYTES = 4 * 2 ** 20;

/**
 * Unlisted parts a Forget sweeps: those older than `olderThanMs`, in the base-wide indexes too unless
 * `wide` is false (listing them takes seconds on a large base; Forget User sweeps them once per base).
 */
export interface OrphanSweep {
	olderThanMs: number;
	wide: boolean;
}

/** Sweeps an index's orphans as `sweep` asks (a base-wide index only when it says so). */
async function swept(
	index: { sweepOrphans(olderThanMs: number): Promise<string[]> },
	isWide: boolean,
	sweep: OrphanSweep | undefined,
	touched: Touched | undefined,
): Promise<void> {
	if (sweep && (sweep.wide || !isWide))
		touched?.deleted.push(...(await index.sweepOrphans(sweep.olderThanMs)));
}

export class BaseIndexes {
	private constructor(
		private readonly p: BaseParts,
		/** The layout as read; a writer that finds the single index moved goes on as "moving". */
		public kind: LayoutKind,
		readonly kbId: string,
		/** The base-wide index as read; a writer that finds it begun since goes on as such. */
		public wide: WideState,
		/** The reads of the search these indexes are opened for. */
		readonly reads?: SearchReads,
	) {}

	/** Writes that skip the base-wide index: Regenerate refills it once at the end (refill.ts). */
	readonly deferred = new Set<'lexical' | 'vector'>();

	/** The base's indexes, in the layout its configuration (read now unless given) says. */
	static async open(
		p: BaseParts,
		config?: MemoryBaseConfig | null,
		reads?: SearchReads,
	): Promise<BaseIndexes> {
		const c = config === undefined ? await p.config() : config;
		return new BaseIndexes(p, layoutKind(c), await p.knowledgeBaseId(c), wideState(c), reads);
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
		const owner = hash === undefined ? part : undefined;
		return this.p.lexical(folder, { owner, reads: this.reads });
	}

	/** One partition's vector index (`hash`: found by listing, its owner unknown). */
	vectorPart(part: string, hash?: string): EmbeddedIndex {
		const folder = vectorPartFolder(this.kbId, { part, hash }, this.p.keyPrefix);
		const owner = hash === undefined ? part : undefined;
		return this.p.index(this.kbId, {
			folder,
			owner,
			cacheGroup: this.cacheGroup,
			reads: this.reads,
		});
	}

	/** The base-wide word index: every conversation's chunks, and its logs not yet folded. */
	wideLexical(): LexicalIndex {
		const folder = wideLexicalPrefix(this.p.baseId, this.p.keyPrefix);
		return this.p.lexical(folder, {
			owner: WIDE_OWNER,
			reads: this.reads,
			segmentChunks: WIDE_SEGMENT_CHUNKS,
			tiers: true,
		});
	}

	/** The base-wide vector index: every conversation's vectors. */
	wideVectors(): EmbeddedIndex {
		const folder = wideVectorPrefix(this.kbId, this.p.keyPrefix);
		const at = {
			folder,
			owner: WIDE_OWNER,
			cacheGroup: this.cacheGroup,
			reads: this.reads,
			segmentBytes: WIDE_SEGMENT_BYTES,
			tiers: true,
		};
		return this.p.index(this.kbId, at);
	}

	/** One cache cap for every vector index of a knowledge base (its partitions, the base-wide one). */
	private get cacheGroup(): string {
		return vectorIndexPrefix(this.kbId, this.p.keyPrefix);
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
	 * After a write to the partitions by a writer that read no base-wide index: whether one was begun
	 * since (the configuration read again). If so, the write goes there too: the upgrade that begins it
	 * copies the partitions after it says so, and may have read this partition before the write.
	 */
	/** Whether a write of `kind` goes to the base-wide index now (a Regenerate's refill defers it). */
	private takesWide(kind: 'lexical' | 'vector'): boolean {
		return this.wide !== 'none' && !this.deferred.has(kind);
	}

	private async wideBegunSince(kind: 'lexical' | 'vector'): Promise<boolean> {
		if (this.wide !== 'none' || this.deferred.has(kind)) return false;
		const config = await this.p.config();
		this.wide = config === null ? 'none' : wideState(config);
		return this.wide !== 'none';
	}

	/** Registers the partitions a write created (registry.ts). */
	private async made(kind: PartKind, parts: string[], created: boolean[]): Promise<void> {
		const fresh = parts.filter((_, i) => created[i]);
		if (fresh.length > 0) await register(this.p, kind, fresh);
	}

	/**
	 * Adds chunks to the word index with what `listing` lists and unlists; returns the manifests
	 * written (a capture folds the longest listed logs of one that lists too many).
	 */
	async addLexical(chunks: IndexedChunk[], listing: PartListing = {}): Promise<LexicalManifest[]> {
		const out: LexicalManifest[] = [];
		// The index of every conversation also unlists the logs this process's syncs closed.
		const many = (index: LexicalIndex) =>
			addCarrying(this.p, index, chunks, singleListing(listing));
		const single = () => many(this.single()).then((m) => out.push(m.doc));
		if (await this.onSingle(single)) return out;
		const groups = byPart(chunks);
		const listings = partListings(listing);
		const parts = [...new Set([...groups.keys(), ...listings.keys()])];
		const wide = () => many(this.wideLexical());
		const [written, alongside] = await Promise.all([
			inBatches(parts, (part) =>
				this.lexicalPart(part).add(groups.get(part) ?? [], listings.get(part)),
			),
			this.takesWide('lexical') ? wide() : undefined,
		]);
		await this.made(
			'lexical',
			parts,
			written.map((w) => w.created),
		);
		const late = alongside ?? ((await this.wideBegunSince('lexical')) ? await wide() : undefined);
		return [...written.map((m) => m.doc), ...(late ? [late.doc] : [])];
	}

	/** Adds chunks with their vectors (rows in the same order) to the vector index. */
	async addVectors(chunks: IndexedChunk[], rows: number[][]): Promise<void> {
		if (await this.onSingle(() => this.singleVectors().add(chunks, rows))) return;
		const at = new Map(chunks.map((c, i) => [c, i]));
		const parts: string[] = [];
		const created: boolean[] = [];
		for (const [part, group] of byPart(chunks)) {
			const added = await this.vectorPart(part).add(
				group,
				group.map((c) => rows[at.get(c)!]),
			);
			parts.push(part);
			created.push(added.created);
		}
		await this.made('vector', parts, created);
		// After the partitions: a retry (same chunk IDs) adds again what a failure left out here.
		if (this.takesWide('vector') || (await this.wideBegunSince('vector')))
			await this.wideVectors().add(chunks, rows);
	}

	/** Every partition there is, by folder hash (one listing of each partitions folder). */
	async partHashes(kind: PartKind): Promise<string[]> {
		const prefix =
			kind === 'lexical'
				? lexicalPartsPrefix(this.p.baseId, this.p.keyPrefix)
				: vectorPartsPrefix(this.kbId, this.p.keyPrefix);
		const file = kind === 'lexical' ? 'lexical/manifest.json' : 'index/manifest.json';
		const hashes = new Set<string>();
		// Keys alone, page by page: a partition's folder holds many segments, and only its hash is kept.
		await forEachKey(this.p.storage, prefix, (key) => {
			const m = /^[0-9a-f]{2}\/([0-9a-f]{32})\/(.+)$/.exec(key.slice(prefix.length));
			if (m && m[2] === file) hashes.add(m[1]);
		});
		return [...hashes].sort();
	}

	/**
	 * The word indexes a scope reads (`users`: its conversation's users), oldest first: a user's or a
	 * conversation's partitions, or for every conversation the base-wide index (every partition while
	 * it is not ready).
	 */
	async lexicalFor(filter: ChunkFilter, users: readonly string[] = []): Promise<LexicalIndex[]> {
		if (this.kind === 'single') return [this.single()];
		const parts = partsOfFilter(filter, users);
		if (parts === null && this.wide === 'ready') return [this.wideLexical()];
		const indexes = parts
			? parts.map((part) => this.lexicalPart(part))
			: (await this.partHashes('lexical')).map((h) => this.lexicalPart('', h));
		return this.kind === 'moving' ? [this.single(), ...indexes] : indexes;
	}

	/** The vector indexes a scope reads, oldest first (as lexicalFor). */
	async vectorsFor(filter: ChunkFilter, users: readonly string[] = []): Promise<EmbeddedIndex[]> {
		if (this.kind === 'single') return [this.singleVectors()];
		const parts = partsOfFilter(filter, users);
		if (parts === null && this.wide === 'ready') return [this.wideVectors()];
		const indexes = parts
			? parts.map((part) => this.vectorPart(part))
			: (await this.partHashes('vector')).map((h) => this.vectorPart('', h));
		return this.kind === 'moving' ? [this.singleVectors(), ...indexes] : indexes;
	}

	/**
	 * The word indexes in scope as one search sees them: loaded, or for every conversation the
	 * base-wide index read one segment after another (it may not fit in memory).
	 */
	async view(filter: ChunkFilter, users: readonly string[] = []): Promise<LexicalView> {
		const indexes = await this.lexicalFor(filter, users);
		const wide = this.wideLexical().manifestKey;
		if (indexes.length === 1 && indexes[0].manifestKey === wide)
			return streamedView(indexes[0], filter);
		return lexicalView(indexes, filter);
	}

	/**
	 * The exact cosine ranking over the vector indexes in scope (the base-wide one read as view, which
	 * scores the chunks `wanted` gives on its one pass: see streamedRanking).
	 */
	async ranking(
		query: unknown,
		k: number,
		filter: ChunkFilter,
		users: readonly string[] = [],
		wanted?: Promise<Map<string, Set<number>> | undefined>,
	): Promise<VectorRanking> {
		const indexes = await this.vectorsFor(filter, users);
		const wide = this.wideVectors().manifestKey;
		if (indexes.length === 1 && indexes[0].manifestKey === wide)
			return streamedRanking(indexes[0], query, k, filter, wanted);
		return rankOver(indexes, query, k, filter);
	}

	/** What the word indexes of every conversation hold together. */
	async lexicalStats(): Promise<LexicalStats> {
		return lexicalStats(await this.lexicalFor({}));
	}

	/** The indexes that hold a conversation's chunks: the single one, its partitions, the base-wide one. */
	private holding<T>(
		sessionId: string,
		users: readonly string[],
		single: T,
		part: (part: string) => T,
		wide: () => T,
	): T[] {
		// The single index whatever the layout: an upgrade that stopped half-way may have left chunks
		// there, and what is forgotten must go from everywhere.
		const parts = this.kind === 'single' ? [] : partsOfSession(sessionId, users);
		return [single, ...parts.map(part), ...(this.wide !== 'none' ? [wide()] : [])];
	}

	/**
	 * Removes one conversation's chunks from the word indexes that hold them (or only those `only`
	 * picks), and unlists it from them; returns the chunks removed from its partitions. Given `sweep`,
	 * sweeps their orphans too (a killed writer's segments may hold its words).
	 */
	async forgetLexical(
		sessionId: string,
		users: readonly string[],
		only?: (d: IndexedChunk) => boolean,
		touched?: Touched,
		sweep?: OrphanSweep,
	): Promise<number> {
		const indexes = this.holding(
			sessionId,
			users,
			this.single(),
			(part) => this.lexicalPart(part),
			() => this.wideLexical(),
		);
		const wideIndex = this.wide !== 'none' ? indexes.at(-1) : undefined;
		const removed = await inBatches(indexes, async (i) => {
			const n = await i.forgetSession(sessionId, only, touched);
			await swept(i, i === wideIndex, sweep, touched);
			return n;
		});
		// The base-wide copy counts once with them (it is the last index).
		const wide = this.wide !== 'none' ? (removed.pop() ?? 0) : 0;
		const parts = removed.reduce((a, b) => a + b, 0);
		return parts === 0 ? wide : parts;
	}

	/** Removes one conversation's vectors from the indexes that hold them; given `sweep`, sweeps their orphans. */
	async forgetVectors(
		sessionId: string,
		users: readonly string[],
		touched?: Touched,
		sweep?: OrphanSweep,
	): Promise<number> {
		const indexes = this.holding(
			sessionId,
			users,
			this.singleVectors(),
			(part) => this.vectorPart(part),
			() => this.wideVectors(),
		);
		let removed = 0;
		let wide = 0;
		for (const [n, index] of indexes.entries()) {
			const gone = await index.forgetSession(sessionId, this.p.maxAttempts, touched);
			const isWide = this.wide !== 'none' && n === indexes.length - 1;
			if (isWide) wide = gone;
			else removed += gone;
			await swept(index, isWide, sweep, touched);
		}
		return removed === 0 ? wide : removed;
	}

	/** The word indexes a user's or conversation's search may read: the single one (while it holds chunks), the partitions. */
	async partsLexical(): Promise<LexicalIndex[]> {
		const parts = (await this.partHashes('lexical')).map((h) => this.lexicalPart('', h));
		return [...(this.kind !== 'partitioned' ? [this.single()] : []), ...parts];
	}

	/** The vector indexes a user's or conversation's search may read (as partsLexical). */
	async partsVectors(): Promise<EmbeddedIndex[]> {
		const parts = (await this.partHashes('vector')).map((h) => this.vectorPart('', h));
		return [...(this.kind !== 'partitioned' ? [this.singleVectors()] : []), ...parts];
	}

	/** Every word index of the base: partsLexical and the base-wide one. */
	async allLexical(): Promise<LexicalIndex[]> {
		return [...(await this.partsLexical()), ...(this.wide !== 'none' ? [this.wideLexical()] : [])];
	}

	/** Every vector index of the base: partsVectors and the base-wide one. */
	async allVectors(): Promise<EmbeddedIndex[]> {
		return [...(await this.partsVectors()), ...(this.wide !== 'none' ? [this.wideVectors()] : [])];
	}
}
