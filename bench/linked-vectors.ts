/**
 * A stand-in for embedding models stronger than word averages, for the recall benchmark only (no real
 * model can be reached here). Real models place a question near the messages that answer it even when
 * they share no word; word averages (GloVe, hashed words) mostly do not. This embedder takes a base
 * embedder's vector and appends a "relevance" block that ties each question to its evidence turns:
 * every question gets a random direction (seeded), an evidence turn carries the sum of its questions'
 * directions (unit length), and the block is weighed by `strength` against the base vector (unit
 * length). Strength 0 is the base embedder; as it grows, the vector ranking alone finds more of the
 * evidence, up to about all of it. A `noise` share of each block is a random direction of its own
 * text, so a strong ranking is not a perfect one.
 *
 * It knows the answers, so it says nothing about a real model's quality: it lets the benchmark ask how
 * the fusion behaves when the vector ranking is weak, as good as the words, or much better.
 */
import type { Embedder } from '../src/internal';
import { seededRandom } from '../test/support/embeddings';

/** Dimensions of the relevance block. */
const BLOCK = 128;

/** A seeded random unit vector of BLOCK dimensions (Gaussian, so every direction is alike). */
function direction(seed: number): Float64Array {
	const rand = seededRandom(seed);
	const v = new Float64Array(BLOCK);
	for (let i = 0; i < BLOCK; i += 2) {
		const u = rand() + 0.5 || 1e-12;
		const w = rand() + 0.5;
		const r = Math.sqrt(-2 * Math.log(u));
		v[i] = r * Math.cos(2 * Math.PI * w);
		if (i + 1 < BLOCK) v[i + 1] = r * Math.sin(2 * Math.PI * w);
	}
	return unit(v);
}

function unit(v: Float64Array): Float64Array {
	let n = 0;
	for (const x of v) n += x * x;
	n = Math.sqrt(n);
	return n > 0 ? v.map((x) => x / n) : v;
}

/** A stable number for a text (its own noise direction). */
function textSeed(text: string): number {
	let h = 0x811c9dc5;
	for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
	return h >>> 0;
}

export class LinkedEmbedder implements Embedder {
	private readonly directions = new Map<number, Float64Array>();

	/**
	 * @param links each text's link numbers: a question's own number, and for a turn the numbers of
	 *   the questions it is evidence for (texts not in the map get no link)
	 */
	constructor(
		private readonly base: Embedder,
		private readonly links: ReadonlyMap<string, readonly number[]>,
		private readonly strength: number,
		private readonly noise = 0.3,
		private readonly seed = 1,
	) {}

	private dir(link: number): Float64Array {
		let d = this.directions.get(link);
		if (!d) this.directions.set(link, (d = direction(this.seed * 1_000_003 + link)));
		return d;
	}

	private block(text: string): Float64Array {
		const block = new Float64Array(BLOCK);
		for (const link of this.links.get(text) ?? []) {
			const d = this.dir(link);
			for (let i = 0; i < BLOCK; i++) block[i] += d[i];
		}
		const linked = unit(block);
		const own = direction(textSeed(text) ^ this.seed);
		const mixed = linked.map(
			(x, i) => Math.sqrt(1 - this.noise) * x + Math.sqrt(this.noise) * own[i],
		);
		return unit(mixed);
	}

	private combine(text: string, base: number[]): number[] {
		const block = this.block(text);
		const out = [...base, ...Array.from(block, (x) => this.strength * x)];
		const n = Math.sqrt(out.reduce((s, x) => s + x * x, 0)) || 1;
		return out.map((x) => x / n);
	}

	async embedDocuments(texts: string[]): Promise<number[][]> {
		const base = await this.base.embedDocuments(texts);
		return texts.map((t, i) => this.combine(t, base[i]));
	}

	async embedQuery(text: string): Promise<number[]> {
		return this.combine(text, await this.base.embedQuery(text));
	}
}
