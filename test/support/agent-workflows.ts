// Workflow JSON for the real-n8n tests and benchmarks of the LLM Memory Store sub-node: n8n's own AI Agent,
// Calculator tool, Chat Memory Manager and Chat Trigger wired to our store, with n8n's OpenAI Chat Model
// pointed at the local fake OpenAI server (the only stand-in). Credentials come from ./workflows.
import { LLM_TYPE, OPENAI_CREDENTIAL } from './workflows';

type Json = Record<string, any>;

export const STORE_TYPE = 'n8n-nodes-llm-memory.llmMemoryStore';
export const CHAT_TRIGGER_TYPE = '@n8n/n8n-nodes-langchain.chatTrigger';
export const AGENT_TYPE = '@n8n/n8n-nodes-langchain.agent';
export const SIMPLE_MEMORY_TYPE = '@n8n/n8n-nodes-langchain.memoryBufferWindow';
export const MEMORY_MANAGER_TYPE = '@n8n/n8n-nodes-langchain.memoryManager';
/** Our LLM Memory Manager, and the tool n8n generates from it (usableAsTool) for the AI Agent. */
export const LLM_MEMORY_MANAGER_TYPE = 'n8n-nodes-llm-memory.llmMemoryManager';
export const LLM_MEMORY_MANAGER_TOOL_TYPE = 'n8n-nodes-llm-memory.llmMemoryManagerTool';
export const CHAT_TRIGGER_NAME = 'When chat message received';

/** The session ID of a Chat Trigger item, or of a Webhook item's JSON body (Memory Manager calls). */
export const SESSION_FROM_CHAT_OR_BODY =
	'={{ $json.sessionId !== undefined ? $json.sessionId : $json.body.sessionId }}';

/** The sub-node connections the tests wire: memory, chat model, tool, embeddings, vector store. */
type SubConnection =
	'ai_memory' | 'ai_languageModel' | 'ai_tool' | 'ai_embedding' | 'ai_vectorStore';

/** A small builder: nodes laid out left to right, main and sub-node connections by node name. */
export class WorkflowBuilder {
	private readonly nodes: Json[] = [];
	private readonly connections: Json = {};
	private x = 0;

	constructor(
		readonly id: string,
		readonly name: string,
	) {}

	add(node: {
		name: string;
		type: string;
		typeVersion: number;
		parameters?: Json;
		credentials?: Json;
		webhookId?: string;
		id?: string;
	}): string {
		this.x += 220;
		this.nodes.push({
			id: node.id ?? `${this.id}-${this.nodes.length}`,
			name: node.name,
			type: node.type,
			typeVersion: node.typeVersion,
			position: [this.x, 0],
			parameters: node.parameters ?? {},
			...(node.credentials ? { credentials: node.credentials } : {}),
			...(node.webhookId ? { webhookId: node.webhookId } : {}),
		});
		return node.name;
	}

	main(from: string, to: string): this {
		const out = (this.connections[from] ??= {});
		(out.main ??= [[]])[0].push({ node: to, type: 'main', index: 0 });
		return this;
	}

	/** Connects sub-node `from` (its only output, of `type`) to every root in `to`. */
	sub(from: string, type: SubConnection, ...to: string[]): this {
		const out = (this.connections[from] ??= {});
		const targets = (out[type] ??= [[]])[0];
		for (const node of to) targets.push({ node, type, index: 0 });
		return this;
	}

	json(): Json {
		return {
			id: this.id,
			name: this.name,
			active: false,
			settings: { executionOrder: 'v1' },
			nodes: this.nodes,
			connections: this.connections,
		};
	}

	// --- the nodes the tests use ---

	chatTrigger(webhookId: string, options: Json = {}): string {
		return this.add({
			name: CHAT_TRIGGER_NAME,
			type: CHAT_TRIGGER_TYPE,
			typeVersion: 1.4,
			webhookId,
			parameters: {
				public: true,
				mode: 'hostedChat',
				options: { responseMode: 'lastNode', ...options },
			},
		});
	}

	/** A POST webhook answering with its last node's first item (to drive a Chat Memory Manager). */
	webhook(name: string, path: string): string {
		return this.add({
			name,
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2,
			webhookId: `${this.id}-${path}`,
			parameters: { httpMethod: 'POST', path, responseMode: 'lastNode', options: {} },
		});
	}

	/** A POST webhook answering with every item of its last node. */
	webhookAll(name: string, path: string): string {
		return this.add({
			name,
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2,
			webhookId: `${this.id}-${path}`,
			parameters: {
				httpMethod: 'POST',
				path,
				responseMode: 'lastNode',
				responseData: 'allEntries',
				options: {},
			},
		});
	}

	/** n8n's AI Agent (3.1, the 2.8.4 default, unless `typeVersion` says otherwise) with its own OpenAI Chat Model sub-node. */
	agent(name: string, systemMessage: string, parameters: Json = {}, typeVersion = 3.1): string {
		this.add({
			name,
			type: AGENT_TYPE,
			typeVersion,
			parameters: {
				promptType: 'auto',
				text: '={{ $json.chatInput }}',
				hasOutputParser: false,
				...parameters,
				options: { systemMessage, ...(parameters.options ?? {}) },
			},
		});
		this.sub(this.model(`${name} Model`), 'ai_languageModel', name);
		return name;
	}

	model(name: string): string {
		return this.add({
			name,
			type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
			typeVersion: 1.2, // 1.3 defaults to the Responses API
			parameters: { model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' }, options: {} },
			credentials: { openAiApi: OPENAI_CREDENTIAL },
		});
	}

	/** n8n's Embeddings OpenAI (text-embedding-3-small), on the fake OpenAI server's credential. */
	embeddings(name = 'Embeddings'): string {
		return this.add({
			name,
			type: '@n8n/n8n-nodes-langchain.embeddingsOpenAi',
			typeVersion: 1.2,
			parameters: { model: 'text-embedding-3-small', options: {} },
			credentials: { openAiApi: OPENAI_CREDENTIAL },
		});
	}

	calculator(name = 'Calculator'): string {
		return this.add({ name, type: '@n8n/n8n-nodes-langchain.toolCalculator', typeVersion: 1 });
	}

	/** Our LLM Memory Store. `id` is stable: Node-mode memory is keyed by it. */
	store(name: string, id: string, parameters: Json = {}, credentials?: Json): string {
		return this.add({ name, id, type: STORE_TYPE, typeVersion: 1, parameters, credentials });
	}

	/** n8n's Simple Memory (in-process), for the benchmark. */
	simpleMemory(name: string, contextWindowLength: number): string {
		return this.add({
			name,
			type: SIMPLE_MEMORY_TYPE,
			typeVersion: 1.3,
			parameters: { sessionIdType: 'fromInput', contextWindowLength },
		});
	}

	/** n8n's Chat Memory Manager (1.1). */
	memoryManager(name: string, parameters: Json): string {
		return this.add({ name, type: MEMORY_MANAGER_TYPE, typeVersion: 1.1, parameters });
	}

	/**
	 * Our LLM Memory Manager (a root node, version 1 unless `typeVersion` says otherwise), or with
	 * `asTool` the tool n8n makes of it for the AI Agent.
	 */
	llmMemoryManager(
		name: string,
		parameters: Json,
		options: { asTool?: boolean; credentials?: Json; typeVersion?: number } = {},
	): string {
		return this.add({
			name,
			type: options.asTool ? LLM_MEMORY_MANAGER_TOOL_TYPE : LLM_MEMORY_MANAGER_TYPE,
			typeVersion: options.typeVersion ?? 1,
			parameters,
			credentials: options.credentials,
		});
	}

	/** Our LLM with Memory node with its own model. */
	llmWithMemory(name: string, id: string, parameters: Json, credentials?: Json): string {
		this.add({ name, id, type: LLM_TYPE, typeVersion: 1, parameters, credentials });
		this.sub(this.model(`${name} Model`), 'ai_languageModel', name);
		return name;
	}
}
