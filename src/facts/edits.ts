// A person's edits of the facts: add one, correct one (a new fact supersedes it), retire one, or roll
// the beliefs back to an earlier version. Each is evidence too (who and when), and each is one new
// version of the document, so it shows in history and can itself be rolled back.
import { InvalidInputError, UnknownFactError } from '../errors';
import { checkText, hasRoomForOne, newFact, personEvidence } from './operations';
import { statusOf } from './records';
import type { Fact, FactsDocument } from './records';

export interface AddFactInput {
	text: string;
	/** Who writes it (a user name, an e-mail): kept as its evidence. */
	by: string;
	note?: string;
	/** When it became true (default: now). */
	validFrom?: string | Date;
}

export interface EditFactInput {
	/** What is true instead. */
	text: string;
	by: string;
	note?: string;
}

export interface RetireFactInput {
	/** Why it no longer holds. */
	reason: string;
	by: string;
}

function timeOf(value: string | Date | undefined, now: string): string {
	if (value === undefined) return now;
	const t = value instanceof Date ? value.getTime() : Date.parse(value);
	if (!Number.isFinite(t)) throw new InvalidInputError('validFrom', 'must be a date and time');
	return new Date(t).toISOString();
}

/** The current fact `id` of a copy of the document, or UnknownFactError. */
function currentFact(doc: FactsDocument, id: unknown, scope: string): Fact {
	if (typeof id !== 'string' || id === '') throw new InvalidInputError('id', 'must be a fact ID');
	const fact = doc.facts.find((f) => f.id === id);
	if (!fact) throw new UnknownFactError(scope, id, 'missing');
	const status = statusOf(fact);
	if (status !== 'current') throw new UnknownFactError(scope, id, status);
	return fact;
}

function full(): never {
	throw new InvalidInputError(
		'text',
		'the facts document is full of current facts: retire some before adding more',
	);
}

export function addByHand(doc: FactsDocument, input: AddFactInput, now: string): Fact {
	const text = checkText('text', input?.text);
	const evidence = personEvidence(input.by, now, input.note);
	if (!hasRoomForOne(doc)) full();
	return newFact(doc, text, evidence, timeOf(input.validFrom, now));
}

export function editByHand(
	doc: FactsDocument,
	id: string,
	input: EditFactInput,
	now: string,
	scope: string,
): { from: Fact; to: Fact } {
	const text = checkText('text', input?.text);
	const evidence = personEvidence(input.by, now, input.note);
	const from = currentFact(doc, id, scope);
	if (!hasRoomForOne(doc)) full();
	const to = newFact(doc, text, evidence, now);
	from.superseded = { at: now, by: to.id };
	return { from, to };
}

export function retireByHand(
	doc: FactsDocument,
	id: string,
	input: RetireFactInput,
	now: string,
	scope: string,
): Fact {
	const reason = checkText('reason', input?.reason);
	const evidence = personEvidence(input.by, now);
	const fact = currentFact(doc, id, scope);
	fact.retired = { at: now, reason, evidence };
	return fact;
}

/**
 * The beliefs of an earlier version, as a new document: its facts, with the current document's read
 * positions (the turns read since stay read: a rollback is not undone by learning them again) and
 * next ID (IDs are never reused).
 */
export function rolledBack(current: FactsDocument, earlier: FactsDocument): FactsDocument {
	return {
		...current,
		next_id: Math.max(current.next_id, earlier.next_id),
		facts: structuredClone(earlier.facts) as Fact[],
		cursors: structuredClone(current.cursors) as FactsDocument['cursors'],
	};
}
