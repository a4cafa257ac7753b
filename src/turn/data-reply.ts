// The model's reply on a turn with versioned data: the update_data calls it made (tool calling), or
// the JSON object it replied with (models without tools), read into a checked change or why it failed,
// and the tool results the model gets back.
import { InvalidInputError } from '../errors';
import type { PromptMessage, ToolCall } from '../prompt/types';
import { proposeChange, UPDATE_DATA_TOOL } from './versioned';
import type { DataChange, OpenedData } from './versioned';

/** What the model made of the turn: its answer, and the checked change or why the change failed. */
export interface DataOutcome {
	answer: string;
	change?: DataChange;
	failure?: unknown;
}

/** A tool call as the model made it. */
export interface CallSeen {
	id: string;
	name: string;
	args: Record<string, unknown>;
	/** Why its arguments could not be read (LangChain's invalid_tool_calls). */
	invalid?: string;
}

/** The tool calls of a LangChain AIMessage, the unreadable ones included (they fail the change). */
export function toolCallsOf(reply: unknown): CallSeen[] {
	const r = reply as {
		tool_calls?: Array<{ id?: string; name?: string; args?: unknown }>;
		invalid_tool_calls?: Array<{ id?: string; name?: string; error?: string }>;
	};
	const calls: CallSeen[] = [];
	for (const c of Array.isArray(r?.tool_calls) ? r.tool_calls : [])
		calls.push({
			id: c.id || `call_${calls.length}`,
			name: String(c.name ?? ''),
			args: (typeof c.args === 'object' && c.args !== null ? c.args : {}) as Record<
				string,
				unknown
			>,
		});
	for (const c of Array.isArray(r?.invalid_tool_calls) ? r.invalid_tool_calls : [])
		calls.push({
			id: c.id || `call_${calls.length}`,
			name: String(c.name ?? ''),
			args: {},
			invalid: c.error || 'its arguments are not valid JSON',
		});
	return calls;
}

/** The change the update_data calls make, checked; or why they cannot. */
export function changeOfCalls(
	data: OpenedData,
	calls: CallSeen[],
): { change?: DataChange; failure?: unknown } {
	try {
		const unreadable = calls.find((c) => c.name === UPDATE_DATA_TOOL && c.invalid);
		if (unreadable) throw new InvalidInputError(`${UPDATE_DATA_TOOL} call`, unreadable.invalid!);
		const proposals = calls.filter((c) => c.name === UPDATE_DATA_TOOL).map((c) => c.args);
		return { change: proposeChange(data, proposals) };
	} catch (failure) {
		return { failure };
	}
}

/**
 * The messages of the follow-up call: the first ones, the model's tool-call message, and one tool
 * result per call (what was changed, or why nothing was).
 */
export function followUp(
	messages: PromptMessage[],
	firstText: string,
	calls: CallSeen[],
	outcome: { change?: DataChange; failure?: unknown },
): PromptMessage[] {
	const { change, failure } = outcome;
	const result = (c: CallSeen): string =>
		JSON.stringify(
			c.name !== UPDATE_DATA_TOOL
				? { ok: false, error: `Unknown tool "${c.name}"` }
				: failure !== undefined
					? { ok: false, error: (failure as Error).message, saved: false }
					: change
						? { ok: true, summary: change.summary, changes: change.changes }
						: { ok: true, changes: [], note: 'The data already looked like this: nothing changed' },
		);
	const toolCalls: ToolCall[] = calls.map((c) => ({ id: c.id, name: c.name, args: c.args }));
	return [
		...messages,
		{ role: 'assistant', content: firstText, tool_calls: toolCalls },
		...calls.map((c): PromptMessage => ({
			role: 'tool',
			content: result(c),
			tool_call_id: c.id,
			name: c.name,
		})),
	];
}

/** The JSON inside a reply: the whole text, or the inside of a ```json fence around it. */
function unfenced(text: string): string {
	const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/i.exec(text.trim());
	return (fenced ? fenced[1] : text).trim();
}

/**
 * A JSON reply (models without tool calling): {"answer", "patch", "summary"}. A reply that is not JSON
 * at all is the answer, with no change (models often answer questions in prose); a reply that starts
 * as JSON but does not parse, or has no "answer", fails the change.
 */
export function parseJsonReply(text: string, data: OpenedData): DataOutcome {
	const body = unfenced(text);
	if (!body.startsWith('{')) return { answer: text };
	let value: Record<string, unknown>;
	try {
		value = JSON.parse(body) as Record<string, unknown>;
	} catch (error) {
		const why = `the model's JSON reply does not parse (${(error as Error).message})`;
		return { answer: text, failure: new InvalidInputError('reply', why) };
	}
	if (typeof value !== 'object' || value === null || typeof value.answer !== 'string')
		return {
			answer: text,
			failure: new InvalidInputError('reply', 'the model\'s JSON reply has no "answer" text'),
		};
	const answer = value.answer;
	const empty =
		value.patch === undefined ||
		value.patch === null ||
		(Array.isArray(value.patch) && value.patch.length === 0);
	if (empty) return { answer };
	try {
		return { answer, change: proposeChange(data, [value]) };
	} catch (failure) {
		return { answer, failure };
	}
}
