import { NodeConnectionTypes } from 'n8n-workflow';
import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';

import { storageCredentialTests } from '../shared/credential-test';
import { ON_ENCRYPTION, ON_S3 } from '../shared/display';
import { sessionIdProperties, storageProperties } from '../shared/descriptions';
import { runOperation } from '../shared/operation';
import { optionalEmbedder } from '../shared/long-term/long-term';
import { connectedVectorStore } from './methods/connections';
import { baseIdProperty, sessionScopeProperty, userIdProperty } from './operations/fields';
import { emptySearchMessage, search, searchProperties } from './operations/search';
import { unknownBase } from '../shared/memory-bases';
import { memoryBaseFor } from './methods/base';

/**
 * The Memory Base's Search as a tool for n8n's AI Agent: a sub-node with its own Embedding input (and an
 * optional Vector Store). n8n resolves a package's own "…Tool" node before generating one from a
 * usableAsTool node, whose generated variant would have no inputs and so no embedding model.
 */
// eslint-disable-next-line @n8n/community-nodes/node-usable-as-tool
export class MemoryBaseTool implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Memory Base Tool',
		name: 'memoryBaseTool',
		icon: { light: 'file:memoryBaseTool.svg', dark: 'file:memoryBaseTool.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle:
			'={{ { all: "Searches every conversation", user: "Searches one user’s conversations", session: "Searches one conversation" }[$parameter["sessionScope"]] }}',
		description: 'Lets an AI Agent search a Memory Base: long-term memory of earlier conversations',
		defaults: { name: 'Long-term memory' },
		inputs: [
			// Optional: without it the tool searches by word matching (any language).
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
		outputs: [NodeConnectionTypes.AiTool],
		outputNames: ['Tool'],
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
		properties: [
			{
				displayName: 'Description',
				name: 'toolDescription',
				type: 'string',
				default:
					'Search long-term memory: facts and answers from earlier conversations kept in this memory base. Input: what to look for.',
				required: true,
				typeOptions: { rows: 2 },
				description: 'Tells the model what the tool does and when to use it',
			},
			baseIdProperty,
			...searchProperties(
				"={{ $fromAI('query', 'What to look for in long-term memory', 'string') }}",
			),
			sessionScopeProperty('all', [], true),
			...sessionIdProperties({ sessionScope: ['session'] }),
			userIdProperty({ sessionScope: ['user'] }, true),
			...storageProperties({}),
		],
	};

	methods = { credentialTest: storageCredentialTests };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const connections = {
			embedder: await optionalEmbedder(this),
			vectorStore: await connectedVectorStore(this),
		};
		// An unknown base is told to the model in words, as an empty one is: every n8n version then
		// hands it over (n8n 2.8 fails the whole run on a tool's error instead).
		const unknown = await unknownBase(await memoryBaseFor(this, 0, connections));
		if (unknown)
			return [
				[{ json: { response: `${unknown.message}. ${unknown.help}` }, pairedItem: { item: 0 } }],
			];
		const found = await runOperation(this, search, connections);
		// The model reads the answer: an empty list would look like "nothing relevant" when in truth
		// nothing was captured yet, so which of the two it is is said in words. How the search weighed
		// words and vectors is for people reading the Search output, not for the model.
		if (found.length > 0)
			return [found.map(({ json: { search: _weights, ...json }, ...item }) => ({ ...item, json }))];
		const base = await memoryBaseFor(this, 0, connections);
		return [[{ json: { response: await emptySearchMessage(base) }, pairedItem: { item: 0 } }]];
	}
}
