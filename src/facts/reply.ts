// Reading a model's answer to a fact extraction: JSON `{"operations": [...]}` (a bare array, or a
// ```json fence around either, is accepted). An answer that is not that JSON is a FactsReplyError and
// nothing is applied; an operation of the wrong shape is dropped and counted, the others stand.
import { FactsReplyError } from '../errors';
import type { FactOperation } from './operations';

/** The operations read, and how many entries were not operations of a known shape. */
export interface ParsedReply {
	operations: FactOperation[];
	invalid: number;
}

/** The most operations one answer may carry: more is not an answer to the request. */
export const MAX_OPERATIONS = 100;

const str = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';
const optStr = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** One entry as an operation, or undefined when it is not one. */
function operationOf(entry: unknown): FactOperation | undefined {
	if (typeof entry !== 'object' || entry === null) return undefined;
	const e = entry as Record<string, unknown>;
	const op = typeof e.op === 'string' ? e.op.toLowerCase() : e.op;
	const messageId = optStr(e.messageId ?? e.message_id);
	if (!str(e.quote)) return undefined;
	const base = { quote: e.quote, ...(messageId ? { messageId } : {}) };
	if (op === 'add' && str(e.text)) return { op, text: e.text, ...base };
	const id = optStr(e.id);
	if (!id) return undefined;
	if (op === 'update' && str(e.text)) return { op, id, text: e.text, ...base };
	if (op === 'retire') return { op, id, reason: optStr(e.reason) ?? 'no longer true', ...base };
	return undefined;
}

/** The JSON of the answer: the whole text, or the inside of a ```json fence. */
function jsonOf(answer: string): unknown {
	const text = answer.trim();
	const fenced = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i.exec(text);
	const body = fenced ? fenced[1] : text;
	if (!/^[[{]/.test(body.trim())) throw new FactsReplyError('it is not JSON');
	try {
		return JSON.parse(body);
	} catch {
		throw new FactsReplyError('its JSON does not parse');
	}
}

/** The operations of an answer; FactsReplyError when it is not the JSON asked for. */
export function parseReply(answer: unknown): ParsedReply {
	if (typeof answer !== 'string') throw new FactsReplyError('the model returned no text');
	const value = jsonOf(answer);
	const list = Array.isArray(value) ? value : (value as { operations?: unknown })?.operations;
	if (!Array.isArray(list)) throw new FactsReplyError('it has no "operations" array');
	if (list.length > MAX_OPERATIONS)
		throw new FactsReplyError(`it has ${list.length} operations, more than ${MAX_OPERATIONS}`);
	const operations: FactOperation[] = [];
	let invalid = 0;
	for (const entry of list) {
		const op = operationOf(entry);
		if (op) operations.push(op);
		else invalid++;
	}
	return { operations, invalid };
}
