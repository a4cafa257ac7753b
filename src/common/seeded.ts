// A seeded generator of numbers in [0, 1) (mulberry32): the same numbers for the same seed, so what
// is drawn from a scope's content (fusion's probes, a codebook's first centroids) does not vary.
export function seeded(seed: number): () => number {
	let a = seed | 0;
	return () => {
		a = (a + 0x6d2b79f5) | 0;
		let t = Math.imul(a ^ (a >>> 15), 1 | a);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}
