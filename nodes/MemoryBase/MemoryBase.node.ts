import { NodeConnectionTypes } from 'n8n-workflow';
import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';

import { storageCredentialTests } from '../shared/credential-test';
import { ON_ENCRYPTION, ON_S3 } from '../shared/display';
import { properties } from './description';
import { executeMemoryBase } from './methods/execute';
import { subtitleExpression } from './operations';

/**
 * Captures each run's outputs per conversation and, past a threshold, ingests them into a searchable
 * knowledge base (Langflow's Memory Base). Agents search it through the Memory Base Tool node: n8n's
 * generated tool variant of a node has no inputs, so it could never reach the required Embedding.
 */
// eslint-disable-next-line @n8n/community-nodes/node-usable-as-tool
export class MemoryBase implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Memory Base',
		name: 'memoryBase',
		icon: { light: 'file:memoryBase.svg', dark: 'file:memoryBase.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: subtitleExpression(),
		description:
			'Capture each run’s outputs per conversation and ingest them into a searchable long-term memory (knowledge base)',
		defaults: { name: 'Memory Base' },
		inputs: [
			NodeConnectionTypes.Main,
			// Optional: captures and lexical search need none; sync (vectors) and semantic search do.
			{
				type: NodeConnectionTypes.AiEmbedding,
				displayName: 'Embedding',
				required: false,
				maxConnections: 1,
			},
			{
				type: NodeConnectionTypes.AiVectorStore,
				displayName: 'Vector Store',
				required: false,
				maxConnections: 1,
			},
		],
		outputs: [NodeConnectionTypes.Main],
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

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await executeMemoryBase(this);
	}
}
