/**
 * How the demo model (npm start's offline model, and the tests' one stand-in) answers a request to
 * learn facts (Remember Facts in LLM with Memory and the LLM Memory Store): deterministically, from
 * what the request holds and nothing else. It reads the facts the request lists as known and the new
 * messages, finds first-person statements in the user's messages ("I live in Lyon", "I have a dog
 * named Biscuit", "we moved to Oslo", "I sold my car") and answers with the JSON operations a model
 * would, each quoting the words it came from:
 *
 *   "I live in Lyon"              → add "Lives in Lyon"            (quote "I live in Lyon")
 *   "we moved to Oslo"            → update the known "Lives …" fact to "Lives in Oslo"
 *   "I work at the bakery"        → add "Works at the bakery", or update a known "Works …" fact
 *   "I have a dog named Biscuit"  → add "Has a dog named Biscuit" (own, am, like, love, prefer alike)
 *   "I sold my car"               → retire the known fact sharing a word with "their car"
 *
 * No model is involved: figures measured with it (extraction calls per 100 turns, say) are the
 * engine's and the nodes', not a model's.
 */
import { FACTS_INSTRUCTIONS } from '../src/facts/request';
import { contentText } from './messages';
import type { ChatMessage } from './messages';

export interface Known {
	id: string;
	text: string;
}

export interface Said {
	id: string;
	role: string;
	text: string;
}

/** Whether a chat request is a fact extraction (its system message starts with the engine's rules). */
export function isFactsRequest(messages: readonly ChatMessage[]): boolean {
	const first = messages[0];
	return first?.role === 'system' && contentText(first.content).startsWith(FACTS_INSTRUCTIONS);
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

/** The facts known and the new messages, as the engine's extraction request lists them. */
export function readFactsRequest(messages: readonly ChatMessage[]): {
	known: Known[];
	said: Said[];
} {
	const body = contentText(messages[messages.length - 1]?.content);
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

/** The operation for one statement, given what is known. */
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

/** What the demo model answers a fact extraction with (a JSON string, as a model would). */
export function factsAnswer(messages: readonly ChatMessage[]): string {
	const { known, said } = readFactsRequest(messages);
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
