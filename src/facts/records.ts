// The facts document: what was learned about one subject, kept as the data of versions (each change
// of belief a new version). Each fact carries its evidence: the quoted words with the message,
// conversation and workflow they came from, or the person who wrote it by hand. Superseded and
// retired facts stay in the document, marked, so history shows what was believed and why it changed.
import { z } from 'zod';

import { CorruptDocumentError } from '../errors';
import { parse } from '../store/parse';

export const FACTS_FORMAT = 'n8n-nodes-llm-memory/facts';
export const FACTS_FORMAT_VERSION = 1;
/** The most characters of a fact's text, a quote, a reason or a note. */
export const MAX_FACT_CHARS = 500;
/** Facts a document keeps: past this, the oldest superseded or retired ones leave the current version. */
export const MAX_FACTS = 2000;

/** Evidence of a fact learned from a chat: the words quoted, and where and when they were said. */
export interface QuoteEvidence {
	kind: 'quote';
	/** The words as the message has them (found in it, case and spacing aside). */
	quote: string;
	/** The chat message that holds them. */
	message_id: string;
	/** Who said it: "user" or "assistant". */
	role: string;
	conversation_id: string;
	workflow_id?: string;
	/** The node whose memory held the message (Node mode). */
	node_id?: string;
	/** When the message was stored. */
	said_at: string;
	/** When the fact was learned from it. */
	learned_at: string;
}

/** Evidence of a fact a person wrote, corrected or retired by hand. */
export interface PersonEvidence {
	kind: 'person';
	/** Who (as the caller names them: a user name, an e-mail). */
	by: string;
	at: string;
	note?: string;
}

export type Evidence = QuoteEvidence | PersonEvidence;

export interface Fact {
	/** `f1`, `f2`, … unique within the document, never reused. */
	id: string;
	/** What is known, as one short statement ("Has a dog named Biscuit"). */
	text: string;
	evidence: Evidence;
	/** When it became true (the time of its evidence, or as a person gave it). */
	valid_from: string;
	/** Replaced by a newer fact (`by`): no longer true from `at`. */
	superseded?: { at: string; by: string };
	/** No longer true from `at`, with nothing in its place, and why. */
	retired?: { at: string; reason: string; evidence: Evidence };
}

/** How far the facts read one chat memory: its last message read. */
export interface Cursor {
	workflow_id?: string;
	conversation_id: string;
	node_id?: string;
	message_id: string;
	/** When that message was stored: messages of another thread newer than this are unread. */
	at: string;
}

export interface FactsDocument {
	format: typeof FACTS_FORMAT;
	version: typeof FACTS_FORMAT_VERSION;
	/** The number the next fact's ID takes. */
	next_id: number;
	facts: Fact[];
	cursors: Cursor[];
}

export type FactStatus = 'current' | 'superseded' | 'retired';

export function statusOf(fact: Fact): FactStatus {
	return fact.retired ? 'retired' : fact.superseded ? 'superseded' : 'current';
}

export function emptyFacts(): FactsDocument {
	return {
		format: FACTS_FORMAT,
		version: FACTS_FORMAT_VERSION,
		next_id: 1,
		facts: [],
		cursors: [],
	};
}

const text = z.string().min(1).max(MAX_FACT_CHARS);
const time = z.iso.datetime({ offset: true });
const id = z.string().min(1).max(216);

const quoteEvidence = z.looseObject({
	kind: z.literal('quote'),
	quote: text,
	message_id: id,
	role: z.string().min(1).max(32),
	conversation_id: id,
	workflow_id: id.optional(),
	node_id: id.optional(),
	said_at: time,
	learned_at: time,
});
const personEvidence = z.looseObject({
	kind: z.literal('person'),
	by: text,
	at: time,
	note: text.optional(),
});
const evidence = z.discriminatedUnion('kind', [quoteEvidence, personEvidence]);

const fact = z.looseObject({
	id: z.string().regex(/^f[1-9]\d*$/),
	text,
	evidence,
	valid_from: time,
	superseded: z.looseObject({ at: time, by: z.string().min(1) }).optional(),
	retired: z.looseObject({ at: time, reason: text, evidence }).optional(),
});

const cursor = z.looseObject({
	workflow_id: id.optional(),
	conversation_id: id,
	node_id: id.optional(),
	message_id: id,
	at: time,
});

const document = z.looseObject({
	format: z.literal(FACTS_FORMAT),
	version: z.literal(FACTS_FORMAT_VERSION),
	next_id: z.number().int().min(1),
	facts: z.array(fact),
	cursors: z.array(cursor),
});

/** A facts document read back (a version's data): CorruptDocumentError naming `where` otherwise. */
export function validateFacts(where: string, value: unknown): FactsDocument {
	const doc = parse<FactsDocument>(where, document, value);
	const ids = new Set<string>();
	for (const f of doc.facts) {
		if (ids.has(f.id)) throw new CorruptDocumentError(where, `fact ${f.id} appears twice`);
		if (Number(f.id.slice(1)) >= doc.next_id)
			throw new CorruptDocumentError(where, `fact ${f.id} is not below next_id ${doc.next_id}`);
		ids.add(f.id);
	}
	return doc;
}

/** Whether two cursors read the same chat memory. */
export function sameSource(a: Omit<Cursor, 'message_id' | 'at'>, b: Cursor): boolean {
	return (
		a.conversation_id === b.conversation_id &&
		(a.workflow_id ?? '') === (b.workflow_id ?? '') &&
		(a.node_id ?? '') === (b.node_id ?? '')
	);
}
