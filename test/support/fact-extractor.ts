// A deterministic stand-in for the chat model a fact extraction calls (tests and bench/facts.ts): it
// reads the request the engine built (the facts known and the new messages), finds first-person
// statements in the user's messages ("I live in Lisbon", "I have a dog named Biscuit", "I moved to
// Porto", "I sold my car") and answers with the JSON operations a model would, each quoting the words
// it came from. No model is involved: the figures it gives are the engine's, not a model's.
import type { PromptMessage } from '../../src/internal';

interface Known {
	id: string;
	text: string;
}

interface Said {
	id: string;
	role: string;
	text: string;
}

const STATEMENT =
	/\b(?:I|we)\s+(live|work|moved|have|own|am|like|love|prefer|sold|quit|stopped)\b([^.!?;,]*)/gi;

const VERB: Record<string, string> = {
	live: 'Lives',
	work: 'Works',
	have: 'Has',
	own: 'Owns',
	am: 'Is',
	like: 'Likes',
	love: 'Loves',
	prefer: 'Prefers',
};

/** The third person of a first-person remainder ("my dog" → "their dog"). */
const thirdPerson = (rest: string) =>
	rest
		.replace(/\bmy\b/gi, 'their')
		.replace(/\bme\b/gi, 'them')
		.replace(/\s+/g, ' ')
		.trim();

export function readRequest(request: PromptMessage[]): { known: Known[]; said: Said[] } {
	const body = String(request[request.length - 1].content);
	const known = [...body.matchAll(/^- (f\d+) \(since [^)]*\): (.*)$/gm)].map((m) => ({
		id: m[1],
		text: m[2],
	}));
	const said = [...body.matchAll(/^\[([^\]]+)\] (user|assistant), [^:]*: (.*)$/gm)].map((m) => ({
		id: m[1],
		role: m[2],
		text: m[3],
	}));
	return { known, said };
}

const words = (s: string) => new Set(s.toLowerCase().match(/[a-z]{3,}/g) ?? []);

/** The operations for one statement, given what is known (updated as operations are proposed). */
function operationFor(verb: string, rest: string, quote: string, id: string, known: Known[]) {
	const v = verb.toLowerCase();
	if (v === 'sold' || v === 'quit' || v === 'stopped') {
		const gone = words(rest);
		const target = known.find((k) => [...words(k.text)].some((w) => gone.has(w)));
		return target
			? { op: 'retire', id: target.id, reason: `${v} ${thirdPerson(rest)}`, quote, messageId: id }
			: undefined;
	}
	const text =
		v === 'moved'
			? `Lives ${thirdPerson(rest).replace(/^to\b/i, 'in')}`
			: `${VERB[v]} ${thirdPerson(rest)}`;
	const lead = text.split(' ')[0];
	const same =
		(v === 'moved' || v === 'live' || v === 'work') && known.find((k) => k.text.startsWith(lead));
	if (same) return { op: 'update', id: same.id, text, quote, messageId: id };
	return { op: 'add', text, quote, messageId: id };
}

/** What the stand-in answers a request with (a JSON string, as a model would). */
export function standInAnswer(request: PromptMessage[]): string {
	const { known, said } = readRequest(request);
	const operations: object[] = [];
	for (const m of said) {
		if (m.role !== 'user') continue;
		for (const match of m.text.matchAll(STATEMENT)) {
			const op = operationFor(match[1], match[2], match[0].trim(), m.id, known);
			if (op) operations.push(op);
		}
	}
	return JSON.stringify({ operations });
}

/** An extractor that answers with the stand-in and counts its calls and request sizes. */
export function standInExtractor() {
	const calls: PromptMessage[][] = [];
	const extract = async (request: PromptMessage[]) => {
		calls.push(request);
		return standInAnswer(request);
	};
	return { extract, calls };
}
