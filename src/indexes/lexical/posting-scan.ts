// One term's postings read straight from a segment's stored postings (the JSON object `{"terms":
// {term: [document, count, …], …}}`, as JSON.stringify writes it) without parsing the others: a search
// of every conversation visits whole segments for the query's two or three words, and parsing every
// term's list of each took about a third of its word side. Anything but the plain form JSON.stringify
// writes (a second copy of the term, spaces, signs, fractions, leading zeros, numbers past 32 bits) is
// left to the full parse, which checks it as before (the gzip's checksum has checked the bytes).

const OPEN = 0x7b; // {
const COMMA = 0x2c; // ,
const CLOSE = 0x5d; // ]
const ZERO = 0x30;
const NINE = 0x39;
const MAX = 0xffffffff;
const LEAD = Buffer.from('{"terms":{', 'utf8');

/** Where the term's list starts (after `"term":[`), or -1; a key starts after `{` or `,` only. */
function keyAt(json: Buffer, key: Buffer, from: number): number {
	for (let at = json.indexOf(key, from); at >= 0; at = json.indexOf(key, at + 1)) {
		// Inside a key a quote is escaped (\"), so a match after `{` or `,` is a key of its own.
		const before = at > 0 ? json[at - 1] : -1;
		if (before === OPEN || before === COMMA) return at + key.length;
	}
	return -1;
}

/** The whole numbers of a list from `at` up to its `]`, or null if it is not in the plain form. */
function numbersAt(json: Buffer, at: number): number[] | null {
	const out: number[] = [];
	if (json[at] === CLOSE) return out;
	for (let i = at; i < json.length;) {
		const start = i;
		let v = 0;
		while (i < json.length && json[i] >= ZERO && json[i] <= NINE) v = v * 10 + json[i++] - ZERO;
		const digits = i - start;
		if (digits === 0 || (digits > 1 && json[start] === ZERO) || v > MAX) return null;
		out.push(v);
		if (json[i] === CLOSE) return out;
		if (json[i] !== COMMA) return null;
		i++;
	}
	return null;
}

/**
 * The term's (document, count) pairs from the stored postings' JSON; `undefined` when the segment
 * holds no such term; null when only the full parse can say (see above).
 */
export function scanPostings(json: Buffer, term: string): number[] | undefined | null {
	if (!json.subarray(0, LEAD.length).equals(LEAD)) return null;
	const key = Buffer.from(`${JSON.stringify(term)}:[`, 'utf8');
	const at = keyAt(json, key, LEAD.length);
	if (at < 0) return undefined;
	// JSON.parse keeps a repeated key's last copy: leave that to it.
	if (keyAt(json, key, at) >= 0) return null;
	return numbersAt(json, at);
}
