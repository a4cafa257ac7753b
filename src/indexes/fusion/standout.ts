// How much a ranking's best match stands out: the evidence a ranking brings for one query. A ranking
// that found what the query is about puts it far above the rest; one that found nothing in particular
// (a weak embedding model, words that occur everywhere) ranks its best barely above its background.
// Scores of different rankings (BM25, cosines of one model or another) are not comparable; how far the
// best stands above the ranking's own background, in its own spread, is.

/** Candidates ranked below this place are the background the best is measured against. */
export const BACKGROUND_FROM = 10;
/** The candidates a standout looks at (the fusion's candidates). */
export const STANDOUT_OVER = 50;
/** Fewer background scores than this say too little: no standout. */
const MIN_BACKGROUND = 8;
/** A scope of fewer chunks gives no standout (too short a background). */
export const MIN_STANDOUT_SCOPE = BACKGROUND_FROM + MIN_BACKGROUND;
/** A standout counts at most this much (one extreme query). */
export const MAX_STANDOUT = 40;

/**
 * How many of its background's spreads the best score stands above the background's mean; the
 * background is the candidates ranked below BACKGROUND_FROM (at most STANDOUT_OVER). `scores` are
 * best first. With `padTo`, the list holds every match and the rest of the scope scored 0: they pad
 * the background up to that many (a word ranking: a message sharing no word scores 0). Undefined when
 * there is too little to judge by.
 */
export function standout(scores: readonly number[], padTo = 0): number | undefined {
	if (scores.length === 0) return undefined;
	const size = Math.min(STANDOUT_OVER, Math.max(scores.length, padTo));
	const from = size >= BACKGROUND_FROM + MIN_BACKGROUND ? BACKGROUND_FROM : 1;
	const background = size - from;
	if (background < MIN_BACKGROUND) return undefined;
	let sum = 0;
	let squares = 0;
	for (let i = from; i < size; i++) {
		const s = i < scores.length ? scores[i] : 0;
		sum += s;
		squares += s * s;
	}
	const mean = sum / background;
	const spread = Math.sqrt(Math.max(0, squares / background - mean * mean));
	const above = scores[0] - mean;
	// A background that does not vary (a sparse model's exact zeros) has no spread to measure by.
	if (spread < 1e-9 * Math.max(1, Math.abs(mean))) return undefined;
	return Math.min(MAX_STANDOUT, above / spread);
}

/** The middle value (the mean of the two middle ones); undefined for none. */
export function median(values: readonly number[]): number | undefined {
	if (values.length === 0) return undefined;
	const sorted = [...values].sort((a, b) => a - b);
	const mid = sorted.length >> 1;
	return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
