// Queries with nothing to find, made of a scope's own content: what a ranking gives them is its null,
// the standout it reaches by chance (weights.ts). Each probe is "word salad": one word from each of
// several random messages of the scope, in the scope's own language and vocabulary but about nothing.
// The word ranking searches them as they are; the vector ranking searches their embeddings. Seeded, so
// the same content gives the same probes.
import { seeded } from '../../common/seeded';
import { median, standout } from './standout';

/** Probes per null. */
export const PROBES = 192;
/** Words per probe. */
export const PROBE_SIZE = 8;

const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/** A number from a text, to seed probes by what a scope is. */
export function seedOf(text: string): number {
	let h = 0x811c9dc5;
	for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
	return h >>> 0;
}

/** Words in more than this share of the sampled texts are left out of probes (see wordProbes). */
const COMMON = 0.1;

/** Each text's words, and the words found in more than COMMON of the texts. */
function wordsOf(texts: readonly string[]) {
	const split = texts.map((t) => (t.match(WORD) ?? []).map((w) => w.toLowerCase()));
	const df = new Map<string, number>();
	for (const words of split) for (const w of new Set(words)) df.set(w, (df.get(w) ?? 0) + 1);
	const common = new Set([...df].filter(([, n]) => n > COMMON * texts.length).map(([w]) => w));
	return { split, common };
}

/**
 * Word probes from sampled texts (PROBES × PROBE_SIZE of them, fewer when the scope is small). Words
 * that most messages carry (a sender's name or a date every message starts with, or the commonest
 * words) are left out: they would make every probe alike.
 */
export function wordProbes(texts: readonly string[], seed: number): string[] {
	const rand = seeded(seed);
	const { split, common } = wordsOf(texts);
	const probes: string[] = [];
	for (let p = 0; p + PROBE_SIZE <= split.length && probes.length < PROBES; p += PROBE_SIZE) {
		const words: string[] = [];
		for (const all of split.slice(p, p + PROBE_SIZE)) {
			const rare = all.filter((w) => !common.has(w));
			const pick = rare.length > 0 ? rare : all;
			if (pick.length > 0) words.push(pick[Math.floor(rand() * pick.length)]);
		}
		if (words.length > 0) probes.push(words.join(' '));
	}
	return probes;
}

/** A ranking's null: the median standout of its probes' score lists (undefined with too few). */
export function medianStandout(
	lists: ReadonlyArray<readonly number[]>,
	padTo = 0,
): number | undefined {
	const found = lists.map((l) => standout(l, padTo)).filter((s): s is number => s !== undefined);
	return found.length >= PROBES / 4 ? median(found) : undefined;
}
