// The words of a summary of older turns: the request that folds new turns into it, and the marked
// section the model then sees before the history. Both are pure functions of what is stored, so the
// section is byte-for-byte the same on every turn until the summary is replaced.
import type { PromptMessage } from '../prompt/types';
import type { StoredFile, StoredMessage } from '../store/schema';
import type { TokenCounter } from '../tokens/tokens';
import type { StoredSummary } from './summary-store';
import type { Turn } from './truncate';

export const SUMMARY_START = '[Summary of earlier turns]';
export const SUMMARY_END = '[End of summary]';
/** The first words of every summarization request (the demo model recognises them). */
export const SUMMARY_INSTRUCTIONS =
	'You keep the running summary of a conversation between a user and an assistant.';

const day = (iso: string) => iso.slice(0, 10);

function coverage(s: Pick<StoredSummary, 'turns' | 'first_at' | 'last_at'>): string {
	const turns = s.turns === 1 ? 'The earlier turn' : `The ${s.turns} earlier turns`;
	const first = day(s.first_at);
	const last = day(s.last_at);
	const dates = first === last ? `on ${first}` : `from ${first} to ${last}`;
	return `${turns} of this conversation (${dates}), summarized; the turns after them follow in full:`;
}

function frame(s: Pick<StoredSummary, 'turns' | 'first_at' | 'last_at'>, text: string): string {
	return [SUMMARY_START, coverage(s), text, SUMMARY_END].join('\n');
}

/**
 * The marked section for a summary within `maxTokens` (markers and header included): the whole text,
 * or its longest start that fits, cut at a word and marked "…". Undefined when not even the frame fits.
 */
export function summarySection(
	s: StoredSummary,
	maxTokens: number,
	counter: Pick<TokenCounter, 'count'>,
): { section: string; tokens: number; text: string } | undefined {
	const text = s.text.trim();
	const whole = frame(s, text);
	const tokens = counter.count(whole);
	if (tokens <= maxTokens) return { section: whole, tokens, text };
	// Binary search over the text's length: about log2(characters) counts of a short section.
	let lo = 0;
	let hi = text.length;
	let best: { section: string; tokens: number; text: string } | undefined;
	while (lo <= hi) {
		const mid = (lo + hi) >> 1;
		const cut = text.slice(0, mid).replace(/\s+\S*$/, '');
		const shown = cut ? `${cut} …` : '…';
		const section = frame(s, shown);
		const n = counter.count(section);
		if (n <= maxTokens) {
			best = { section, tokens: n, text: shown };
			lo = mid + 1;
		} else hi = mid - 1;
	}
	return best;
}

function fileNote(f: StoredFile): string {
	const what = [f.name, f.mime_type].filter((x) => x).join(', ');
	return ` [${f.type} file${what ? `: ${what}` : ''}]`;
}

function messageLine(m: StoredMessage): string[] {
	const files = m.files.map(fileNote).join('');
	if (m.role === 'user') return [`User: ${m.content}${files}`];
	if (m.role === 'tool') return [`Tool${m.name ? ` ${m.name}` : ''} returned: ${m.content}`];
	const lines = m.content || files ? [`Assistant: ${m.content}${files}`] : [];
	for (const c of m.tool_calls ?? [])
		lines.push(`Assistant called the tool ${c.name} with ${JSON.stringify(c.args)}`);
	return lines;
}

/** Whole turns as text, oldest first, each dated: tool calls with their results, files as notes. */
export function turnsText(turns: readonly Turn[]): string {
	return turns
		.map((t) =>
			[`(${day(t.user.created_at)})`, ...[t.user, ...t.replies].flatMap(messageLine)].join('\n'),
		)
		.join('\n\n');
}

/** The request that folds `turns` (oldest first) into the previous summary, within `maxTokens`. */
export function summaryRequest(
	previous: string | undefined,
	turns: readonly Turn[],
	maxTokens: number,
): PromptMessage[] {
	const words = Math.max(10, Math.floor(maxTokens * 0.6));
	return [
		{
			role: 'system',
			content: [
				SUMMARY_INSTRUCTIONS,
				'Fold the new turns into the summary so far and write the updated summary.',
				'Keep every fact that may matter later: names, numbers, dates, decisions, preferences, open questions, what tools returned and which files were shared. Leave out small talk.',
				`Plain sentences, oldest first, no preamble; at most ${maxTokens} tokens (about ${words} words).`,
			].join(' '),
		},
		{
			role: 'user',
			content: `Summary so far:\n${previous?.trim() || '(none yet)'}\n\nNew turns, oldest first:\n${turnsText(turns)}`,
		},
	];
}
