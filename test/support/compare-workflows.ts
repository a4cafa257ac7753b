// Workflow and credential JSON for bench/memory-compare.ts (and a later queue-mode test): Chat Trigger →
// n8n's own AI Agent with n8n's OpenAI Chat Model sub-node (pointed at the local fake OpenAI server) and,
// optionally, one memory sub-node: n8n's Simple Memory, Postgres Chat Memory, Redis Chat Memory, or any
// other ai_memory node (e.g. our LLM Memory Store). Type versions exist in n8n 2.8.4 and 2.40.7 alike.
import { OPENAI_CREDENTIAL } from './workflows';

type Json = Record<string, any>;

export const POSTGRES_CREDENTIAL = { id: 'benchPostgres001', name: 'bench postgres' };
export const REDIS_CREDENTIAL = { id: 'benchRedis000001', name: 'bench redis' };

/** n8n's `postgres` credential for a local cluster without password (trust auth). */
export function postgresCredential(pg: {
	host: string;
	port: number;
	user: string;
	database: string;
}): Json {
	return {
		...POSTGRES_CREDENTIAL,
		type: 'postgres',
		data: {
			host: pg.host,
			port: pg.port,
			database: pg.database,
			user: pg.user,
			password: '',
			ssl: 'disable',
			maxConnections: 100,
			allowUnauthorizedCerts: false,
		},
	};
}

/** n8n's `redis` credential for a local server without password. */
export function redisCredential(redis: { host: string; port: number }): Json {
	return {
		...REDIS_CREDENTIAL,
		type: 'redis',
		data: { host: redis.host, port: redis.port, database: 0, password: '', user: '', ssl: false },
	};
}

/** A memory sub-node for the agent: node type, version, parameters, credentials. */
export interface MemorySpec {
	type: string;
	typeVersion: number;
	parameters: Json;
	credentials?: Json;
	/** Node ID (ours keys node-scoped memory by it). Default `<workflow id>-memory`. */
	id?: string;
	name?: string;
}

/** n8n's Simple Memory (in-process; v1.3 has no persistence option), window of `window` turns. */
export function simpleMemory(window: number): MemorySpec {
	return {
		type: '@n8n/n8n-nodes-langchain.memoryBufferWindow',
		typeVersion: 1.3,
		name: 'Simple Memory',
		parameters: { sessionIdType: 'fromInput', contextWindowLength: window },
	};
}

/** n8n's Postgres Chat Memory (table n8n_chat_histories), window of `window` turns. */
export function postgresMemory(window: number): MemorySpec {
	return {
		type: '@n8n/n8n-nodes-langchain.memoryPostgresChat',
		typeVersion: 1.3,
		name: 'Postgres Chat Memory',
		parameters: {
			sessionIdType: 'fromInput',
			tableName: 'n8n_chat_histories',
			contextWindowLength: window,
		},
		credentials: { postgres: POSTGRES_CREDENTIAL },
	};
}

/** n8n's Redis Chat Memory (one list per session, no TTL), window of `window` turns. */
export function redisMemory(window: number): MemorySpec {
	return {
		type: '@n8n/n8n-nodes-langchain.memoryRedisChat',
		typeVersion: 1.5,
		name: 'Redis Chat Memory',
		parameters: { sessionIdType: 'fromInput', sessionTTL: 0, contextWindowLength: window },
		credentials: { redis: REDIS_CREDENTIAL },
	};
}

/**
 * A published chat workflow: Chat Trigger → AI Agent (v3.1, no tools) with n8n's OpenAI Chat Model and the
 * given memory (none when omitted). Agent 3.1 sends a system message only when the System Message option is
 * set (the editor fills in "You are a helpful assistant" when you add it), so pass one to get one.
 */
export function agentChatWorkflow(options: {
	id: string;
	name: string;
	webhookId: string;
	memory?: MemorySpec;
	systemMessage?: string;
}): Json {
	const trigger = 'When chat message received';
	const agent = 'AI Agent';
	const model = 'OpenAI Chat Model';
	const nodes: Json[] = [
		{
			id: `${options.id}-chat`,
			name: trigger,
			type: '@n8n/n8n-nodes-langchain.chatTrigger',
			typeVersion: 1.4,
			position: [0, 0],
			webhookId: options.webhookId,
			parameters: { public: true, mode: 'hostedChat', options: { responseMode: 'lastNode' } },
		},
		{
			id: `${options.id}-agent`,
			name: agent,
			type: '@n8n/n8n-nodes-langchain.agent',
			typeVersion: 3.1,
			position: [260, 0],
			parameters: {
				promptType: 'auto',
				text: '={{ $json.chatInput }}',
				options: options.systemMessage ? { systemMessage: options.systemMessage } : {},
			},
		},
		{
			id: `${options.id}-model`,
			name: model,
			type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
			typeVersion: 1.2, // 1.3 defaults to the Responses API
			position: [200, 220],
			parameters: { model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' }, options: {} },
			credentials: { openAiApi: OPENAI_CREDENTIAL },
		},
	];
	const connections: Json = {
		[trigger]: { main: [[{ node: agent, type: 'main', index: 0 }]] },
		[model]: { ai_languageModel: [[{ node: agent, type: 'ai_languageModel', index: 0 }]] },
	};
	if (options.memory) {
		const name = options.memory.name ?? 'Memory';
		nodes.push({
			id: options.memory.id ?? `${options.id}-memory`,
			name,
			type: options.memory.type,
			typeVersion: options.memory.typeVersion,
			position: [340, 220],
			parameters: options.memory.parameters,
			...(options.memory.credentials ? { credentials: options.memory.credentials } : {}),
		});
		connections[name] = { ai_memory: [[{ node: agent, type: 'ai_memory', index: 0 }]] };
	}
	return {
		id: options.id,
		name: options.name,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes,
		connections,
	};
}
