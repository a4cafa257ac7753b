import { NodeConnectionTypes } from 'n8n-workflow';
import type {
	INodeType,
	INodeTypeDescription,
	ISupplyDataFunctions,
	SupplyData,
} from 'n8n-workflow';

import { storageCredentialTests } from '../shared/credential-test';
import { ON_ENCRYPTION, ON_S3 } from '../shared/display';
import { properties } from './description';
import { supplyMemory } from './methods/supply-memory';
import { STORE_INPUTS } from './methods/inputs';

/** An ai_memory sub-node: the AI Agent, the Chat Trigger's session reload and Respond to Chat use our store. */
// A memory is not a tool: n8n's own memory sub-nodes are not usable as tools either.
// eslint-disable-next-line @n8n/community-nodes/node-usable-as-tool
export class LlmMemoryStore implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'LLM Memory Store',
		name: 'llmMemoryStore',
		icon: { light: 'file:llmMemoryStore.svg', dark: 'file:llmMemoryStore.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle:
			'={{ { conversation: "Conversation memory", node: "Node memory" }[$parameter["memoryMode"]] }}',
		description:
			'Thread-aware chat memory for the AI Agent, kept on local disk or S3, tool calls included',
		defaults: { name: 'LLM Memory Store' },
		// Embedding is optional: Long-Term Memory recalls lexically without it, and fuses semantic search
		// with it. Summary Model appears with Summarize Older Turns, which needs it.
		inputs: STORE_INPUTS,
		outputs: [NodeConnectionTypes.AiMemory],
		outputNames: ['Memory'],
		credentials: [
			{
				name: 'llmMemoryS3Api',
				required: true,
				testedBy: 'llmMemoryS3ApiTest',
				displayOptions: { show: { ...ON_S3 } },
			},
			{
				name: 'llmMemoryEncryptionKeyApi',
				required: true,
				testedBy: 'llmMemoryEncryptionKeyApiTest',
				displayOptions: { show: { ...ON_ENCRYPTION } },
			},
		],
		properties,
	};

	methods = { credentialTest: storageCredentialTests };

	async supplyData(this: ISupplyDataFunctions, itemIndex: number): Promise<SupplyData> {
		return await supplyMemory(this, itemIndex);
	}
}
