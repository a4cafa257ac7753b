// Hybrid search's weights for one search (indexes/fusion/weights.ts): the vector ranking's null,
// measured with word-salad probes of the base's own words (embedded in one call, once per process) in
// the scope of a search, per base and model, and again only in a much larger scope; the base's
// calibration (per storage, base and model, in this process); and the report a search gives of what it
// did, so a user can see why.
import { BoundedCache } from '../common/bounded-cache';
import {
	MIN_STANDOUT_SCOPE,
	calibrationOf,
	medianStandout,
	nullOf,
	PROBE_SIZE,
	PROBES,
	seeded,
	seedOf,
	weigh,
	wordProbes,
} from '../indexes';
import type { FusionWeights, LexicalView } from '../indexes';
import { storageIdentity } from '../store/storage';
import type { BaseParts } from './parts';
import type { FusionReport, SearchMode } from './types';

/** What the vector side offers the fusion: its scores, and a way to rank probes in the same scope. */
export interface VectorSide {
	scores: number[];
	/** The model's dimensions (the calibration is per model). */
	dimensions: number;
	/**
	 * The k best cosines of each probe's embedding, in the search's scope. Absent where a probe would
	 * cost a pass over the whole index (a search of every conversation, read one segment at a time).
	 */
	probe?: (vectors: number[][], k: number) => Promise<number[][]>;
	/** Embeds texts as the search's model does (documents: one call for all probes). */
	embed: (texts: string[]) => Promise<number[][]>;
}

/** Each base's probes, embedded once per process (a few kilobytes each). */
const embeddedProbes = new BoundedCache<{ words: string[]; vectors: number[][] }>({
	name: 'fusion probes',
	maxEntries: 256,
});

/** Which base a search is of: its knowledge base, and when it was created (a base made anew is another). */
export interface BaseIdentity {
	kbId: string;
	createdAt?: string;
}

/** The key of a base's in-process calibration and nulls: its storage, base, knowledge base and model. */
function baseKey(p: BaseParts, base: BaseIdentity, dimensions: number): string {
	const at = [storageIdentity(p.storage), p.keyPrefix ?? '', p.baseId, base.kbId, base.createdAt];
	return [...at, p.vectorStoreKind, dimensions].join('\n');
}

/**
 * Probes for a scope of `size` chunks: fewer in a large one, where each costs a pass over it, and in a
 * connected store, where each is a query; none where a standout cannot be measured.
 */
function probeCount(size: number, external: boolean): number {
	if (size < MIN_STANDOUT_SCOPE) return 0;
	const most = external ? PROBES / 4 : PROBES;
	return Math.max(PROBES / 4, Math.min(most, Math.floor(1e6 / size)));
}

/** Word probes from the scope's messages, seeded by the base (the same content, the same probes). */
function probesOf(
	view: LexicalView,
	sample: NonNullable<LexicalView['sample']>,
	p: BaseParts,
	kbId: string,
): string[] {
	const seed = seedOf(`${p.baseId}\n${kbId}\n${view.size}`);
	const count = probeCount(view.size, p.vectorStoreKind === 'external');
	return count === 0 ? [] : wordProbes(sample(count * PROBE_SIZE, seeded(seed)), seed);
}

/** The vector ranking's null: the probes embedded (once per base and size), ranked in this scope. */
async function vectorNull(
	vector: VectorSide,
	probe: NonNullable<VectorSide['probe']>,
	probes: string[],
	key: string,
	k: number,
) {
	if (probes.length === 0) return undefined;
	let embedded = embeddedProbes.get(key);
	if (!embedded || embedded.words.join('\n') !== probes.join('\n'))
		embedded = embeddedProbes.set(key, { words: probes, vectors: await vector.embed(probes) });
	return medianStandout(await probe(embedded.vectors, k));
}

/** The weights of a hybrid search over `view` and `vector`'s scores, with the base's calibration. */
export async function hybridWeights(
	p: BaseParts,
	base: BaseIdentity,
	view: LexicalView,
	lexicalScores: number[],
	vector: VectorSide,
	k: number,
): Promise<FusionWeights> {
	const key = baseKey(p, base, vector.dimensions);
	// A failed embedding call costs the search its weights' evidence, never its answer (and is not
	// kept: the next search measures again).
	// A view read one segment at a time offers no probes: the weights follow what the base's earlier
	// searches learned (its calibration), or the prior.
	const { sample } = view;
	const { probe } = vector;
	const nul =
		vector.scores.length > 0 && sample && probe
			? await nullOf(`vectors\n${key}`, view.size, () =>
					vectorNull(vector, probe, probesOf(view, sample.bind(view), p, base.kbId), key, k),
				).catch(() => undefined)
			: undefined;
	return weigh({ lexical: lexicalScores, vector: vector.scores }, nul, calibrationOf(key));
}

/** What a search says of its fusion: the mode, and in hybrid search the weights and why. */
export function fusionReport(mode: SearchMode, weights?: FusionWeights): FusionReport {
	if (mode !== 'hybrid' || !weights) return { mode };
	const shown = { mode, weights: { words: weights.lexical, vectors: weights.vector } };
	const evidence = {
		...(weights.vectorEvidence !== undefined ? { vectorEvidence: weights.vectorEvidence } : {}),
		...(weights.weighedEvidence !== undefined ? { weighedEvidence: weights.weighedEvidence } : {}),
	};
	if (weights.basis === 'lexical only' || weights.basis === 'vector only')
		return {
			...shown,
			basis: `${weights.basis === 'lexical only' ? 'only the words' : 'only the vectors'} found anything`,
			...evidence,
		};
	const earlier = weights.calibratedBy;
	const searches = `${earlier} earlier search${earlier === 1 ? '' : 'es'} of this base`;
	// Without its own evidence (a search of every conversation), a search follows the base's.
	const where =
		weights.vectorEvidence === undefined
			? searches
			: `this search${earlier > 0 ? ` and ${searches}` : ''}`;
	return {
		...shown,
		basis:
			weights.basis === 'prior'
				? 'too little to judge either ranking by yet: the words lead'
				: `how far the vectors' best match stood out, against what they find for word salad, in ${where}`,
		...evidence,
	};
}
