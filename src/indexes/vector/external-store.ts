// A connected vector store (n8n's vector store sub-nodes hand over a LangChain VectorStore) used instead
// of the embedded index. Duck-typed: no LangChain import. Vectors come from the memory base's own
// embedding model (addVectors, similaritySearchVectorWithScore), so both kinds of index behave alike:
// every vector is handed over at unit length, and each store's score is read back as a cosine.
import { EmbeddingError, InvalidOptionError } from '../../errors';
import type { IndexedChunk } from '../chunks/chunk';
import type { VectorMatch } from './vector-segment';

/** A LangChain Document as vector stores take and return it. */
export interface ExternalDocument {
	pageContent: string;
	metadata: Record<string, unknown>;
	id?: string;
}

/** What the memory base uses of a LangChain VectorStore; each method is optional and checked when used. */
export interface ExternalVectorStore {
	addVectors?(
		vectors: number[][],
		documents: ExternalDocument[],
		options?: { ids?: string[] },
	): Promise<unknown>;
	similaritySearchVectorWithScore?(
		query: number[],
		k: number,
		filter?: unknown,
	): Promise<Array<[ExternalDocument, number]>>;
	delete?(params: { ids: string[] }): Promise<unknown>;
	/** LangChain's MemoryVectorStore keeps its vectors here (it has no delete). */
	memoryVectors?: Array<{ id?: string; metadata?: Record<string, unknown> }>;
	_vectorstoreType?(): string;
	/** PGVector: the distance its search orders by ('cosine', 'innerProduct', 'euclidean'). */
	distanceStrategy?: string;
	/** PGVector (newer LangChain): 'distance' (the default) or a similarity its score is turned into. */
	scoreNormalization?: string;
}

/** Which chunks a search asks the store for: this base's, of one conversation or one user. */
export interface ExternalScope {
	sessionId?: string;
	userId?: string;
}

export function isExternalVectorStore(value: unknown): value is ExternalVectorStore {
	const s = value as ExternalVectorStore;
	return (
		typeof s === 'object' &&
		s !== null &&
		typeof s.addVectors === 'function' &&
		typeof s.similaritySearchVectorWithScore === 'function'
	);
}

/** How many more results to ask an external store for, since the base's own filter is applied afterwards. */
const OVERFETCH = 4;

/** The vector at unit length (a zero vector as it is): cosine, inner product and distance then agree. */
function unit(vector: number[]): number[] {
	let sum = 0;
	for (const x of vector) sum += x * x;
	const norm = Math.sqrt(sum);
	return norm > 0 ? vector.map((x) => x / norm) : vector;
}

/**
 * A store's score of a match as the cosine similarity of two unit vectors. LangChain leaves the score's
 * meaning to each store: its MemoryVectorStore gives the cosine; PGVector gives pgvector's distance by
 * default (cosine distance 1 − cos, the negative inner product, or the Euclidean distance √(2 − 2 cos)),
 * or, with scoreNormalization, (1 + cos) / 2, −distance or 1 / (1 + distance). Other stores' scores are
 * taken as given (higher is closer): what Qdrant, Pinecone and Supabase return for cosine collections.
 */
export function cosineOf(store: ExternalVectorStore, score: number): number {
	if (store._vectorstoreType?.() !== 'pgvector') return score;
	const strategy = store.distanceStrategy ?? 'cosine';
	const normalised =
		store.scoreNormalization !== undefined && store.scoreNormalization !== 'distance';
	if (strategy === 'innerProduct') return normalised ? score : -score;
	if (strategy === 'euclidean') {
		const distance = normalised ? 1 / score - 1 : score;
		return 1 - (distance * distance) / 2;
	}
	return normalised ? 2 * score - 1 : 1 - score;
}

/** The chunks of one memory base in an external vector store. */
export class ExternalIndex {
	constructor(
		readonly store: ExternalVectorStore,
		readonly baseId: string,
	) {
		if (!isExternalVectorStore(store))
			throw new InvalidOptionError(
				'vectorStore',
				'the connected vector store has no addVectors and similaritySearchVectorWithScore',
			);
	}

	private isMemoryStore(): boolean {
		return Array.isArray(this.store.memoryVectors);
	}

	/**
	 * Removes chunks by ID where the store can: `delete({ ids })`, or LangChain's MemoryVectorStore's
	 * list. Returns false for a store that can do neither (then a re-ingested chunk may appear twice);
	 * with `strict`, a store whose delete failed (a database role without DELETE, a server that is
	 * down) throws its error instead of answering false.
	 */
	async remove(ids: string[], options: { strict?: boolean } = {}): Promise<boolean> {
		if (ids.length === 0) return true;
		if (this.isMemoryStore()) {
			const drop = new Set(ids);
			this.store.memoryVectors = (this.store.memoryVectors ?? []).filter(
				(v) => v.id === undefined || !drop.has(v.id),
			);
			return true;
		}
		if (typeof this.store.delete !== 'function') return false;
		try {
			await this.store.delete({ ids });
			return true;
		} catch (error) {
			// LangChain's base class answers "Not implemented" for stores without deletes; a store whose
			// delete takes other parameters (Zep: { uuids }) fails on ours.
			if (!options.strict || cannotDelete(error)) return false;
			throw new InvalidOptionError(
				'vectorStore',
				`the connected vector store failed to delete: ${(error as Error)?.message ?? String(error)}`,
			);
		}
	}

	/** Replaces the chunks (same IDs: an idempotent upsert where the store can delete) and adds their vectors. */
	async add(chunks: IndexedChunk[], vectors: number[][]): Promise<void> {
		if (chunks.length === 0) return;
		if (vectors.length !== chunks.length)
			throw new EmbeddingError(`expected ${chunks.length} vectors, got ${vectors.length}`);
		const ids = chunks.map((c) => c.id);
		await this.remove(ids);
		const documents: ExternalDocument[] = chunks.map((c) => ({
			pageContent: c.text,
			id: c.id,
			metadata: {
				memory_base_id: this.baseId,
				chunk_id: c.id,
				session_id: c.session_id,
				...(c.user_id !== undefined ? { user_id: c.user_id } : {}),
				...(c.role !== undefined ? { role: c.role } : {}),
				message_id: c.message_id,
				seq: c.seq,
				run_id: c.run_id,
				chunk_index: c.chunk_index,
				created_at: c.created_at,
			},
		}));
		await this.store.addVectors!(vectors.map(unit), documents, { ids });
	}

	/** A filter the store understands: a function for LangChain's MemoryVectorStore, metadata equality otherwise. */
	private filter(scope: ExternalScope): unknown {
		const { sessionId, userId } = scope;
		if (this.isMemoryStore() || this.store._vectorstoreType?.() === 'memory')
			return (doc: ExternalDocument) =>
				doc.metadata?.memory_base_id === this.baseId &&
				(sessionId === undefined || doc.metadata?.session_id === sessionId) &&
				(userId === undefined || doc.metadata?.user_id === userId);
		const equal = {
			memory_base_id: this.baseId,
			...(sessionId !== undefined ? { session_id: sessionId } : {}),
			...(userId !== undefined ? { user_id: userId } : {}),
		};
		// Qdrant's API refuses any filter but its own conditions; LangChain keeps the metadata under
		// the payload's `metadata` key.
		if (this.store._vectorstoreType?.() === 'qdrant')
			return {
				must: Object.entries(equal).map(([key, value]) => ({
					key: `metadata.${key}`,
					match: { value },
				})),
			};
		return equal;
	}

	/** The `k` chunks of this base in scope nearest to `query`, best first, each scored by its cosine. */
	async search(query: number[], k: number, scope: ExternalScope = {}): Promise<VectorMatch[]> {
		const found = await this.store.similaritySearchVectorWithScore!(
			unit(query),
			k * OVERFETCH,
			this.filter(scope),
		);
		const matches: VectorMatch[] = [];
		const seen = new Set<string>();
		for (const [doc, score] of found ?? []) {
			const m = doc?.metadata ?? {};
			if (m.memory_base_id !== this.baseId) continue;
			if (scope.sessionId !== undefined && m.session_id !== scope.sessionId) continue;
			if (scope.userId !== undefined && m.user_id !== scope.userId) continue;
			const id = String(m.chunk_id ?? doc.id ?? '');
			if (seen.has(id)) continue;
			seen.add(id);
			matches.push({
				id,
				session_id: String(m.session_id),
				...(typeof m.user_id === 'string' ? { user_id: m.user_id } : {}),
				...(typeof m.role === 'string' ? { role: m.role } : {}),
				message_id: String(m.message_id),
				seq: Number(m.seq),
				run_id: String(m.run_id),
				chunk_index: Number(m.chunk_index),
				created_at: String(m.created_at),
				text: doc.pageContent,
				score: cosineOf(this.store, Number(score)),
			});
			if (matches.length >= k) break;
		}
		return matches;
	}

	/** Whether the store holds any chunk of this base (one search with a unit vector of `dimensions`). */
	async holdsAny(dimensions: number, sessionId?: string): Promise<boolean> {
		const probe = new Array<number>(dimensions).fill(0);
		probe[0] = 1;
		return (await this.search(probe, 1, { sessionId })).length > 0;
	}
}

/** Whether a delete failed because the store has no delete by ID (rather than the delete failing). */
function cannotDelete(error: unknown): boolean {
	const message = (error as Error)?.message ?? '';
	return error instanceof TypeError || /not implemented/i.test(message);
}
