// How many parts a search of a large index reads at once (word segments, vector segments, cell
// buckets): up to WINDOW, unless together they take more than WINDOW_BYTES (large vectors: one at a
// time), so what it holds of what it read is bounded in bytes as well as in parts, whatever the
// dimensions (common/parallel.ts: readInWindow).

/** Parts read at once, at most… */
export const WINDOW = 4;
/** …unless together they take more bytes than this. */
export const WINDOW_BYTES = 8 * 2 ** 20;

export const SEARCH_READS = { window: WINDOW, bytes: WINDOW_BYTES };
