/**
 * How the demo model (the tests' one stand-in) answers a request to summarize older turns
 * (Summarize Older Turns): an extractive summary, a pure function of the request, so tests can say which
 * facts it keeps. It keeps the sentences of the summary so far, then, from the new turns, the user's
 * sentences that carry a number or a name (a capitalised word after the first), oldest first, each once,
 * as long as they fit the token cap the request states (4 characters a token, with room left for the
 * section's header). Assistant lines are left out: the demo model's own replies are not facts.
 */
import { SUMMARY_INSTRUCTIONS } from '../src/history/summary-text';
import { contentText } from './messages';
import type { ChatMessage } from './messages';

/** Whether a chat request is LLM with Memory's or the LLM Memory Store's request for a summary. */
export function isSummaryRequest(messages: ChatMessage[]): boolean {
	const first = messages[0];
	return first?.role === 'system' && contentText(first.content).startsWith(SUMMARY_INSTRUCTIONS);
}

const NOTHING = 'Nothing to note yet.';
const REQUEST = /^Summary so far:\n([\s\S]*?)\n\nNew turns, oldest first:\n([\s\S]*)$/;

function sentences(text: string): string[] {
	return text
		.split(/(?<=[.!?])\s+|\n+/)
		.map((s) => s.trim())
		.filter(Boolean);
}

/** A sentence worth keeping: it holds a number, or a capitalised word that does not start it. */
export function isFactual(sentence: string): boolean {
	return /\d/.test(sentence) || /\s[A-Z][a-z]+/.test(sentence);
}

/** The summary the demo model answers a summary request with (see the top of this file). */
export function extractiveSummary(messages: ChatMessage[]): string {
	const cap = Number(/at most (\d+) tokens/.exec(contentText(messages[0]?.content))?.[1] ?? 200);
	const request = contentText(messages.at(-1)?.content);
	const [, previous = '', turns = ''] = REQUEST.exec(request) ?? [];
	const kept = sentences(previous).filter((s) => s !== '(none yet)' && s !== NOTHING);
	const fresh = turns
		.split('\n')
		.filter((line) => line.startsWith('User: '))
		.flatMap((line) => sentences(line.slice('User: '.length)))
		.filter(isFactual);
	const room = Math.max(0, cap - 60) * 4;
	let length = kept.join(' ').length;
	for (const s of fresh) {
		if (kept.includes(s) || length + s.length + 1 > room) continue;
		kept.push(s);
		length += s.length + 1;
	}
	return kept.join(' ') || NOTHING;
}
