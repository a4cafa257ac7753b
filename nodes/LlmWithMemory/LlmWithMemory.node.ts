import { NodeConnectionTypes } from 'n8n-workflow';
import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';

import { ON_ENCRYPTION, ON_S3, WITH_MEMORY } from '../shared/display';
import { storageCredentialTests } from '../shared/credential-test';
import { runItems } from '../shared/run-items';
import { properties } from './description';
import { LLM_INPUTS } from './methods/inputs';
import { connectedChatModel } from './methods/model';
import { itemOutput } from './methods/run-item';

// No usableAsTool: n8n's generated tool variant has no inputs, so it could never reach its required Model.
// eslint-disable-next-line @n8n/community-nodes/node-usable-as-tool
export class LlmWithMemory implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'LLM with Memory',
		name: 'llmWithMemory',
		icon: { light: 'file:llmWithMemory.svg', dark: 'file:llmWithMemory.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle:
			'={{ { none: "No memory", conversation: "Conversation memory", node: "Node memory" }[$parameter["memoryMode"]] }}',
		description:
			'Calls a chat model with conversation- or node-scoped memory kept on local disk or S3',
		defaults: { name: 'LLM with Memory' },
		inputs: LLM_INPUTS,
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'llmMemoryS3Api',
				required: true,
				testedBy: 'llmMemoryS3ApiTest',
				displayOptions: { show: { ...ON_S3, ...WITH_MEMORY } },
			},
			{
				name: 'llmMemoryEncryptionKeyApi',
				required: true,
				testedBy: 'llmMemoryEncryptionKeyApiTest',
				displayOptions: { show: { ...ON_ENCRYPTION, ...WITH_MEMORY } },
			},
		],
		properties,
	};

	methods = { credentialTest: storageCredentialTests };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const model = await connectedChatModel(this);
		return [await runItems(this, async (i) => await itemOutput(this, i, model))];
	}
}
