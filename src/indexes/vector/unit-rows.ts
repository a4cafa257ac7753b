// The check every stored vector row passes when read: a row altered on storage would otherwise rank
// by NaN or outweigh every other row.

/** How far a stored row's squared length may be from 1 (Float32 rounding of a normalised row). */
const UNIT_TOLERANCE = 1e-3;

/**
 * The first row that is not as normaliseRows writes rows (unit length, or all zeros for an embedder's
 * zeros), or -1. A row altered on storage would otherwise rank by NaN or outweigh every other row.
 */
export function badRow(vectors: Float32Array, dims: number): number {
	const whole = dims - (dims % 4);
	for (let r = 0, at = 0; at < vectors.length; r++, at += dims) {
		// Four sums side by side: about twice as fast (every row of dozens of buckets per search).
		let n0 = 0;
		let n1 = 0;
		let n2 = 0;
		let n3 = 0;
		let j = at;
		for (const end = at + whole; j < end; j += 4) {
			n0 += vectors[j] * vectors[j];
			n1 += vectors[j + 1] * vectors[j + 1];
			n2 += vectors[j + 2] * vectors[j + 2];
			n3 += vectors[j + 3] * vectors[j + 3];
		}
		for (; j < at + dims; j++) n0 += vectors[j] * vectors[j];
		const norm = n0 + n1 + n2 + n3;
		// NaN and Infinity fail both comparisons.
		if (!(norm === 0 || Math.abs(norm - 1) <= UNIT_TOLERANCE)) return r;
	}
	return -1;
}
