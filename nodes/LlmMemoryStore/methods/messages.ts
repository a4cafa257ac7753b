import { contentFiles } from '../../../src/prompt/content-files';
import type { ChatMessage, ListedMessage } from '../../../src/history/chat-history';
import type { ContentPart, PromptMessage } from '../../../src/prompt/types';
import type { FileInput } from '../../../src/store/blobs';
import { messageText } from '../../shared/message-text';

type ToolCall = NonNullable<PromptMessage['tool_calls']>[number];

/**
 * Chat messages in LangChain's shape without depending on LangChain. The data are
 * own enumerable fields (`type`, `content`, `additional_kwargs`, `tool_calls`, `tool_call_id`, `name`,
 * `id`); `getType()` and `toJSON()` live on the prototype. There is deliberately no `_getType`: LangChain
 * then treats the object as a message-like value and rebuilds it as its own HumanMessage / AIMessage /
 * ToolMessage (the AI Agent's prompt template does exactly that), so whatever copy of @langchain/core the
 * host uses, the agent gets its own classes. The Chat Trigger's session reload and the Chat Memory
 * Manager call getType() and toJSON(), which give what they expect.
 */

export type MessageKind = 'human' | 'ai' | 'tool' | 'system';

const CLASS_NAMES: Record<MessageKind, string> = {
	human: 'HumanMessage',
	ai: 'AIMessage',
	tool: 'ToolMessage',
	system: 'SystemMessage',
};

/** A tool call as LangChain's AIMessage.tool_calls holds it. */
export interface LcToolCall {
	id: string;
	name: string;
	args: Record<string, unknown>;
	type: 'tool_call';
}

export interface MessageFields {
	content: string | ContentPart[];
	additional_kwargs?: Record<string, unknown>;
	id?: string;
	name?: string;
	tool_calls?: LcToolCall[];
	tool_call_id?: string;
}

export class StoreMessage {
	declare type: MessageKind;
	declare content: string | ContentPart[];
	declare additional_kwargs: Record<string, unknown>;
	declare id?: string;
	declare name?: string;
	declare tool_calls?: LcToolCall[];
	declare tool_call_id?: string;

	constructor(type: MessageKind, fields: MessageFields) {
		this.type = type;
		this.content = fields.content;
		this.additional_kwargs = { ...(fields.additional_kwargs ?? {}) };
		if (fields.id !== undefined) this.id = fields.id;
		if (fields.name !== undefined) this.name = fields.name;
		if (type === 'ai') this.tool_calls = fields.tool_calls ?? [];
		if (type === 'tool') this.tool_call_id = fields.tool_call_id ?? '';
	}

	getType(): MessageKind {
		return this.type;
	}

	/** LangChain's serialized form: what the chat widget reads on reload (`id` names the class, `kwargs.content`). */
	toJSON(): Record<string, unknown> {
		const kwargs: Record<string, unknown> = {
			content: this.content,
			additional_kwargs: this.additional_kwargs,
			response_metadata: {},
		};
		if (this.id !== undefined) kwargs.id = this.id;
		if (this.name !== undefined) kwargs.name = this.name;
		if (this.type === 'ai') {
			kwargs.tool_calls = this.tool_calls ?? [];
			kwargs.invalid_tool_calls = [];
		}
		if (this.type === 'tool') kwargs.tool_call_id = this.tool_call_id;
		return {
			lc: 1,
			type: 'constructor',
			id: ['langchain_core', 'messages', CLASS_NAMES[this.type]],
			kwargs,
		};
	}
}

const lcCalls = (calls: readonly ToolCall[] | undefined): LcToolCall[] =>
	(calls ?? []).map((c) => ({ id: c.id, name: c.name, args: { ...c.args }, type: 'tool_call' }));

/** History for a model: the engine's prompt messages, minus the empty user message of a lone answer. */
export function historyMessages(messages: readonly PromptMessage[]): StoreMessage[] {
	const out: StoreMessage[] = [];
	for (const m of messages) {
		if (m.role === 'user') {
			if (m.content === '' || (Array.isArray(m.content) && m.content.length === 0)) continue;
			out.push(new StoreMessage('human', { content: m.content }));
		} else if (m.role === 'assistant')
			out.push(new StoreMessage('ai', { content: m.content, tool_calls: lcCalls(m.tool_calls) }));
		else if (m.role === 'tool')
			out.push(
				new StoreMessage('tool', {
					content: m.content,
					tool_call_id: m.tool_call_id,
					name: m.name,
				}),
			);
		else out.push(new StoreMessage('system', { content: m.content }));
	}
	return out;
}

/**
 * The conversation as listed (session reload, Chat Memory Manager). Tool calls and tool results carry
 * additional_kwargs.hideFromUI, so the Chat Trigger's reload shows the dialogue only.
 */
export function listedMessages(messages: readonly ListedMessage[]): StoreMessage[] {
	return messages.map((m) => {
		const id = m.id !== undefined ? { id: m.id } : {};
		if (m.role === 'user') return new StoreMessage('human', { content: m.content, ...id });
		if (m.role === 'tool')
			return new StoreMessage('tool', {
				content: m.content,
				tool_call_id: m.toolCallId,
				name: m.name,
				additional_kwargs: { hideFromUI: true },
				...id,
			});
		const calls = lcCalls(m.toolCalls);
		return new StoreMessage('ai', {
			content: m.content,
			tool_calls: calls,
			...(calls.length ? { additional_kwargs: { hideFromUI: true } } : {}),
			...id,
		});
	});
}

type Loose = Record<string, unknown>;

/** Content as the text to store: messageText, nothing as '', any other value (an object) as its JSON. */
function contentText(content: unknown): string {
	return (
		messageText(content) ??
		(content === undefined || content === null ? '' : JSON.stringify(content))
	);
}

/** A tool result as text: its text, or its JSON when it has none (n8n tools may return objects). */
function toolText(content: unknown): string {
	if (Array.isArray(content)) {
		const text = contentText(content);
		return text || JSON.stringify(content);
	}
	return contentText(content);
}

function parseArgs(raw: unknown): Record<string, unknown> {
	if (raw && typeof raw === 'object' && !Array.isArray(raw)) return { ...(raw as Loose) };
	if (typeof raw === 'string') {
		try {
			const parsed: unknown = JSON.parse(raw);
			if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Loose;
		} catch {
			// not JSON: kept as the input string below
		}
		return raw === '' ? {} : { input: raw };
	}
	return {};
}

/** Tool calls of an AI message: LangChain's parsed `tool_calls`, else OpenAI-style `additional_kwargs.tool_calls`. */
function toolCallsOf(fields: Loose): ToolCall[] {
	const parsed = Array.isArray(fields.tool_calls) ? (fields.tool_calls as Loose[]) : [];
	const raw = parsed.length
		? parsed
		: Array.isArray((fields.additional_kwargs as Loose)?.tool_calls)
			? ((fields.additional_kwargs as Loose).tool_calls as Loose[])
			: [];
	return raw
		.map((c, i) => {
			const fn = (c.function ?? {}) as Loose;
			const name = typeof c.name === 'string' ? c.name : typeof fn.name === 'string' ? fn.name : '';
			const id = typeof c.id === 'string' && c.id ? c.id : `call_${name || 'tool'}_${i}`;
			const args = parseArgs(c.args ?? fn.arguments);
			// n8n's agent (V3) runs tools as engine requests and adds the call's ID to the tool input; the
			// model never sent it, so it is not replayed as an argument.
			if (args.id === id) delete args.id;
			return { id, name, args };
		})
		.filter((c) => c.name !== '');
}

const KINDS: Record<string, ChatMessage['role']> = {
	human: 'user',
	user: 'user',
	ai: 'assistant',
	assistant: 'assistant',
	tool: 'tool',
	system: 'system',
	developer: 'system',
};

function classKind(className: unknown): string | undefined {
	if (typeof className !== 'string') return undefined;
	const base = className.replace(/Chunk$/, '');
	return Object.entries(CLASS_NAMES).find(([, name]) => name === base)?.[0];
}

/**
 * A message as n8n hands it over (one of its LangChain classes, one of ours, LangChain's serialized form,
 * a `{ role, content }` object or a string) as the engine's ChatMessage. AI content is reduced to its
 * text plus `toolCalls`; provider metadata is dropped.
 */
export function toChatMessage(message: unknown): ChatMessage {
	if (typeof message === 'string') return { role: 'user', content: message };
	if (!message || typeof message !== 'object')
		throw new Error(`Cannot store a message of type ${message === null ? 'null' : typeof message}`);
	const m = message as Loose & { getType?: () => string; _getType?: () => string };
	const serialized = m.lc === 1 && m.type === 'constructor' && Array.isArray(m.id);
	const fields: Loose = serialized ? ((m.kwargs as Loose) ?? {}) : m;
	let kind: unknown;
	if (serialized) kind = classKind((m.id as unknown[]).at(-1));
	else if (typeof m.getType === 'function') kind = m.getType();
	else if (typeof m._getType === 'function') kind = m._getType();
	else kind = m.type ?? m.role;
	if ((kind === 'generic' || kind === 'chat') && typeof m.role === 'string') kind = m.role;
	const role = typeof kind === 'string' ? KINDS[kind] : undefined;
	if (!role)
		throw new Error(
			`Cannot store a message of type "${String(kind)}": expected a human, AI or tool message`,
		);
	const id = typeof fields.id === 'string' && fields.id ? { id: fields.id } : {};
	if (role === 'assistant') {
		const toolCalls = toolCallsOf(fields);
		return {
			role,
			content: contentText(fields.content),
			...(toolCalls.length ? { toolCalls } : attachmentsOf(fields.content, 'tool_file')),
			...id,
		};
	}
	if (role === 'tool') {
		const name = typeof fields.name === 'string' ? { name: fields.name } : {};
		return {
			role,
			content: toolText(fields.content),
			toolCallId: typeof fields.tool_call_id === 'string' ? fields.tool_call_id : '',
			...name,
			...id,
		};
	}
	if (role === 'user')
		return { role, content: contentText(fields.content), ...attachmentsOf(fields.content), ...id };
	return { role, content: contentText(fields.content), ...id };
}

/**
 * Images (and file or audio blocks) in array content, as files to store beside the text: copied
 * content-addressed and replayed as parts, never kept as text. 'tool_file': a model returned them.
 */
function attachmentsOf(
	content: unknown,
	transferMethod: 'local_file' | 'tool_file' = 'local_file',
): { attachments?: FileInput[] } {
	const attachments = contentFiles(content, transferMethod);
	return attachments.length ? { attachments } : {};
}

/**
 * A value of saveContext's input or output values (the named key, else the only key: LangChain's rule)
 * as text, and the files in it when it is array content (images a caller passed along).
 */
export function contextContent(
	values: unknown,
	key: string,
	what: string,
	transferMethod: 'local_file' | 'tool_file',
): { text: string; files?: FileInput[] } {
	if (typeof values === 'string') return { text: values };
	const record = (values ?? {}) as Loose;
	const keys = Object.keys(record).filter(
		(k) => k !== 'chat_history' && k !== 'system_message' && k !== 'formatting_instructions',
	);
	if (!(key in record) && keys.length !== 1)
		throw new Error(
			`saveContext: expected the ${what} under "${key}", got keys ${JSON.stringify(Object.keys(record))}`,
		);
	const value = key in record ? record[key] : record[keys[0]];
	const files = contentFiles(value, transferMethod);
	return { text: contentText(value), ...(files.length ? { files } : {}) };
}
