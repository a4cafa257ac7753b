/**
 * The recall benchmark's data (bench/recall.ts): seeded, deterministic multi-session conversations of
 * several users (dozens of sessions each, thousands of turns in all) made of everyday chat
 * (recall-filler.ts) with planted facts (recall-facts.ts, recall-facts-stable.ts), and questions
 * about those facts labelled with their evidence turn (session and message).
 *
 * - Facts are said by the user ("I'm allergic to sesame") or by the assistant (a booking confirmed
 *   with its reference), inside ordinary turns: a fact usually shares its message with a request.
 * - Updated facts ("we moved from Lyon to Oslo", weeks after "I live in Lyon"): the question's
 *   evidence is the newer statement; the older one is kept as `older`, to check which ranks higher.
 * - Questions paraphrase the fact as a user would ask later, often with other words than the evidence
 *   ("Which city is home these days?"). Their overlap is measured, not assumed: `overlap` counts the
 *   question's content words (lower-cased, stop words left out, no stemming) that the evidence also
 *   has, and `lowOverlap` marks questions sharing none (they may share a stem: "moving", "moved").
 * - Time: sessions are spread over ten months (2025-01-06 to 2025-11-05) at daytime hours, turns a few
 *   minutes apart; every turn carries its time (`at`), and the questions are asked at `end`, the morning
 *   after the last session. How the benchmark gets those times into the base is said in recall.ts.
 */
import { seededRandom } from '../test/support/embeddings';
import type { FactKind, Slots } from './recall-facts';
import { UPDATED } from './recall-facts';
import { STABLE } from './recall-facts-stable';
import { ACKS, FILL, TOPICS } from './recall-filler';
import type { Topic } from './recall-filler';

export interface Turn {
	/** `<session>/<index in the session>`: the chat message ID a capture keeps as metadata.messageId. */
	id: string;
	sessionId: string;
	userId: string;
	role: 'user' | 'assistant';
	text: string;
	at: Date;
}

export interface Session {
	id: string;
	userId: string;
	topic: string;
	turns: Turn[];
}

export interface Question {
	userId: string;
	kind: string;
	text: string;
	/** The evidence turn's ID (for an updated fact, the newer statement). */
	evidence: string;
	/** For an updated fact: the older statement, which should rank below the evidence. */
	older?: string;
	/** Content words of the question that the evidence also has (exact words, no stemming). */
	overlap: number;
	lowOverlap: boolean;
}

export interface Dataset {
	users: string[];
	/** Every session of every user, in time order. */
	sessions: Session[];
	questions: Question[];
	/** When the questions are asked. */
	end: Date;
}

export interface GenerateOptions {
	seed?: number;
	users?: number;
	/** Sessions per user, on average (each user gets ±25 %). */
	sessionsPerUser?: number;
	/** Filler turn pairs per session, at least and at most (planted facts come on top). */
	pairs?: [number, number];
	/** Planted facts and questions (false: filler only, for the latency index). */
	facts?: boolean;
}

const START = Date.parse('2025-01-06T00:00:00Z');
const DAYS = 303;
const DAY_MS = 86_400_000;
const MIN_UPDATE_GAP_DAYS = 21;
/** Questions asked per fact: updated facts get more, so that subset is not tiny. */
const QUESTIONS = { stable: 2, updated: 3 };

const CONTENT_STOP = new Set(
	(
		'a about after all also am an and any are as at be been but by can could did do does for from ' +
		'get got had has have how i if in into is it its just me my of on or our so than that the their ' +
		'them then there these they this to up us was we were what when where which who why will with ' +
		'would you your s t ll m re ve d now'
	).split(' '),
);

/** Lower-cased words of a text without stop words (no stemming: different forms count as different). */
export function contentWords(text: string): Set<string> {
	const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
	return new Set(words.filter((w) => !CONTENT_STOP.has(w)));
}

export function overlapOf(question: string, evidence: string): number {
	const e = contentWords(evidence);
	return [...contentWords(question)].filter((w) => e.has(w)).length;
}

class Rng {
	private readonly next: () => number;
	constructor(seed: number) {
		const r = seededRandom(seed);
		this.next = () => r() + 0.5;
	}
	float(): number {
		return this.next();
	}
	int(lo: number, hi: number): number {
		return lo + Math.floor(this.next() * (hi - lo + 1));
	}
	chance(p: number): boolean {
		return this.next() < p;
	}
	readonly pick = <T>(xs: readonly T[]): T => xs[Math.floor(this.next() * xs.length)];
	sample<T>(xs: readonly T[], n: number): T[] {
		const copy = [...xs];
		for (let i = copy.length - 1; i > 0; i--) {
			const j = Math.floor(this.next() * (i + 1));
			[copy[i], copy[j]] = [copy[j], copy[i]];
		}
		return copy.slice(0, n);
	}
}

/** Fills `{name}` from the slots; `{a_name}` is the value with its article ("an architect"). */
function fill(template: string, slots: Slots): string {
	return template.replace(/\{(\w+)\}/g, (_, name: string) => {
		const article = name.startsWith('a_');
		const value = slots[article ? name.slice(2) : name] ?? `{${name}}`;
		return article ? `${/^[aeiou]/i.test(value) ? 'an' : 'a'} ${value}` : value;
	});
}

/** A user's request on a topic, its slots filled. */
function ask(r: Rng, topic: Topic, template = r.pick(topic.asks)): string {
	return template.replace(/\{(\w+)\}/g, (_, name: string) => r.pick(FILL[name]));
}

function answer(r: Rng, topic: Topic): string {
	return r.sample(topic.answers, r.int(2, 4)).join(' ');
}

/** One turn pair: the user's message and the assistant's reply. */
type Pair = [string, string];

/** A pair to insert in a session; a planted fact's pair names the message holding it. */
interface Planted {
	pair: Pair;
	/** 0: the user's message states the fact, 1: the assistant's. */
	factAt?: 0 | 1;
	/** Told the ID of that message once the session is built. */
	placed?: (turnId: string) => void;
}

interface Plan {
	/** Pairs to insert, by session index. */
	inserts: Map<number, Planted[]>;
	questions: Question[];
}

function insert(plan: Plan, session: number, planted: Planted): void {
	plan.inserts.set(session, [...(plan.inserts.get(session) ?? []), planted]);
}

/** A pair stating a fact: the user says it beside a request, or the assistant answers a request with it. */
function statementPair(r: Rng, kind: FactKind, slots: Slots, template: string, topic: Topic) {
	const statement = fill(template, slots);
	if (kind.role === 'assistant') {
		const tail = r.chance(0.4) ? ' Is there anything else I can do for you?' : '';
		const request = fill(r.pick(kind.requests ?? ['Can you help me with this?']), slots);
		return { statement, pair: [request, statement + tail] as Pair, factAt: 1 as const };
	}
	const request = ask(r, topic);
	const user = r.chance(0.5) ? `${statement} ${request}` : `${request} ${statement}`;
	const ack = r.chance(0.6) ? `${r.pick(ACKS)} ` : '';
	return { statement, pair: [user, `${ack}${answer(r, topic)}`] as Pair, factAt: 0 as const };
}

const prefixed = (slots: Slots) =>
	Object.fromEntries(Object.entries(slots).map(([k, v]) => [`prev_${k}`, v]));

/**
 * Where a fact is said: anywhere; or, for a fact updated later, in the first 55 % of the sessions and
 * again in a session at least three weeks later (when there is none, the fact is not updated).
 */
function placesOf(r: Rng, starts: number[], updated: boolean): { first: number; update?: number } {
	const n = starts.length;
	if (!updated) return { first: r.int(0, n - 1) };
	const first = r.int(0, Math.floor(n * 0.55));
	const gap = starts[first] + MIN_UPDATE_GAP_DAYS * DAY_MS;
	const later = starts.map((t, i) => ({ t, i })).filter((s) => s.t >= gap);
	return { first, update: later.length ? r.pick(later).i : undefined };
}

/** The questions about one fact, once its evidence (and the older statement it updates) is placed. */
function questionsOf(kind: FactKind, userId: string, asked: string[], plan: Plan) {
	return (evidence: string, statement: string, older?: string) => {
		for (const text of asked) {
			const overlap = overlapOf(text, statement);
			const o = older === undefined ? {} : { older };
			plan.questions.push({
				userId,
				kind: kind.kind,
				text,
				evidence,
				...o,
				overlap,
				lowOverlap: overlap === 0,
			});
		}
	};
}

/** Plants one fact (and its update) in a user's sessions, with its questions. */
function plantFact(r: Rng, kind: FactKind, userId: string, sessions: Outline[], plan: Plan) {
	const { slots, prev } = kind.values(r.pick);
	const starts = sessions.map((s) => s.start);
	const at = placesOf(r, starts, prev !== undefined && kind.updates !== undefined);
	const updated = prev !== undefined && at.update !== undefined;
	const count = prev !== undefined && kind.updates ? QUESTIONS.updated : QUESTIONS.stable;
	// A question may name the older value ("after leaving Lyon"): only when the fact was updated.
	const known = updated && prev ? { ...slots, ...prefixed(prev) } : slots;
	const askable = kind.questions.filter((q) => updated || !q.includes('{prev_'));
	const asked = r.sample(askable, count).map((q) => fill(q, known));
	const addQuestions = questionsOf(kind, userId, asked, plan);
	const template = r.pick(kind.statements);
	const first = statementPair(r, kind, updated ? prev : slots, template, sessions[at.first].topic);
	let older = '';
	insert(plan, at.first, {
		...first,
		placed: (id) => (updated ? (older = id) : addQuestions(id, first.statement)),
	});
	if (updated && at.update !== undefined) {
		const both = { ...slots, ...prefixed(prev) };
		const later = sessions[at.update].topic;
		const update = statementPair(r, kind, both, r.pick(kind.updates ?? []), later);
		// Sessions are built in time order: the older statement is placed before this one.
		insert(plan, at.update, {
			...update,
			placed: (id) => addQuestions(id, update.statement, older),
		});
	}
	if (kind.mentions && r.chance(0.5))
		plantMention(r, kind, slots, sessions, at.update ?? at.first, plan);
}

/** A passing mention of the fact's names in a later session (not evidence: a distractor). */
function plantMention(
	r: Rng,
	kind: FactKind,
	slots: Slots,
	sessions: Outline[],
	from: number,
	plan: Plan,
) {
	const i = r.int(from, sessions.length - 1);
	const topic = sessions[i].topic;
	const mention = fill(r.pick(kind.mentions ?? []), slots);
	insert(plan, i, { pair: [`${mention} Anyway, ${lowerFirst(ask(r, topic))}`, answer(r, topic)] });
}

const lowerFirst = (s: string) => s[0].toLowerCase() + s.slice(1);

/** A session before its turns are written: when it starts and what it is about. */
interface Outline {
	id: string;
	start: number;
	topic: Topic;
	/** A second topic the conversation drifts to. */
	aside: Topic;
}

/** A session's turns: filler pairs with the planted ones inserted at random places. */
function buildSession(
	r: Rng,
	userId: string,
	o: Outline,
	planted: Planted[],
	pairs: [number, number],
): Session {
	// No request twice in one conversation: the session's requests are drawn without replacement.
	const asks = [o.topic, o.aside].flatMap((topic) => topic.asks.map((a) => ({ a, topic })));
	const all: Planted[] = r
		.sample(asks, r.int(pairs[0], pairs[1]))
		.map(({ a, topic }) => ({ pair: [ask(r, topic, a), answer(r, topic)] as Pair }));
	for (const p of planted) all.splice(r.int(0, all.length), 0, p);
	let t = o.start;
	const turns: Turn[] = [];
	for (const { pair, factAt, placed } of all) {
		const first = turns.length;
		pair.forEach((text, k) => {
			t += k === 0 ? r.int(60, 240) * 1000 : r.int(15, 60) * 1000;
			const role = k === 0 ? 'user' : 'assistant';
			turns.push({
				id: `${o.id}/${turns.length}`,
				sessionId: o.id,
				userId,
				role,
				text,
				at: new Date(t),
			});
		});
		placed?.(turns[first + (factAt ?? 0)].id);
	}
	return { id: o.id, userId, topic: o.topic.name, turns };
}

/** One user's sessions, in time order, with its facts planted. */
function userSessions(r: Rng, userNo: number, o: Required<GenerateOptions>) {
	const userId = `user-${userNo}`;
	const n = Math.max(
		1,
		r.int(Math.round(o.sessionsPerUser * 0.75), Math.round(o.sessionsPerUser * 1.25)),
	);
	const starts = Array.from({ length: n }, () => {
		const day = START + Math.floor(r.float() * DAYS) * DAY_MS;
		return day + r.int(7 * 60, 22 * 60) * 60_000;
	}).sort((a, b) => a - b);
	const outlines = starts.map((start, i) => ({
		id: `u${userNo}-s${String(i + 1).padStart(2, '0')}`,
		start,
		...(([topic, aside]) => ({ topic, aside }))(r.sample(TOPICS, 2)),
	}));
	const plan: Plan = { inserts: new Map(), questions: [] };
	if (o.facts)
		for (const kind of [...UPDATED, ...r.sample(STABLE, STABLE.length - 3)])
			plantFact(r, kind, userId, outlines, plan);
	const sessions = outlines.map((s, i) =>
		buildSession(r, userId, s, plan.inserts.get(i) ?? [], o.pairs),
	);
	return { sessions, questions: plan.questions };
}

/** The benchmark's conversations and questions; the same options give the same data. */
export function generate(options: GenerateOptions = {}): Dataset {
	const o: Required<GenerateOptions> = {
		seed: options.seed ?? 20250106,
		users: options.users ?? 8,
		sessionsPerUser: options.sessionsPerUser ?? 40,
		pairs: options.pairs ?? [3, 9],
		facts: options.facts ?? true,
	};
	const r = new Rng(o.seed);
	const users: string[] = [];
	const sessions: Session[] = [];
	const questions: Question[] = [];
	for (let u = 1; u <= o.users; u++) {
		const made = userSessions(r, u, o);
		users.push(`user-${u}`);
		sessions.push(...made.sessions);
		questions.push(...made.questions);
	}
	sessions.sort((a, b) => a.turns[0].at.getTime() - b.turns[0].at.getTime());
	const last = Math.max(...sessions.map((s) => s.turns[s.turns.length - 1].at.getTime()));
	const end = new Date(Math.floor(last / DAY_MS + 1) * DAY_MS + 9 * 3_600_000);
	return { users, sessions, questions, end };
}
