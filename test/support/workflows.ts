// Workflow and credential JSON for the real-n8n tests and benchmarks: Chat Trigger → LLM with Memory
// nodes, each with n8n's own OpenAI Chat Model sub-node pointed at the local fake OpenAI server.
type Json = Record<string, any>;

export const LLM_TYPE = 'n8n-nodes-llm-memory.llmWithMemory';
export const OPENAI_CREDENTIAL = { id: 'e2eFakeOpenAi001', name: 'fake openai' };
export const S3_CREDENTIAL = { id: 'e2eRgwMemory0001', name: 'radosgw memory' };

export function openAiCredential(url: string): Json {
	return {
		...OPENAI_CREDENTIAL,
		type: 'openAiApi',
		data: { apiKey: 'sk-test', url, header: false },
	};
}

export function s3Credential(
	endpoint: string,
	bucket: string,
	keys: { accessKeyId: string; secretAccessKey: string },
): Json {
	return {
		...S3_CREDENTIAL,
		type: 'llmMemoryS3Api',
		data: {
			endpoint,
			region: 'us-east-1',
			bucket,
			...keys,
			forcePathStyle: true,
			keyPrefix: 'n8n',
			allowUnsafeConditionalWrites: false,
		},
	};
}

export interface LlmSpec {
	name: string;
	/** Stable node ID (memory is keyed by it). */
	id: string;
	parameters: Json;
	/** e.g. { llmMemoryS3Api: S3_CREDENTIAL } for S3 storage. */
	credentials?: Json;
}

/** A published chat workflow: Chat Trigger → llms[0] → llms[1] …; the last node answers the chat. */
export function chatWorkflow(options: {
	id: string;
	name: string;
	webhookId: string;
	llms: LlmSpec[];
}): Json {
	const nodes: Json[] = [
		{
			id: `${options.id}-chat`,
			name: 'When chat message received',
			type: '@n8n/n8n-nodes-langchain.chatTrigger',
			typeVersion: 1.4,
			position: [0, 0],
			webhookId: options.webhookId,
			parameters: { public: true, mode: 'hostedChat', options: { responseMode: 'lastNode' } },
		},
	];
	const connections: Json = {};
	let previous = nodes[0].name as string;
	options.llms.forEach((llm, i) => {
		const x = 260 * (i + 1);
		nodes.push({
			id: llm.id,
			name: llm.name,
			type: LLM_TYPE,
			typeVersion: 1,
			position: [x, 0],
			parameters: llm.parameters,
			...(llm.credentials ? { credentials: llm.credentials } : {}),
		});
		const modelName = `${llm.name} Model`;
		nodes.push({
			id: `${llm.id}-model`,
			name: modelName,
			type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
			typeVersion: 1.2, // 1.3 defaults to the Responses API
			position: [x, 220],
			parameters: { model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' }, options: {} },
			credentials: { openAiApi: OPENAI_CREDENTIAL },
		});
		connections[previous] = { main: [[{ node: llm.name, type: 'main', index: 0 }]] };
		connections[modelName] = {
			ai_languageModel: [[{ node: llm.name, type: 'ai_languageModel', index: 0 }]],
		};
		previous = llm.name;
	});
	return {
		id: options.id,
		name: options.name,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes,
		connections,
	};
}

/** Parameters of a second LLM node that reads the conversation ID from the first node's output. */
export function downstreamParameters(extra: Json): Json {
	return {
		promptType: 'define',
		text: "={{ 'B: ' + $('When chat message received').item.json.chatInput }}",
		conversationIdType: 'customKey',
		conversationId: '={{ $json.conversationId }}',
		...extra,
	};
}
