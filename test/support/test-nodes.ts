/**
 * Tiny helper node types for engine tests (registered by the harness by default).
 *
 * - `testTrigger`: start node. The harness seeds it with the trigger items; it
 *   simply emits whatever it received, so downstream nodes see them as `$json`.
 * - `testLoop`: two outputs (`done`, `loop`). It routes its input to `loop`
 *   until it has run `iterations` times, then to `done`. Connect `loop` back to
 *   an earlier node to build a real loop inside one execution.
 * - `testEmbeddings` (`ai_embedding`) and `testVectorStore` (`ai_vectorStore`): the Memory Base's
 *   sub-nodes (not registered by default: pass them in `nodeTypes`).
 */
import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INode,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	type ISupplyDataFunctions,
	type SupplyData,
} from 'n8n-workflow';

import { TestEmbedder, TestVectorStore } from './embeddings';

export const TEST_TRIGGER_TYPE = 'n8n-nodes-engine-test.testTrigger';

/** The test trigger as a workflow's first node (named "Trigger"). */
export const TRIGGER_NODE: INode = {
	id: 'trigger',
	name: 'Trigger',
	type: TEST_TRIGGER_TYPE,
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};
export const TEST_LOOP_TYPE = 'n8n-nodes-engine-test.testLoop';

/** Real n8n trigger types that are mapped onto `testTrigger` so exported workflows run as-is. */
export const TRIGGER_ALIASES = [
	'n8n-nodes-base.manualTrigger',
	'n8n-nodes-base.executeWorkflowTrigger',
	'@n8n/n8n-nodes-langchain.chatTrigger',
	'@n8n/n8n-nodes-langchain.manualChatTrigger',
];

export class TestTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Test Trigger',
		name: 'testTrigger',
		group: ['trigger'],
		version: 1,
		description: 'Emits the items injected by the engine test harness',
		defaults: { name: 'Test Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		properties: [],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [this.getInputData()];
	}
}

export class TestLoop implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Test Loop',
		name: 'testLoop',
		group: ['transform'],
		version: 1,
		description: 'Routes items to "loop" until it ran `iterations` times, then to "done"',
		defaults: { name: 'Test Loop' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main, NodeConnectionTypes.Main],
		outputNames: ['done', 'loop'],
		properties: [{ displayName: 'Iterations', name: 'iterations', type: 'number', default: 2 }],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const iterations = this.getNodeParameter('iterations', 0) as number;
		// $runIndex = how many times this node already ran in this execution.
		const runIndex = this.getWorkflowDataProxy(0).$runIndex as number;
		const out = items.map((item, i) => ({
			json: { ...item.json, iteration: runIndex + 1 },
			binary: item.binary,
			pairedItem: { item: i },
		}));
		return runIndex + 1 >= iterations ? [out, []] : [[], out];
	}
}

// --- Memory Base sub-nodes ------------------------------------------------------------------------

export const TEST_EMBEDDINGS_TYPE = 'n8n-nodes-engine-test.testEmbeddings';
export const TEST_VECTOR_STORE_TYPE = 'n8n-nodes-engine-test.testVectorStore';

/**
 * The embedding model every `testEmbeddings` node hands over (module singleton, like a provider shared
 * by all executions): the fake server's hashed word features, with a call log, planned failures and a
 * gate (see TestEmbedder). Replace it per test with `testEmbeddings.use(new TestEmbedder())`.
 */
export const testEmbeddings = {
	current: new TestEmbedder(),
	use(embedder: TestEmbedder): TestEmbedder {
		this.current = embedder;
		return embedder;
	},
};

/** An `ai_embedding` sub-node (like n8n's Embeddings OpenAI) supplying `testEmbeddings.current`. */
export class TestEmbeddings implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Test Embeddings',
		name: 'testEmbeddings',
		group: ['transform'],
		version: 1,
		description: 'Deterministic embeddings for engine tests',
		defaults: { name: 'Test Embeddings' },
		inputs: [],
		outputs: [NodeConnectionTypes.AiEmbedding],
		properties: [],
	};

	async supplyData(this: ISupplyDataFunctions): Promise<SupplyData> {
		return { response: testEmbeddings.current };
	}
}

/** The stores of every `testVectorStore` node by its Memory Key (process-wide, like n8n's in-memory store). */
export const testVectorStores = new Map<string, TestVectorStore>();

/** An `ai_vectorStore` sub-node (like n8n's in-memory vector store in "retrieve" mode). */
export class TestVectorStoreNode implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Test Vector Store',
		name: 'testVectorStore',
		group: ['transform'],
		version: 1,
		description: 'An in-memory LangChain-like vector store for engine tests',
		defaults: { name: 'Test Vector Store' },
		inputs: [],
		outputs: [NodeConnectionTypes.AiVectorStore],
		properties: [
			{ displayName: 'Memory Key', name: 'memoryKey', type: 'string', default: 'store' },
		],
	};

	async supplyData(this: ISupplyDataFunctions, itemIndex: number): Promise<SupplyData> {
		const key = this.getNodeParameter('memoryKey', itemIndex) as string;
		if (!testVectorStores.has(key)) testVectorStores.set(key, new TestVectorStore());
		return { response: testVectorStores.get(key) };
	}
}
