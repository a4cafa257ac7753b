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
 * `scriptedModelLog.setHandler(nodeName, fn)` overrides the parameters with a
 * function for complex scenarios. Like n8n's real LLM sub-nodes, each call is
 * also written to the sub-node's runData (input/output) unless `recordRunData`
 * is false.
 */
import {
	NodeConnectionTypes,
	NodeOperationError,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	type ISupplyDataFunctions,
	type SupplyData,
} from 'n8n-workflow';

export const SCRIPTED_MODEL_TYPE = 'n8n-nodes-engine-test.scriptedChatModel';

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool' | string;

export interface NormalizedMessage {
	role: ChatRole;
	content: string;
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
	reply?: string;
	error?: string;
}

export interface ScriptedReply {
	content: string;
	text: string;
	type: 'ai';
	role: 'assistant';
	response_metadata: { model_name: string; finish_reason: string };
	usage_metadata: { input_tokens: number; output_tokens: number; total_tokens: number };
	_getType(): 'ai';
	getType(): 'ai';
}

/** Custom reply function: return a string, or throw to simulate a failure. */
export type ReplyHandler = (
	messages: NormalizedMessage[],
	call: Omit<ScriptedModelCall, 'reply' | 'error'>,
) => string | Promise<string>;

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
		return { role: mapRole(role ?? 'user'), content: contentToText(m.content) };
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
	content: string,
	modelName: string,
	messages: NormalizedMessage[],
): ScriptedReply {
	const input = messages.reduce((sum, m) => sum + approxTokens(m.content), 0);
	const output = approxTokens(content);
	return {
		content,
		text: content,
		type: 'ai',
		role: 'assistant',
		response_metadata: { model_name: modelName, finish_reason: 'stop' },
		usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output },
		_getType: () => 'ai',
		getType: () => 'ai',
	};
}

function parseReplies(value: unknown): string[] {
	const list = typeof value === 'string' ? (value.trim() ? JSON.parse(value) : []) : value;
	if (!Array.isArray(list)) throw new Error('`replies` must be a JSON array of strings');
	return list.map(String);
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
		const workflowId = String(ctx.getWorkflow().id);
		const executionId = ctx.getExecutionId();

		const produce = async (
			messages: NormalizedMessage[],
			call: Omit<ScriptedModelCall, 'reply' | 'error'>,
		) => {
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

		const model = {
			lc_namespace: ['n8n-engine-test', 'chat_models'],
			modelName,
			model: modelName,
			_llmType: () => 'scripted',
			async invoke(input: unknown, options?: unknown): Promise<ScriptedReply> {
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
				};
				scriptedModelLog.calls.push(call);

				const type = NodeConnectionTypes.AiLanguageModel;
				const runIndex = recordRunData
					? ctx.addInputData(type, [[{ json: { messages: call.messages, modelName } }]]).index
					: undefined;
				try {
					call.reply = await produce(messages, call);
				} catch (error) {
					call.error = error instanceof Error ? error.message : String(error);
					if (runIndex !== undefined) {
						ctx.addOutputData(type, runIndex, new NodeOperationError(node, call.error));
					}
					throw error;
				}
				const result = makeReply(call.reply, modelName, messages);
				if (runIndex !== undefined) {
					const out: INodeExecutionData[] = [
						{ json: { response: { content: result.content }, tokenUsage: result.usage_metadata } },
					];
					ctx.addOutputData(type, runIndex, [out]);
				}
				return result;
			},
		};

		return { response: model };
	}
}
