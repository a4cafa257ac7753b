// How much each ranking weighs in one hybrid search. No weight is fixed to one embedding model: what
// decides is how far the vector ranking's best match stands out (standout.ts) for a real query,
// compared with how far it stands out for queries with nothing to find (its null: word salad of the
// base's own words, probes.ts). A model that finds what questions are about puts their answers far
// above the rest, much further than it puts anything for word salad; a weak model (averaged word
// vectors, hashed words) does about as well for salad as for questions. One query says little (a weak
// model's best match can stand out by chance), so the ratio is kept per base (calibration.ts): once the
// base has served a few searches its typical ratio decides, and one query's own only while it is new.
// A good model's vectors then lead on every query; a weak one's only add to the words.
import type { Calibration } from './calibration';
import { standout } from './standout';

/**
 * The vectors' weight, between these once their evidence reaches the midpoint (the words weigh the
 * rest); below it the weight ramps down to nothing, since a ranking no better than chance only adds
 * noise to the words' order.
 */
export const VECTOR_WEIGHT_MIN = 0.1;
export const VECTOR_WEIGHT_MAX = 0.95;
/** The weight with no evidence (too few candidates, no search yet): the words lead. */
export const VECTOR_WEIGHT_PRIOR = 0.2;
/**
 * How steeply the weight follows the log ratio of standouts, and where it is halfway. Below the
 * midpoint the weight also ramps down, to nothing at a ratio of 0: a ranking no better than chance (its
 * best match standing out no more than for word salad).
 */
const SLOPE = 8;
const MIDPOINT = 0.25;
/** One query's log ratio counts at most this much either way. */
const CLIP = 1;
/** Searches of the base after which its typical ratio counts as much as the query's own. */
const SHRINK = 16;
/** A standout below this counts as this (a best match level with its background). */
const FLOOR = 0.5;

export interface RankingScores {
	/** The word ranking's scores, best first (BM25, or its neighbour's share). */
	lexical: readonly number[];
	/** The vector ranking's cosines, best first. */
	vector: readonly number[];
}

export interface FusionWeights {
	/** What the words and the vectors weigh, summing to 1 (one of them 1 when the other found nothing). */
	lexical: number;
	vector: number;
	/** How the weights were set: one ranking alone, evidence of this search (and of earlier ones), or none. */
	basis: 'lexical only' | 'vector only' | 'evidence' | 'prior';
	/** The vectors' evidence: their best match's standout over their null (1: what word salad gets). */
	vectorEvidence?: number;
	/** The evidence the weight followed: this search's, leaning on the base's typical one as it learns. */
	weighedEvidence?: number;
	/** Earlier searches of the base whose evidence the weights leaned on. */
	calibratedBy: number;
}

const logistic = (x: number) => 1 / (1 + Math.exp(-x));
const round = (x: number) => Math.round(x * 1000) / 1000;

/** The vectors' weight for a log ratio of evidence (vectors' standout over their null). */
export function weightOf(ratio: number): number {
	const ramp = Math.max(0, Math.min(1, ratio / MIDPOINT));
	const above =
		VECTOR_WEIGHT_MIN +
		(VECTOR_WEIGHT_MAX - VECTOR_WEIGHT_MIN) * logistic(SLOPE * (ratio - MIDPOINT));
	return ramp * above;
}

/** The log ratio this search's weight follows: its own, and the base's typical one as it is learned. */
function blended(own: number | undefined, calibration: Calibration): number | undefined {
	const typical = calibration.typical();
	if (own === undefined) return typical;
	const n = calibration.count;
	calibration.record(own);
	if (typical === undefined) return own;
	const t = n / (n + SHRINK);
	return (1 - t) * own + t * typical;
}

/**
 * The weights of one hybrid search, from both rankings' scores, the vector ranking's null (undefined:
 * not known, no evidence) and the base's calibration (which records this search's ratio for the next).
 */
export function weigh(
	scores: RankingScores,
	vectorNull: number | undefined,
	calibration: Calibration,
): FusionWeights {
	if (scores.vector.length === 0)
		return { lexical: 1, vector: 0, basis: 'lexical only', calibratedBy: 0 };
	const s = standout(scores.vector);
	const evidence =
		s === undefined || vectorNull === undefined || !(vectorNull > 0)
			? undefined
			: Math.max(FLOOR, s) / vectorNull;
	const earlier = calibration.count;
	const own =
		evidence === undefined ? undefined : Math.max(-CLIP, Math.min(CLIP, Math.log(evidence)));
	const ratio = blended(own, calibration);
	const shown = {
		...(evidence !== undefined ? { vectorEvidence: round(evidence) } : {}),
		...(ratio !== undefined ? { weighedEvidence: round(Math.exp(ratio)) } : {}),
	};
	// The words found nothing: the vectors rank alone (their evidence still says how far to trust them).
	if (scores.lexical.length === 0)
		return { lexical: 0, vector: 1, basis: 'vector only', ...shown, calibratedBy: 0 };
	const vector = ratio === undefined ? VECTOR_WEIGHT_PRIOR : weightOf(ratio);
	return {
		lexical: round(1 - vector),
		vector: round(vector),
		basis: ratio === undefined ? 'prior' : 'evidence',
		...shown,
		calibratedBy: ratio === undefined ? 0 : earlier,
	};
}
