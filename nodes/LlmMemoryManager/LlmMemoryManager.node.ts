import { NodeConnectionTypes } from 'n8n-workflow';
import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';

import { storageCredentialTests } from '../shared/credential-test';
import { ON_ENCRYPTION, ON_S3 } from '../shared/display';
import { runItems } from '../shared/run-items';
import { properties } from './description';
import { MANAGER_INPUTS } from './methods/inputs';
import { operationOf, subtitleExpression } from './resources';
import { memoryNodes } from './resources/conversationMemory/memoryNodeList';

/** Reads and administers what LLM with Memory and LLM Memory Store keep, per resource and operation. */
export class LlmMemoryManager implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'LLM Memory Manager',
		name: 'llmMemoryManager',
		icon: { light: 'file:llmMemoryManager.svg', dark: 'file:llmMemoryManager.dark.svg' },
		group: ['transform'],
		// 1.1: Memory defaults to All of This Conversation, a node is chosen by name, from a list or by
		// ID, and a read without messages outputs an item saying why. Version 1 keeps its behaviour.
		version: [1, 1.1],
		defaultVersion: 1.1,
		subtitle: subtitleExpression(),
		description:
			'Read, clear, delete, prune, export and import the memory of LLM with Memory and LLM Memory Store, import chats from n8n’s chat memories, keep a conversation’s versioned data (history, diff, rollback, branches), and see and correct the facts learned about a user',
		defaults: { name: 'LLM Memory Manager' },
		usableAsTool: true,
		// Main, and the Chat Memory input with Import From Chat Memory, which reads it.
		inputs: MANAGER_INPUTS,
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

	methods = { credentialTest: storageCredentialTests, listSearch: { memoryNodes } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [await runItems(this, async (i) => await operationOf(this, i).execute(this, i))];
	}
}
