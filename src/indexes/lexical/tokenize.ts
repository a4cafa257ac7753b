// Words for lexical search, in any language: text is folded (NFKC, lower case, accents off Latin
// letters), cut into words (Intl.Segmenter where words are not separated by spaces: Chinese, Japanese,
// Korean, Thai and their neighbours), common English words dropped, and English endings trimmed, so
// "Moved", "moving" and "moves" meet as one term. Pure, deterministic, and the same at capture and
// at search.

/** Scripts written without spaces between words: these runs go through Intl.Segmenter. */
const UNSPACED =
	/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
/** A run of letters, marks and digits (a word in space-separated scripts, or a run to segment). */
const RUN = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}]+)*/gu;
const LATIN_WORD = /^[\p{Script=Latin}\p{M}\p{N}'’]+$/u;
const MARKS = /\p{M}+/gu;
const ASCII_WORD = /^[a-z]+$/;

/** Words too common to tell messages apart (English; other languages rely on IDF alone). */
const STOPWORDS = new Set(
	(
		'a about above after again against all am an and any are as at be because been before being ' +
		'below between both but by can could did do does doing down during each few for from further ' +
		'had has have having he her here hers herself him himself his how i if in into is it its itself ' +
		'just me more most my myself no nor not now of off on once only or other our ours ourselves out ' +
		'over own same she should so some such than that the their theirs them themselves then there ' +
		'these they this those through to too under until up very was we were what when where which ' +
		'while who whom why will with would you your yours yourself yourselves s t d ll m re ve'
	).split(' '),
);

let segmenter: Intl.Segmenter | undefined;
function words(run: string): string[] {
	segmenter ??= new Intl.Segmenter('und', { granularity: 'word' });
	const out: string[] = [];
	for (const s of segmenter.segment(run)) if (s.isWordLike) out.push(s.segment);
	return out;
}

/** A light English stemmer: plural, tense and -ly endings, and a final "e" (so "move", "moved" and "moving" meet). */
export function stem(word: string): string {
	if (word.length < 4 || !ASCII_WORD.test(word)) return word;
	let w = word;
	if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
	else if (w.endsWith('sses')) w = w.slice(0, -2);
	else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is'))
		w = w.slice(0, -1);
	for (const suffix of ['ingly', 'edly', 'ing', 'ed']) {
		if (!w.endsWith(suffix) || w.length - suffix.length < 3) continue;
		w = w.slice(0, -suffix.length);
		// "moved" → "mov" and "move" → "move" would differ: fold a trailing "e" away everywhere.
		if (w.length > 2 && w[w.length - 1] === w[w.length - 2] && !/[lsz]/.test(w[w.length - 1]))
			w = w.slice(0, -1); // "stopped" → "stop"
		break;
	}
	if (w.endsWith('ly') && w.length > 5) w = w.slice(0, -2);
	if (w.endsWith('e') && w.length > 3) w = w.slice(0, -1);
	return w;
}

function fold(word: string): string {
	if (!LATIN_WORD.test(word)) return word;
	return word.normalize('NFD').replace(MARKS, '').normalize('NFC').replace(/['’]/g, '');
}

/** The terms of a text, in order (repeats kept: term frequency counts them). */
export function tokenize(text: string): string[] {
	const out: string[] = [];
	const normal = text.normalize('NFKC').toLowerCase();
	for (const m of normal.matchAll(RUN)) {
		const run = m[0];
		for (const w of UNSPACED.test(run) ? words(run) : [run]) {
			const word = fold(w);
			if (word === '' || STOPWORDS.has(word)) continue;
			out.push(stem(word));
		}
	}
	return out;
}

/** Term frequencies of a text and its length in terms. */
export function termCounts(text: string): { terms: Map<string, number>; length: number } {
	const terms = new Map<string, number>();
	const all = tokenize(text);
	for (const t of all) terms.set(t, (terms.get(t) ?? 0) + 1);
	return { terms, length: all.length };
}
