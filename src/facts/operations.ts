// Applying changes of belief to a facts document: the operations a model proposed (each kept only if
// its quote is found in the turns it read, so an invented fact never enters memory), and a person's
// edits. Pure functions over a copy of the document: a compare-and-swap that lost its race applies
// the same operations again to the newer document, checking quotes and IDs anew.
import { InvalidInputError } from '../errors';
import { MAX_FACT_CHARS, MAX_FACTS, statusOf } from './records';
import type { Evidence, Fact, FactsDocument, PersonEvidence, QuoteEvidence } from './records';

/** One message of a chat, as fact extraction reads it. */
export interface ReadMessage {
	messageId: string;
	role: 'user' | 'assistant';
	text: string;
	/** When it was stored (ISO 8601). */
	at: string;
	/** Its tokens, as stored with it (default: about 4 characters a token). */
	tokens?: number;
}

/** The chat memory the messages come from. */
export interface FactsSource {
	workflowId?: string;
	conversationId: string;
	/** Node mode: the node whose memory it is. */
	nodeId?: string;
}

/** What a model may propose: each with the words, verbatim, of the message that supports it. */
export type FactOperation =
	| { op: 'add'; text: string; quote: string; messageId?: string }
	| { op: 'update'; id: string; text: string; quote: string; messageId?: string }
	| { op: 'retire'; id: string; reason: string; quote: string; messageId?: string };

/** Why a proposed operation was not applied. */
export type DropReason = 'invalid' | 'unquoted' | 'unknownFact' | 'repeat' | 'full';

export interface Applied {
	added: Fact[];
	updated: Array<{ from: Fact; to: Fact }>;
	retired: Fact[];
	dropped: Record<DropReason, number>;
}

/** A quote must hold at least this many characters (normalized): "yes" proves nothing. */
export const MIN_QUOTE_CHARS = 8;

/** Text as quotes are compared: Unicode-normalized, typographic quotes and dashes plain, case and spacing folded. */
export function normalize(text: string): string {
	return text
		.normalize('NFKC')
		.replace(/[\u2018\u2019\u02bc\u2032`]/g, "'")
		.replace(/[\u201c\u201d\u2033]/g, '"')
		.replace(/[\u2013\u2014]/g, '-')
		.toLowerCase()
		.replace(/\s+/g, ' ')
		.trim();
}

export function noDrops(): Record<DropReason, number> {
	return { invalid: 0, unquoted: 0, unknownFact: 0, repeat: 0, full: 0 };
}

/** The message that holds the quote: the one named if it does, else the newest that does. */
export function findQuote(
	quote: string,
	messageId: string | undefined,
	messages: readonly ReadMessage[],
	roles: ReadonlySet<string>,
): ReadMessage | undefined {
	const q = normalize(quote);
	if (q.length < MIN_QUOTE_CHARS) return undefined;
	const holds = (m: ReadMessage) => roles.has(m.role) && normalize(m.text).includes(q);
	const named = messages.find((m) => m.messageId === messageId);
	if (named && holds(named)) return named;
	return [...messages].reverse().find(holds);
}

const words = (text: string) =>
	new Set(
		normalize(text)
			.split(/[^\p{L}\p{N}]+/u)
			.filter(Boolean),
	);

/** Whether a proposed fact repeats a current one: the same text, or the same evidence saying much the same. */
function repeats(doc: FactsDocument, text: string, evidence: QuoteEvidence): boolean {
	const t = normalize(text);
	const mine = words(text);
	return doc.facts.some((f) => {
		if (statusOf(f) !== 'current') return false;
		if (normalize(f.text) === t) return true;
		const e = f.evidence;
		if (e.kind !== 'quote' || e.message_id !== evidence.message_id) return false;
		if (normalize(e.quote) !== normalize(evidence.quote)) return false;
		const theirs = words(f.text);
		const shared = [...mine].filter((w) => theirs.has(w)).length;
		return shared * 2 >= Math.min(mine.size, theirs.size);
	});
}

/** Room for one more fact: the oldest superseded or retired facts leave the document past MAX_FACTS. */
function makeRoom(doc: FactsDocument): boolean {
	if (doc.facts.length < MAX_FACTS) return true;
	const ended = (f: Fact) => f.retired?.at ?? f.superseded?.at ?? '';
	const old = doc.facts
		.filter((f) => statusOf(f) !== 'current')
		.sort((a, b) => (ended(a) < ended(b) ? -1 : ended(a) > ended(b) ? 1 : 0));
	if (old.length === 0) return false;
	const gone = new Set(old.slice(0, doc.facts.length - MAX_FACTS + 1).map((f) => f.id));
	doc.facts = doc.facts.filter((f) => !gone.has(f.id));
	return true;
}

function newFact(doc: FactsDocument, text: string, evidence: Evidence, validFrom: string): Fact {
	const fact: Fact = {
		id: `f${doc.next_id++}`,
		text: text.trim(),
		evidence,
		valid_from: validFrom,
	};
	doc.facts.push(fact);
	return fact;
}

/** Context of one extraction: the turns it read, where they come from, and when. */
export interface ExtractionContext {
	messages: readonly ReadMessage[];
	source: FactsSource;
	/** When the facts were learned. */
	now: string;
	/** Roles whose messages may be quoted (default: the user's only). */
	roles: ReadonlySet<string>;
}

function quoteEvidence(op: FactOperation, m: ReadMessage, ctx: ExtractionContext): QuoteEvidence {
	const { workflowId, conversationId, nodeId } = ctx.source;
	return {
		kind: 'quote',
		quote: op.quote.trim().slice(0, MAX_FACT_CHARS),
		message_id: m.messageId,
		role: m.role,
		conversation_id: conversationId,
		...(workflowId !== undefined ? { workflow_id: workflowId } : {}),
		...(nodeId !== undefined ? { node_id: nodeId } : {}),
		said_at: m.at,
		learned_at: ctx.now,
	};
}

/** Applies one operation whose quote was found; returns why not when it was dropped. */
function applyOne(
	doc: FactsDocument,
	op: FactOperation,
	evidence: QuoteEvidence,
	out: Applied,
): DropReason | undefined {
	const at = evidence.said_at;
	if (op.op === 'add') {
		if (repeats(doc, op.text, evidence)) return 'repeat';
		if (!makeRoom(doc)) return 'full';
		out.added.push(newFact(doc, op.text, evidence, at));
		return undefined;
	}
	const target = doc.facts.find((f) => f.id === op.id);
	if (!target || statusOf(target) !== 'current') return 'unknownFact';
	if (op.op === 'retire') {
		target.retired = { at, reason: op.reason.trim(), evidence };
		out.retired.push(target);
		return undefined;
	}
	if (normalize(op.text) === normalize(target.text) || repeats(doc, op.text, evidence))
		return 'repeat';
	if (!makeRoom(doc)) return 'full';
	const to = newFact(doc, op.text, evidence, at);
	target.superseded = { at, by: to.id };
	out.updated.push({ from: target, to });
	return undefined;
}

/**
 * Applies proposed operations to a copy of `doc`, in order: only those whose quote is found in a
 * message of `ctx.messages` the roles allow (normalized for case and spacing) and whose fact (for
 * update and retire) is current. The rest are dropped and counted.
 */
export function applyExtracted(
	stored: FactsDocument,
	ops: readonly FactOperation[],
	ctx: ExtractionContext,
): { doc: FactsDocument; applied: Applied } {
	const doc = structuredClone(stored) as FactsDocument;
	const applied: Applied = { added: [], updated: [], retired: [], dropped: noDrops() };
	for (const op of ops) {
		const m = findQuote(op.quote, op.messageId, ctx.messages, ctx.roles);
		const why = m ? applyOne(doc, op, quoteEvidence(op, m, ctx), applied) : 'unquoted';
		if (why) applied.dropped[why]++;
	}
	return { doc, applied };
}

/** A person's edit, checked: the text and who made it. */
export function checkText(field: string, value: unknown): string {
	if (typeof value !== 'string' || value.trim() === '')
		throw new InvalidInputError(field, 'must be a non-empty text');
	if (value.trim().length > MAX_FACT_CHARS)
		throw new InvalidInputError(field, `must be at most ${MAX_FACT_CHARS} characters`);
	return value.trim();
}

export function personEvidence(by: unknown, at: string, note?: unknown): PersonEvidence {
	return {
		kind: 'person',
		by: checkText('by', by),
		at,
		...(note !== undefined && note !== '' ? { note: checkText('note', note) } : {}),
	};
}

export function hasRoomForOne(doc: FactsDocument): boolean {
	return makeRoom(doc);
}

export { newFact };
