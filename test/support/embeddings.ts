// Shared by the Memory Base tests: a deterministic embedding model (the fake server's hashed word
// features) with failure plans and a gate, and a LangChain-like in-memory vector store.
import { fakeEmbedding } from '../../demo/model-server';
import type { Embedder, ExternalDocument, ExternalVectorStore } from '../../src/internal';

/** Cosine similarity of two vectors. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
	let d = 0;
	let na = 0;
	let nb = 0;
	for (let i = 0; i < a.length; i++) {
		d += a[i] * b[i];
		na += a[i] * a[i];
		nb += b[i] * b[i];
	}
	return d / Math.sqrt(na * nb || 1);
}

/** Seeded pseudo-random numbers in [−0.5, 0.5) (mulberry32). */
export function seededRandom(seed: number): () => number {
	let a = seed;
	return () => {
		a = (a + 0x6d2b79f5) | 0;
		let t = Math.imul(a ^ (a >>> 15), 1 | a);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
	};
}

/** n random vectors of `dims` numbers. */
export function randomRows(n: number, dims: number, rand: () => number): number[][] {
	return Array.from({ length: n }, () => Array.from({ length: dims }, rand));
}

/** Embeds like the fake OpenAI server; can fail the n-th call, or hold calls until released. */
export class TestEmbedder implements Embedder {
	/** Every embedDocuments call's texts, in order. */
	readonly calls: string[][] = [];
	queries = 0;
	/** Calls (0-based, counting embedDocuments only) that fail. */
	failAt = new Set<number>();
	private gate: Promise<void> | undefined;
	private open: (() => void) | undefined;
	/** Resolves when a call is waiting at the gate. */
	private waiting: Array<() => void> = [];

	constructor(readonly dimensions = 256) {}

	/** Holds every embedDocuments call until release(). */
	hold(): void {
		this.gate = new Promise((resolve) => (this.open = resolve));
	}

	release(): void {
		this.open?.();
		this.gate = undefined;
	}

	/** Resolves once a call is held at the gate. */
	held(): Promise<void> {
		return new Promise((resolve) => this.waiting.push(resolve));
	}

	async embedDocuments(texts: string[]): Promise<number[][]> {
		const n = this.calls.length;
		this.calls.push([...texts]);
		if (this.gate) {
			for (const w of this.waiting.splice(0)) w();
			await this.gate;
		}
		if (this.failAt.has(n)) throw new Error(`embedding call ${n} failed (test)`);
		return texts.map((t) => fakeEmbedding(t, this.dimensions));
	}

	async embedQuery(text: string): Promise<number[]> {
		this.queries++;
		return fakeEmbedding(text, this.dimensions);
	}

	/** Every text embedded so far. */
	embedded(): string[] {
		return this.calls.flat();
	}
}

/** Like LangChain's MemoryVectorStore: a list of vectors, function filters, cosine similarity. */
export class TestVectorStore implements ExternalVectorStore {
	memoryVectors: Array<{
		id?: string;
		content: string;
		embedding: number[];
		metadata: Record<string, unknown>;
	}> = [];
	addCalls = 0;

	_vectorstoreType(): string {
		return 'memory';
	}

	async addVectors(vectors: number[][], documents: ExternalDocument[]): Promise<void> {
		this.addCalls++;
		documents.forEach((d, i) =>
			this.memoryVectors.push({
				id: d.id,
				content: d.pageContent,
				embedding: vectors[i],
				metadata: d.metadata,
			}),
		);
	}

	async similaritySearchVectorWithScore(
		query: number[],
		k: number,
		filter?: (doc: ExternalDocument) => boolean,
	): Promise<Array<[ExternalDocument, number]>> {
		return this.memoryVectors
			.map((v) => ({ doc: { pageContent: v.content, metadata: v.metadata, id: v.id }, v }))
			.filter(({ doc }) => !filter || filter(doc))
			.map(({ doc, v }) => [doc, cosine(query, v.embedding)] as [ExternalDocument, number])
			.sort((a, b) => b[1] - a[1])
			.slice(0, k);
	}
}

/**
 * Like LangChain's PGVectorStore as n8n's Postgres PGVector Store node hands it over: rows keyed by a
 * primary-key ID (adding one twice fails), metadata-equality filters, delete({ ids }), and pgvector's
 * distance as the score (cosine distance by default, the negative inner product, or the Euclidean
 * distance), nearest first. `failDelete` makes delete fail as a role without DELETE would.
 */
export class PgVectorLikeStore implements ExternalVectorStore {
	rows = new Map<
		string,
		{ text: string; metadata: Record<string, unknown>; embedding: number[] }
	>();
	failDelete: Error | undefined;

	constructor(readonly distanceStrategy: 'cosine' | 'innerProduct' | 'euclidean' = 'cosine') {}

	_vectorstoreType(): string {
		return 'pgvector';
	}

	async addVectors(
		vectors: number[][],
		documents: ExternalDocument[],
		options?: { ids?: string[] },
	): Promise<void> {
		documents.forEach((d, i) => {
			const id = options?.ids?.[i] ?? `row-${this.rows.size}`;
			if (this.rows.has(id))
				throw new Error(`duplicate key value violates unique constraint (${id})`);
			this.rows.set(id, { text: d.pageContent, metadata: d.metadata, embedding: vectors[i] });
		});
	}

	async delete(params: { ids: string[] }): Promise<void> {
		if (this.failDelete) throw this.failDelete;
		for (const id of params.ids) this.rows.delete(id);
	}

	private distance(a: number[], b: number[]): number {
		const dot = a.reduce((s, x, i) => s + x * b[i], 0);
		if (this.distanceStrategy === 'innerProduct') return -dot;
		if (this.distanceStrategy === 'euclidean')
			return Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]) ** 2, 0));
		return 1 - cosine(a, b);
	}

	async similaritySearchVectorWithScore(
		query: number[],
		k: number,
		filter: Record<string, unknown> = {},
	): Promise<Array<[ExternalDocument, number]>> {
		return [...this.rows]
			.filter(([, r]) =>
				Object.entries(filter).every(([key, value]) => String(r.metadata[key]) === String(value)),
			)
			.map(
				([id, r]) =>
					[
						{ pageContent: r.text, metadata: r.metadata, id },
						this.distance(query, r.embedding),
					] as [ExternalDocument, number],
			)
			.sort((a, b) => a[1] - b[1])
			.slice(0, k);
	}

	/** The rows of one conversation. */
	ofSession(sessionId: string): string[] {
		return [...this.rows].filter(([, r]) => r.metadata.session_id === sessionId).map(([id]) => id);
	}
}

/**
 * Like LangChain's QdrantVectorStore: points with a `{ content, metadata }` payload, and a filter that
 * must be Qdrant's own (`must` conditions of `{ key, match: { value } }` on payload keys): anything else
 * is refused as Qdrant's API refuses it. Cosine scores, nearest first; delete({ ids }).
 */
export class QdrantLikeStore implements ExternalVectorStore {
	points = new Map<string, { payload: Record<string, unknown>; vector: number[] }>();
	filters: unknown[] = [];

	_vectorstoreType(): string {
		return 'qdrant';
	}

	async addVectors(
		vectors: number[][],
		documents: ExternalDocument[],
		options?: { ids?: string[] },
	): Promise<void> {
		documents.forEach((d, i) =>
			this.points.set(options?.ids?.[i] ?? `p${this.points.size}`, {
				payload: { content: d.pageContent, metadata: d.metadata },
				vector: vectors[i],
			}),
		);
	}

	async delete(params: { ids: string[] }): Promise<void> {
		for (const id of params.ids) this.points.delete(id);
	}

	async similaritySearchVectorWithScore(
		query: number[],
		k: number,
		filter?: unknown,
	): Promise<Array<[ExternalDocument, number]>> {
		this.filters.push(filter);
		const conditions = qdrantConditions(filter);
		const at = (payload: Record<string, unknown>, key: string) =>
			key.split('.').reduce<unknown>((o, part) => (o as Record<string, unknown>)?.[part], payload);
		return [...this.points.entries()]
			.filter(([, p]) => conditions.every((c) => at(p.payload, c.key) === c.match.value))
			.map(
				([id, p]) =>
					[
						{
							id,
							pageContent: String(p.payload.content),
							metadata: p.payload.metadata as Record<string, unknown>,
						},
						cosine(query, p.vector),
					] as [ExternalDocument, number],
			)
			.sort((a, b) => b[1] - a[1])
			.slice(0, k);
	}
}

/** A filter's `must` conditions, or Qdrant's "Format error in JSON body" for anything else. */
function qdrantConditions(filter: unknown): Array<{ key: string; match: { value: unknown } }> {
	if (filter === undefined) return [];
	const f = filter as { must?: unknown };
	const keys = Object.keys(filter as object);
	const valid =
		keys.every((k) => ['must', 'should', 'must_not'].includes(k)) &&
		Array.isArray(f.must) &&
		f.must.every(
			(c: { key?: unknown; match?: { value?: unknown } }) =>
				typeof c.key === 'string' && c.match !== undefined && 'value' in c.match,
		);
	if (!valid) throw new Error(`Bad Request: Format error in JSON body: unknown field in filter`);
	return f.must as Array<{ key: string; match: { value: unknown } }>;
}
