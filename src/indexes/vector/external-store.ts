// A connected vector store (n8n's vector store sub-nodes hand over a LangChain VectorStore) used instead
// of the embedded index. Duck-typed: no LangChain import. Vectors come from the memory base's own
// embedding model (addVectors, similaritySearchVectorWithScore), so both kinds of index behave alike.
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
	 * list. Returns false for a store that can do neither (then a re-ingested chunk may appear twice).
	 */
	async remove(ids: string[]): Promise<boolean> {
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
		} catch {
			// LangChain's base class answers "Not implemented" for stores without deletes.
			return false;
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
				message_id: c.message_id,
				seq: c.seq,
				run_id: c.run_id,
				chunk_index: c.chunk_index,
				created_at: c.created_at,
			},
		}));
		await this.store.addVectors!(vectors, documents, { ids });
	}

	/** A filter the store understands: a function for LangChain's MemoryVectorStore, metadata equality otherwise. */
	private filter(sessionId?: string): unknown {
		if (this.isMemoryStore() || this.store._vectorstoreType?.() === 'memory')
			return (doc: ExternalDocument) =>
				doc.metadata?.memory_base_id === this.baseId &&
				(sessionId === undefined || doc.metadata?.session_id === sessionId);
		return {
			memory_base_id: this.baseId,
			...(sessionId !== undefined ? { session_id: sessionId } : {}),
		};
	}

	async search(query: number[], k: number, sessionId?: string): Promise<VectorMatch[]> {
		const found = await this.store.similaritySearchVectorWithScore!(
			query,
			k * OVERFETCH,
			this.filter(sessionId),
		);
		const matches: VectorMatch[] = [];
		const seen = new Set<string>();
		for (const [doc, score] of found ?? []) {
			const m = doc?.metadata ?? {};
			if (m.memory_base_id !== this.baseId) continue;
			if (sessionId !== undefined && m.session_id !== sessionId) continue;
			const id = String(m.chunk_id ?? doc.id ?? '');
			if (seen.has(id)) continue;
			seen.add(id);
			matches.push({
				id,
				session_id: String(m.session_id),
				message_id: String(m.message_id),
				seq: Number(m.seq),
				run_id: String(m.run_id),
				chunk_index: Number(m.chunk_index),
				created_at: String(m.created_at),
				text: doc.pageContent,
				score,
			});
			if (matches.length >= k) break;
		}
		return matches;
	}

	/** Whether the store holds any chunk of this base (one search with a unit vector of `dimensions`). */
	async holdsAny(dimensions: number, sessionId?: string): Promise<boolean> {
		const probe = new Array<number>(dimensions).fill(0);
		probe[0] = 1;
		return (await this.search(probe, 1, sessionId)).length > 0;
	}
}
