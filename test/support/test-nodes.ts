/**
 * Tiny helper node types for engine tests (registered by the harness by default).
 *
 * - `testTrigger`: start node. The harness seeds it with the trigger items; it
 *   simply emits whatever it received, so downstream nodes see them as `$json`.
 * - `testLoop`: two outputs (`done`, `loop`). It routes its input to `loop`
 *   until it has run `iterations` times, then to `done`. Connect `loop` back to
 *   an earlier node to build a real loop inside one execution.
 */
import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

export const TEST_TRIGGER_TYPE = 'n8n-nodes-engine-test.testTrigger';
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
