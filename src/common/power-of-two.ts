// Counts the stored forms keep as powers of two (buckets, splits, a codebook's centroids), so that a
// number's high bits or a hash's low bits pick among them.

/** Whether `n` is a power of two (1 included). */
export const isPowerOfTwo = (n: number): boolean =>
	Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0;
