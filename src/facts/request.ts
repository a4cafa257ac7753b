// The words of a fact extraction: the request a chat model gets (the facts held now, the turns not yet
// read, and how to answer), and the section a later model call sees of the current facts.
import type { PromptMessage } from '../prompt/types';
import type { TokenCounter } from '../tokens/tokens';
import type { ReadMessage } from './operations';
import { statusOf } from './records';
import type { Fact, FactsDocument } from './records';

/** The first words of every extraction request (the demo model recognises them). */
export const FACTS_INSTRUCTIONS =
	'You keep the list of facts an assistant knows about its user, learned from their chats.';

const RULES = `${FACTS_INSTRUCTIONS}
Read the new messages and say what changes in the list, as JSON and nothing else:
{"operations": [
  {"op": "add", "text": "<new fact>", "quote": "<words copied from a message>", "messageId": "<its ID>"},
  {"op": "update", "id": "<ID of a fact in the list>", "text": "<what is true now>", "quote": "…", "messageId": "…"},
  {"op": "retire", "id": "<ID of a fact in the list>", "reason": "<why it no longer holds>", "quote": "…", "messageId": "…"}
]}
- add: something lasting about the user (who they are, people and pets, where they live and work, plans, preferences, what they own) not in the list yet.
- update: a fact in the list has changed (they moved, changed jobs): the new fact replaces the old one.
- retire: a fact in the list is no longer true and nothing replaces it.
- Every operation needs a quote: words copied exactly from one of the new messages that say it, at least a few words, and that message's ID. An operation whose quote is not in those messages is thrown away.
- Only what the messages say, never a guess. Nothing worth keeping: {"operations": []}.
- Write each fact as one short statement without the user's name, e.g. "Has a dog named Biscuit".`;

const day = (iso: string) => iso.slice(0, 10);

/** Current facts given to the extraction at most (the newest): the list's end is what changes most. */
export const MAX_FACTS_IN_REQUEST = 300;

/** The extraction request: the rules, the current facts, and the messages not read yet. */
export function extractionRequest(
	doc: FactsDocument,
	messages: readonly ReadMessage[],
	roles: ReadonlySet<string>,
): PromptMessage[] {
	const current = doc.facts.filter((f) => statusOf(f) === 'current').slice(-MAX_FACTS_IN_REQUEST);
	const known = current.length
		? current.map((f) => `- ${f.id} (since ${day(f.valid_from)}): ${f.text}`).join('\n')
		: '(none yet)';
	const quotable = [...roles].sort().join(' and ');
	const lines = messages.map(
		(m) => `[${m.messageId}] ${m.role}, ${day(m.at)}: ${m.text.replace(/\s+/g, ' ').trim()}`,
	);
	return [
		{ role: 'system', content: RULES },
		{
			role: 'user',
			content: [
				`Facts known now:\n${known}`,
				`New messages, oldest first (quote only ${quotable} messages):\n${lines.join('\n')}`,
				'Answer with the JSON only.',
			].join('\n\n'),
		},
	];
}

export const FACTS_START = '[What you know about this user]';
export const FACTS_END = '[End of what you know about this user]';
const HEADER =
	'Facts learned from earlier conversations, with the date each became true (oldest first). What the user says now takes precedence.';

/** The facts section a model call gets, and what it holds. */
export interface FactsSection {
	/** '' when there are no current facts (or not even one fits). */
	section: string;
	tokens: number;
	/** The facts in it, oldest first. */
	facts: Fact[];
	/** Current facts left out for the budget (the oldest go first). */
	omitted: number;
}

const line = (f: Fact) => `- ${day(f.valid_from)}: ${f.text.replace(/\s+/g, ' ').trim()}`;

/**
 * The current facts as one marked section within `budget` tokens, dated and oldest first: the newest
 * facts that fit (a fact's line is counted whole, never cut). Superseded and retired facts never appear.
 */
export function factsSection(
	doc: FactsDocument,
	budget: number,
	counter: Pick<TokenCounter, 'count'>,
): FactsSection {
	const current = doc.facts
		.filter((f) => statusOf(f) === 'current')
		.sort((a, b) => (a.valid_from < b.valid_from ? -1 : a.valid_from > b.valid_from ? 1 : 0));
	const none: FactsSection = { section: '', tokens: 0, facts: [], omitted: current.length };
	if (current.length === 0) return none;
	// Each line is preceded by a newline; the frame's count holds the rest.
	let used = counter.count([FACTS_START, HEADER, FACTS_END].join('\n'));
	if (used > budget) return none;
	const chosen: Fact[] = [];
	for (let i = current.length - 1; i >= 0; i--) {
		const n = counter.count(`\n${line(current[i])}`);
		if (used + n > budget) break;
		used += n;
		chosen.unshift(current[i]);
	}
	// Counted again whole: a tokenizer may merge across the joins; never report less than is sent.
	for (; chosen.length > 0; chosen.shift()) {
		const section = [FACTS_START, HEADER, ...chosen.map(line), FACTS_END].join('\n');
		const tokens = counter.count(section);
		if (tokens <= budget)
			return { section, tokens, facts: chosen, omitted: current.length - chosen.length };
	}
	return none;
}
