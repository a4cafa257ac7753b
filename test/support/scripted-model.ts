/**
 * "Scripted chat model" sub-node for engine tests.
 *
 * Connect it to a root node through an `ai_languageModel` connection (like
 * n8n's "OpenAI Chat Model" → "Basic LLM Chain"). Its `supplyData()` returns a
 * LangChain-ish chat model object:
 *
 *   model.modelName            e.g. 'gpt-4o-mini'
 *   await model.invoke(msgs)   → { content, text, response_metadata, usage_metadata, ... }
 *
 * Every `invoke` is recorded in `scriptedModelLog` (module singleton, inspect it
 * from tests). Replies are scripted with node parameters:
 *
 *   reply: 'echo'  → `[echo] <last user message> (<n> messages)`
 *   reply: 'list'  → next string of `replies` (JSON array) per node per execution;
 *                    throws when exhausted unless `cycle` is true
 *   reply: 'throw' → rejects with `errorMessage` (simulates a provider failure)
 *
 * With `toolCalling` on, the model also has LangChain's `bindTools(tools)`: the bound model's calls
 * record the tools offered (`call.tools`), and a reply (a handler's return value, or a `replies` entry)
 * may be an object `{ content?, tool_calls: [{ name, args, id? }], invalid_tool_calls? }`, which is
 * returned as an AIMessage-like reply with those tool calls (ids default to `call_<n>`). Without it the
 * model has no bindTools, like a model without tool support.
 *
 * `scriptedModelLog.setHandler(nodeName, fn)` overrides the parameters with a
 * function for complex scenarios. Like n8n's real LLM sub-nodes, each call is
 * also written to the sub-node's runData (input/output) unless `recordRunData`
 * is false.
 */
import {
	NodeConnectionTypes,
	NodeOperationError,
	type INode,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	type ISupplyDataFunctions,
	type SupplyData,
} from 'n8n-workflow';

export const SCRIPTED_MODEL_TYPE = 'n8n-nodes-engine-test.scriptedChatModel';

/** A scripted model node that echoes (the tests' usual model), below its root node at `x`. */
export function echoModelNode(name = 'Model', id = 'model', x = 200): INode {
	return {
		id,
		name,
		type: SCRIPTED_MODEL_TYPE,
		typeVersion: 1,
		position: [x, 200],
		parameters: { modelName: 'gpt-4o-mini', reply: 'echo' },
	};
}

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool' | string;

export interface NormalizedMessage {
	role: ChatRole;
	content: string;
	/** An assistant message's tool calls, when it has any. */
	toolCalls?: Array<{ id: string; name: string; args: unknown }>;
	/** A tool message's call ID. */
	toolCallId?: string;
}

/**
 * A reply with tool calls (or just content), for models with `toolCalling` on; `parts`: content parts
 * the model returns after its text (an image it generated), making the reply's content an array.
 */
export interface ScriptedTurn {
	content?: string;
	parts?: unknown[];
	tool_calls?: Array<{ name: string; args: Record<string, unknown>; id?: string }>;
	invalid_tool_calls?: Array<{ name: string; args?: string; id?: string; error?: string }>;
}

export interface ScriptedModelCall {
	nodeName: string;
	nodeId: string;
	modelName: string;
	workflowId: string;
	executionId: string;
	/** 0-based index of this call for this node within this execution. */
	callIndex: number;
	/** Snapshot of the messages, normalised to `{ role, content }`. */
	messages: NormalizedMessage[];
	/** The exact object passed to `invoke` (not copied). */
	rawInput: unknown;
	/** Second argument of `invoke` (call options), if any. */
	options?: unknown;
	/** The tools a bound model offered (bindTools), if any. */
	tools?: unknown[];
	reply?: string;
	/** The tool calls replied, if any. */
	toolCalls?: ScriptedTurn['tool_calls'];
	error?: string;
}

export interface ScriptedReply {
	content: string | unknown[];
	tool_calls?: Array<{
		name: string;
		args: Record<string, unknown>;
		id: string;
		type: 'tool_call';
	}>;
	invalid_tool_calls?: ScriptedTurn['invalid_tool_calls'];
	text: string;
	type: 'ai';
	role: 'assistant';
	response_metadata: { model_name: string; finish_reason: string };
	usage_metadata: { input_tokens: number; output_tokens: number; total_tokens: number };
	_getType(): 'ai';
	getType(): 'ai';
}

/** Custom reply function: return a string (or a ScriptedTurn with toolCalling), or throw to simulate a failure. */
export type ReplyHandler = (
	messages: NormalizedMessage[],
	call: Omit<ScriptedModelCall, 'reply' | 'error'>,
) => string | ScriptedTurn | Promise<string | ScriptedTurn>;

class ScriptedModelLog {
	readonly calls: ScriptedModelCall[] = [];
	private readonly handlers = new Map<string, ReplyHandler>();
	private readonly counters = new Map<string, number>();

	forNode(nodeName: string): ScriptedModelCall[] {
		return this.calls.filter((c) => c.nodeName === nodeName);
	}

	forExecution(executionId: string): ScriptedModelCall[] {
		return this.calls.filter((c) => c.executionId === executionId);
	}

	last(): ScriptedModelCall | undefined {
		return this.calls.at(-1);
	}

	/** Override the reply of every model node with this name (until `clear()`). */
	setHandler(nodeName: string, handler: ReplyHandler): void {
		this.handlers.set(nodeName, handler);
	}

	getHandler(nodeName: string): ReplyHandler | undefined {
		return this.handlers.get(nodeName);
	}

	/** Forget all calls, handlers and list positions. */
	clear(): void {
		this.calls.length = 0;
		this.handlers.clear();
		this.counters.clear();
	}

	/** @internal next call index for a node within an execution */
	nextIndex(executionId: string, nodeId: string): number {
		const key = `${executionId}\u0000${nodeId}`;
		const index = this.counters.get(key) ?? 0;
		this.counters.set(key, index + 1);
		return index;
	}
}

export const scriptedModelLog = new ScriptedModelLog();

/** Normalise LangChain messages, `{role, content}` objects, tuples or a plain string. */
export function normalizeMessages(input: unknown): NormalizedMessage[] {
	if (typeof input === 'string') return [{ role: 'user', content: input }];
	if (input && typeof input === 'object' && 'messages' in input) {
		// PromptValue-like (`{ messages: [...] }`) or `toChatMessages()`
		return normalizeMessages((input as { messages: unknown }).messages);
	}
	if (!Array.isArray(input)) return [{ role: 'user', content: contentToText(input) }];
	return input.map((message) => {
		if (typeof message === 'string') return { role: 'user', content: message };
		if (Array.isArray(message))
			return { role: mapRole(String(message[0])), content: contentToText(message[1]) };
		const m = message as Record<string, unknown>;
		let role: string | undefined = typeof m.role === 'string' ? m.role : undefined;
		if (!role && typeof m._getType === 'function') role = (m._getType as () => string)();
		if (!role && typeof m.getType === 'function') role = (m.getType as () => string)();
		if (!role && typeof m.type === 'string') role = m.type;
		const normalized: NormalizedMessage = {
			role: mapRole(role ?? 'user'),
			content: contentToText(m.content),
		};
		if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0)
			normalized.toolCalls = (m.tool_calls as Array<Record<string, unknown>>).map((c) => ({
				id: String(c.id),
				name: String(c.name),
				args: c.args,
			}));
		if (typeof m.tool_call_id === 'string') normalized.toolCallId = m.tool_call_id;
		return normalized;
	});
}

function mapRole(role: string): ChatRole {
	const map: Record<string, ChatRole> = { human: 'user', ai: 'assistant', generic: 'user' };
	return map[role] ?? role;
}

function contentToText(content: unknown): string {
	if (typeof content === 'string') return content;
	if (Array.isArray(content)) {
		return content
			.map((part) =>
				typeof part === 'string' ? part : typeof part?.text === 'string' ? part.text : '',
			)
			.join('');
	}
	if (content === undefined || content === null) return '';
	return JSON.stringify(content);
}

/** Deterministic echo reply used by `reply: 'echo'`. */
export function echoReply(messages: NormalizedMessage[]): string {
	const lastUser = [...messages].reverse().find((m) => m.role === 'user');
	return `[echo] ${lastUser?.content ?? ''} (${messages.length} messages)`;
}

const approxTokens = (text: string) => Math.ceil(text.length / 4);

function makeReply(
	turn: string | ScriptedTurn,
	modelName: string,
	messages: NormalizedMessage[],
): ScriptedReply {
	const content = typeof turn === 'string' ? turn : (turn.content ?? '');
	const calls = typeof turn === 'string' ? undefined : turn.tool_calls;
	const input = messages.reduce((sum, m) => sum + approxTokens(m.content), 0);
	const output = approxTokens(content);
	const parts = typeof turn === 'string' ? undefined : turn.parts;
	return {
		content: parts ? [{ type: 'text', text: content }, ...parts] : content,
		...(calls
			? {
					tool_calls: calls.map((c, n) => ({
						name: c.name,
						args: c.args,
						id: c.id ?? `call_${n}`,
						type: 'tool_call' as const,
					})),
				}
			: {}),
		...(typeof turn !== 'string' && turn.invalid_tool_calls
			? { invalid_tool_calls: turn.invalid_tool_calls }
			: {}),
		text: content,
		type: 'ai',
		role: 'assistant',
		response_metadata: { model_name: modelName, finish_reason: 'stop' },
		usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output },
		_getType: () => 'ai',
		getType: () => 'ai',
	};
}

function parseReplies(value: unknown): Array<string | ScriptedTurn> {
	const list = typeof value === 'string' ? (value.trim() ? JSON.parse(value) : []) : value;
	if (!Array.isArray(list)) throw new Error('`replies` must be a JSON array of strings');
	return list.map((r) => (typeof r === 'object' && r !== null ? (r as ScriptedTurn) : String(r)));
}

export class ScriptedChatModel implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Scripted Chat Model',
		name: 'scriptedChatModel',
		group: ['transform'],
		version: 1,
		description: 'Deterministic chat model for tests; records every call',
		defaults: { name: 'Scripted Chat Model' },
		inputs: [],
		outputs: [NodeConnectionTypes.AiLanguageModel],
		outputNames: ['Model'],
		properties: [
			{ displayName: 'Model Name', name: 'modelName', type: 'string', default: 'gpt-4o-mini' },
			{
				displayName: 'Reply',
				name: 'reply',
				type: 'options',
				default: 'echo',
				options: [
					{ name: 'Echo', value: 'echo' },
					{ name: 'List', value: 'list' },
					{ name: 'Throw', value: 'throw' },
				],
			},
			{ displayName: 'Replies (JSON Array)', name: 'replies', type: 'json', default: '[]' },
			{ displayName: 'Cycle Replies', name: 'cycle', type: 'boolean', default: false },
			{
				displayName: 'Error Message',
				name: 'errorMessage',
				type: 'string',
				default: 'Scripted model failure',
			},
			{ displayName: 'Record Run Data', name: 'recordRunData', type: 'boolean', default: true },
			{ displayName: 'Tool Calling', name: 'toolCalling', type: 'boolean', default: false },
		],
	};

	async supplyData(this: ISupplyDataFunctions, itemIndex: number): Promise<SupplyData> {
		// The model object below outlives this call and reports back through the sub-node's context.
		// eslint-disable-next-line @typescript-eslint/no-this-alias
		const ctx = this;
		const node = ctx.getNode();
		const modelName = ctx.getNodeParameter('modelName', itemIndex) as string;
		const reply = ctx.getNodeParameter('reply', itemIndex) as string;
		const replies =
			reply === 'list' ? parseReplies(ctx.getNodeParameter('replies', itemIndex)) : [];
		const cycle = ctx.getNodeParameter('cycle', itemIndex) as boolean;
		const errorMessage = ctx.getNodeParameter('errorMessage', itemIndex) as string;
		const recordRunData = ctx.getNodeParameter('recordRunData', itemIndex) as boolean;
		const toolCalling = ctx.getNodeParameter('toolCalling', itemIndex, false) as boolean;
		const workflowId = String(ctx.getWorkflow().id);
		const executionId = ctx.getExecutionId();

		const produce = async (
			messages: NormalizedMessage[],
			call: Omit<ScriptedModelCall, 'reply' | 'error'>,
		): Promise<string | ScriptedTurn> => {
			const handler = scriptedModelLog.getHandler(node.name);
			if (handler) return await handler(messages, call);
			if (reply === 'throw') throw new Error(errorMessage);
			if (reply === 'list') {
				if (replies.length === 0) throw new Error(`${node.name}: no scripted replies`);
				if (call.callIndex >= replies.length && !cycle) {
					throw new Error(`${node.name}: ran out of scripted replies (${replies.length})`);
				}
				return replies[call.callIndex % replies.length];
			}
			return echoReply(messages);
		};

		const invoke = async (
			input: unknown,
			options?: unknown,
			tools?: unknown[],
		): Promise<ScriptedReply> => {
			const messages = normalizeMessages(input);
			const call: ScriptedModelCall = {
				nodeName: node.name,
				nodeId: node.id,
				modelName,
				workflowId,
				executionId,
				callIndex: scriptedModelLog.nextIndex(executionId, node.id),
				messages: structuredClone(messages),
				rawInput: input,
				options,
				...(tools ? { tools } : {}),
			};
			scriptedModelLog.calls.push(call);

			const type = NodeConnectionTypes.AiLanguageModel;
			const runIndex = recordRunData
				? ctx.addInputData(type, [[{ json: { messages: call.messages, modelName } }]]).index
				: undefined;
			let turn: string | ScriptedTurn;
			try {
				turn = await produce(messages, call);
				call.reply = typeof turn === 'string' ? turn : (turn.content ?? '');
				if (typeof turn !== 'string' && turn.tool_calls) call.toolCalls = turn.tool_calls;
			} catch (error) {
				call.error = error instanceof Error ? error.message : String(error);
				if (runIndex !== undefined) {
					ctx.addOutputData(type, runIndex, new NodeOperationError(node, call.error));
				}
				throw error;
			}
			const result = makeReply(turn, modelName, messages);
			if (runIndex !== undefined) {
				const out: INodeExecutionData[] = [
					{ json: { response: { content: result.content }, tokenUsage: result.usage_metadata } },
				];
				ctx.addOutputData(type, runIndex, [out]);
			}
			return result;
		};

		const base = {
			lc_namespace: ['n8n-engine-test', 'chat_models'],
			modelName,
			model: modelName,
			_llmType: () => 'scripted',
		};
		const model = {
			...base,
			invoke: (input: unknown, options?: unknown) => invoke(input, options),
			...(toolCalling
				? {
						bindTools: (tools: unknown[]) => ({
							...base,
							invoke: (input: unknown, options?: unknown) => invoke(input, options, tools),
						}),
					}
				: {}),
		};

		return { response: model };
	}
}
