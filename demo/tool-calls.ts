/**
 * The tool calls the demo model answers with (see model-server.ts), deterministically:
 *
 * - `[[fake:tool=NAME:ARGS]]` markers in the last user message call the offered tool NAME (matched ignoring
 *   case and punctuation) with ARGS (a JSON object, or a string sent as {"input": ARGS}); several markers
 *   make parallel calls.
 * - Without markers, when the request offers LLM with Memory's `update_data` tool (Versioned Data) and the
 *   last user message is an instruction to change one field of the working data, the answer is an
 *   `update_data` call with an RFC 6902 patch and a summary. Instructions, case-insensitive, a trailing
 *   "." or "!" ignored:
 *     set|change|update [the] FIELD to VALUE       e.g. "Change category to FRAGRANCE"
 *     set|change|update [the] FIELD = VALUE        e.g. "set notes = keep cool"
 *     change [the] FIELD from OLD to VALUE         e.g. "Change category from OTHERS to FRAGRANCE"
 *     [the] FIELD should be VALUE                  e.g. "The category should be FRAGRANCE"
 *   FIELD is a top-level member of the working data (the JSON object in the system message's
 *   "## Working data" section), matched ignoring case, with spaces or hyphens for underscores; a single
 *   word that is not a member yet is added. The patch is `replace` for a member that exists and `add` for
 *   a new one. VALUE stays text (quotes around it removed) when the member holds text or is new;
 *   otherwise it is read as JSON when it is JSON (`set noael to [1, 2]`). The summary is
 *   `Changed FIELD to VALUE`. Anything else (no working data object, an unknown multi-word field) gets
 *   the usual text answer.
 */
import { contentText } from './messages';
import type { ChatMessage } from './messages';

export interface FakeToolCall {
	id: string;
	name: string;
	/** JSON text, as OpenAI sends function arguments. */
	arguments: string;
}

/** LLM with Memory's versioned-data tool (nodes/LlmWithMemory/methods/versioned-data.ts). */
export const UPDATE_DATA_TOOL = 'update_data';

const squash = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');
const MARKER = /\[\[fake:tool=([^:\]]+):(.*?)\]\]/g;

/**
 * The tool calls a request asks for (markers, else an update_data instruction) in a conversation that
 * ends with a user message, for tools the request offers. Empty when there is nothing to call.
 */
export function requestedToolCalls(
	messages: ChatMessage[],
	body: any,
	seq: number,
): FakeToolCall[] {
	const last = messages[messages.length - 1];
	const offered: string[] = (Array.isArray(body?.tools) ? body.tools : [])
		.map((t: any) => t?.function?.name ?? t?.name)
		.filter((n: unknown): n is string => typeof n === 'string');
	if (!last || last.role !== 'user' || offered.length === 0) return [];
	const text = contentText(last.content);
	if (!/\[\[fake:tool=/.test(text)) {
		const tool = offered.find((n) => squash(n) === squash(UPDATE_DATA_TOOL));
		const args = tool ? updateDataArgs(text, messages) : undefined;
		return tool && args
			? [{ id: `call_${seq}_0`, name: tool, arguments: JSON.stringify(args) }]
			: [];
	}
	const calls: FakeToolCall[] = [];
	for (const [, wanted, rawArgs] of text.matchAll(MARKER)) {
		const name = offered.find((n) => squash(n) === squash(wanted));
		if (!name) continue;
		let args: unknown;
		try {
			args = JSON.parse(rawArgs);
		} catch {
			args = undefined;
		}
		if (!args || typeof args !== 'object' || Array.isArray(args)) args = { input: rawArgs };
		calls.push({ id: `call_${seq}_${calls.length}`, name, arguments: JSON.stringify(args) });
	}
	return calls;
}

const INSTRUCTIONS = [
	/^(?:please\s+)?(?:set|change|update)\s+(?:the\s+)?(.+?)(?:\s+from\s+.+?)?\s+(?:to|=)\s+(.+)$/i,
	/^(?:please\s+)?(?:set|change|update)\s+(?:the\s+)?(.+?)\s*=\s*(.+)$/i,
	/^(?:the\s+)?(.+?)\s+should\s+be\s+(.+)$/i,
];

/** The field and value text of a "set FIELD to VALUE" instruction, or undefined. */
export function parseInstruction(text: string): { field: string; value: string } | undefined {
	const plain = text
		.replace(/\[\[fake:[^\]]*\]\]/g, '')
		.trim()
		.replace(/[.!]+$/, '');
	for (const re of INSTRUCTIONS) {
		const m = re.exec(plain);
		if (m) return { field: m[1].trim(), value: m[2].trim() };
	}
	return undefined;
}

/** The working data the node put in the system message ("## Working data" section), if any. */
export function workingData(messages: ChatMessage[]): unknown {
	for (const m of messages) {
		if (m.role !== 'system' && m.role !== 'developer') continue;
		const block = /^## Working data \(.*\)$[\s\S]*?^```json\n([\s\S]*?)\n^```$/m.exec(
			contentText(m.content),
		);
		if (!block) continue;
		try {
			return JSON.parse(block[1]);
		} catch {
			return undefined;
		}
	}
	return undefined;
}

const fieldKey = (s: string) => s.toLowerCase().replace(/[\s-]+/g, '_');
const unquote = (s: string) => s.replace(/^(["'“‘])(.*)(["'”’])$/s, '$2');
const pointer = (key: string) => '/' + key.replace(/~/g, '~0').replace(/\//g, '~1');

/** update_data's arguments ({patch, summary}) for an instruction in `text`, or undefined. */
export function updateDataArgs(text: string, messages: ChatMessage[]) {
	const instruction = parseInstruction(text);
	const data = workingData(messages);
	if (!instruction || !data || typeof data !== 'object' || Array.isArray(data)) return undefined;
	const record = data as Record<string, unknown>;
	const existing = Object.keys(record).find((k) => fieldKey(k) === fieldKey(instruction.field));
	if (existing === undefined && !/^[A-Za-z_][\w-]*$/.test(instruction.field)) return undefined;
	const key = existing ?? instruction.field;
	const raw = unquote(instruction.value);
	let value: unknown = raw;
	if (existing !== undefined && typeof record[existing] !== 'string') {
		try {
			value = JSON.parse(instruction.value);
		} catch {
			value = raw;
		}
	}
	const op = existing === undefined ? 'add' : 'replace';
	const shown = typeof value === 'string' ? value : JSON.stringify(value);
	return { patch: [{ op, path: pointer(key), value }], summary: `Changed ${key} to ${shown}` };
}
