// What memory keeps of a tool turn's steps, decided once, when the turn is stored: the whole tool results
// (cut at a number of characters), a one-line note of each result in its place, or no tool steps at all.
// Turns stored earlier stay as they were stored: the policy never rewrites history.
import { InvalidOptionError } from '../errors';
import type { ToolCall } from '../prompt/types';
import type { ReplyInput } from './memory-types';

/**
 * `keep`: tool results are stored, each cut at `maxToolOutputChars` with a note of what was cut.
 * `note`: the tool calls are stored, and each result becomes a one-line note of its size and tool.
 * `leaveOut`: a tool turn is stored as its user message and its final answer only.
 */
export const TOOL_RESULTS_MODES = ['keep', 'note', 'leaveOut'] as const;
export type ToolResultsMode = (typeof TOOL_RESULTS_MODES)[number];

/** Default cap of a stored tool result: a web page or a table dump would otherwise crowd out history. */
export const DEFAULT_MAX_TOOL_OUTPUT_CHARS = 16_000;

/** The policy a memory applies to every tool turn it stores. */
export interface ToolResultsPolicy {
	mode: ToolResultsMode;
	/** With `keep`: the most characters of one tool result that are stored. */
	maxChars: number;
}

/**
 * The policy of these options, checked: an unknown mode or a cap that is not a whole number ≥ 0 is an
 * InvalidOptionError naming the option (thrown when the memory is built, before anything is stored).
 */
export function toolResultsPolicy(options: {
	toolResults?: unknown;
	maxToolOutputChars?: unknown;
}): ToolResultsPolicy {
	const mode = options.toolResults === undefined ? 'keep' : options.toolResults;
	if (!TOOL_RESULTS_MODES.includes(mode as ToolResultsMode))
		throw new InvalidOptionError(
			'toolResults',
			`must be one of ${TOOL_RESULTS_MODES.map((m) => `"${m}"`).join(', ')}, got ${JSON.stringify(mode) ?? String(mode)}`,
		);
	const maxChars =
		options.maxToolOutputChars === undefined
			? DEFAULT_MAX_TOOL_OUTPUT_CHARS
			: options.maxToolOutputChars;
	if (typeof maxChars !== 'number' || !Number.isSafeInteger(maxChars) || maxChars < 0)
		throw new InvalidOptionError(
			'maxToolOutputChars',
			`must be a whole number of characters ≥ 0, got ${JSON.stringify(maxChars) ?? String(maxChars)}`,
		);
	return { mode: mode as ToolResultsMode, maxChars };
}

/** 51234 → "51,234" (whatever the process's locale). */
function grouped(n: number): string {
	return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** The note that stands for a tool result not kept: "[tool result of NAME: 51,234 characters, not kept in memory]". */
export function toolResultNote(name: string | undefined, chars: number): string {
	const of = name ? ` of ${name}` : '';
	return `[tool result${of}: ${grouped(chars)} character${chars === 1 ? '' : 's'}, not kept in memory]`;
}

/** A note toolResultNote wrote (a noted turn handed back, as a Chat Memory Manager delete re-adds turns). */
const NOTE = /^\[tool result(?: of [^\n]*)?: [\d,]+ characters?, not kept in memory\]$/;
/** The end of a result capToolOutput cut. */
const CUT = /\n\[… \d+ more characters of tool output were not kept in memory\]$/;

/**
 * A tool result cut at `max` characters, with a note of how many more there were. A result cut before
 * (to `max` characters or fewer) is kept as it is, so a turn handed back is not cut again.
 */
export function capToolOutput(content: string, max: number): string {
	if (content.length <= max) return content;
	const cut = CUT.exec(content);
	if (cut && cut.index <= max) return content;
	return `${content.slice(0, max)}\n[… ${content.length - max} more characters of tool output were not kept in memory]`;
}

/** The note of a result; a note stays as it is (never a note of a note). */
function noted(content: string, name: string | undefined): string {
	return NOTE.test(content) ? content : toolResultNote(name, content.length);
}

/** The tool's name of a result: its own, or the one of the call it answers. */
function toolName(
	result: Extract<ReplyInput, { role: 'tool' }>,
	calls: ReadonlyMap<string, ToolCall>,
) {
	return result.name ?? calls.get(result.toolCallId)?.name;
}

/**
 * A turn's steps as the policy stores them, in their order, each result still paired with its call by
 * `toolCallId`: results cut (`keep`), results replaced by their note (`note`), or none (`leaveOut`).
 */
export function applyToolResults(
	steps: readonly ReplyInput[],
	policy: ToolResultsPolicy,
): ReplyInput[] {
	if (policy.mode === 'leaveOut') return [];
	const calls = new Map<string, ToolCall>();
	return steps.map((step) => {
		if (step.role === 'assistant') {
			for (const c of step.toolCalls) calls.set(c.id, c);
			return step;
		}
		const content =
			policy.mode === 'note'
				? noted(step.content, toolName(step, calls))
				: capToolOutput(step.content, policy.maxChars);
		return { ...step, content };
	});
}
