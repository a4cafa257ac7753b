// How many parts a search of a large vector index reads at once: two, unless together they take more
// than WINDOW_BYTES (large vectors: one at a time), so what it holds of what it read is bounded in
// bytes as well as in parts, whatever the dimensions.

/** Parts read at once, at most… */
export const WINDOW = 2;
/** …unless together they take more bytes than this. */
export const WINDOW_BYTES = 8 * 2 ** 20;

/** `parts` in consecutive groups to read at once: up to WINDOW, within WINDOW_BYTES (one at least). */
export function readGroups<T>(parts: readonly T[], bytesOf: (part: T) => number): T[][] {
	const groups: T[][] = [];
	for (let i = 0; i < parts.length;) {
		const group = [parts[i++]];
		let bytes = bytesOf(group[0]);
		while (group.length < WINDOW && i < parts.length && bytes + bytesOf(parts[i]) <= WINDOW_BYTES) {
			bytes += bytesOf(parts[i]);
			group.push(parts[i++]);
		}
		groups.push(group);
	}
	return groups;
}
