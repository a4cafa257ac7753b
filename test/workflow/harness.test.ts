/**
 * Proves the engine harness: real n8n-core WorkflowExecute, AI sub-nodes,
 * expressions, binary data, errors/onError, loops, ids.
 *
 *   node --import tsx --test test/workflow/harness.test.ts
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import {
	NodeConnectionTypes,
	NodeOperationError,
	type IExecuteFunctions,
	type INode,
	type INodeExecutionData,
	type INodeParameters,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { binaryData, runWorkflow, type WorkflowJson } from '../support/workflow-harness';
import { SCRIPTED_MODEL_TYPE, scriptedModelLog } from '../support/scripted-model';
import { TEST_LOOP_TYPE, TEST_TRIGGER_TYPE } from '../support/test-nodes';

// ---------------------------------------------------------------------------
// Throwaway root node: calls the connected model once per item.
// ---------------------------------------------------------------------------

const PROBE_TYPE = 'CUSTOM.probeLlm';

class ProbeLlm implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Probe LLM',
		name: 'probeLlm',
		group: ['transform'],
		version: 1,
		description: 'Test root node',
		defaults: { name: 'Probe LLM' },
		inputs: [
			NodeConnectionTypes.Main,
			{
				type: NodeConnectionTypes.AiLanguageModel,
				displayName: 'Model',
				required: true,
				maxConnections: 1,
			},
		],
		outputs: [NodeConnectionTypes.Main],
		properties: [
			{ displayName: 'Prompt', name: 'prompt', type: 'string', default: '={{ $json.chatInput }}' },
			{ displayName: 'Session ID', name: 'sessionId', type: 'string', default: '' },
			{ displayName: 'Binary Property', name: 'binaryProperty', type: 'string', default: '' },
			{ displayName: 'Fail With', name: 'failWith', type: 'string', default: '' },
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const out: INodeExecutionData[] = [];
		for (let i = 0; i < items.length; i++) {
			try {
				const failWith = this.getNodeParameter('failWith', i) as string;
				if (failWith) throw new NodeOperationError(this.getNode(), failWith, { itemIndex: i });

				const prompt = this.getNodeParameter('prompt', i) as string;
				const binaryProperty = this.getNodeParameter('binaryProperty', i) as string;
				let attachment: { text: string; mimeType: string; bytes: number } | undefined;
				if (binaryProperty) {
					const meta = this.helpers.assertBinaryData(i, binaryProperty);
					const buffer = await this.helpers.getBinaryDataBuffer(i, binaryProperty);
					attachment = {
						text: buffer.toString('utf8'),
						mimeType: meta.mimeType,
						bytes: buffer.length,
					};
				}

				const model = (await this.getInputConnectionData(
					NodeConnectionTypes.AiLanguageModel,
					i,
				)) as {
					modelName: string;
					invoke(messages: unknown): Promise<{ content: string }>;
				};
				const content = attachment ? `${prompt}\n\n[attachment]\n${attachment.text}` : prompt;
				const reply = await model.invoke([{ role: 'user', content }]);

				out.push({
					json: {
						output: reply.content,
						prompt,
						sessionId: this.getNodeParameter('sessionId', i) as string,
						modelName: model.modelName,
						workflowId: this.getWorkflow().id ?? null,
						nodeId: this.getNode().id,
						nodeName: this.getNode().name,
						executionId: this.getExecutionId(),
						instanceId: this.getInstanceId(),
						continueOnFail: this.continueOnFail(),
						...(attachment ? { attachment } : {}),
					},
					pairedItem: { item: i },
				});
			} catch (error) {
				if (this.continueOnFail()) {
					out.push({
						json: { error: (error as Error).message, continueOnFail: true },
						pairedItem: { item: i },
					});
					continue;
				}
				throw error;
			}
		}
		return [out];
	}
}

/** Always throws, ignoring continueOnFail (exercises the engine's own onError handling). */
class Boom implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Boom',
		name: 'boom',
		group: ['transform'],
		version: 1,
		description: 'Throws',
		defaults: { name: 'Boom' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		throw new NodeOperationError(this.getNode(), 'boom exploded');
	}
}

/** Has a required parameter (exercises n8n's pre-run parameter issue check). */
class NeedsParam implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Needs Param',
		name: 'needsParam',
		group: ['transform'],
		version: 1,
		description: 'Required parameter',
		defaults: { name: 'Needs Param' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [
			{ displayName: 'Must', name: 'must', type: 'string', default: '', required: true },
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [this.getInputData()];
	}
}

const nodeTypes = {
	[PROBE_TYPE]: new ProbeLlm(),
	'CUSTOM.boom': new Boom(),
	'CUSTOM.needsParam': new NeedsParam(),
};

// ---------------------------------------------------------------------------
// Workflow builders
// ---------------------------------------------------------------------------

const trigger = {
	id: '00000000-0000-4000-8000-000000000001',
	name: 'When chat message received',
	type: TEST_TRIGGER_TYPE,
	typeVersion: 1,
	position: [0, 0] as [number, number],
	parameters: {},
};

function probe(
	name: string,
	id: string,
	parameters: INodeParameters = {},
	extra: Partial<INode> = {},
): INode {
	return {
		id,
		name,
		type: PROBE_TYPE,
		typeVersion: 1,
		position: [200, 0] as [number, number],
		parameters,
		...extra,
	};
}

function model(name: string, id: string, parameters: INodeParameters = {}): INode {
	return {
		id,
		name,
		type: SCRIPTED_MODEL_TYPE,
		typeVersion: 1,
		position: [200, 200] as [number, number],
		parameters,
	};
}

const main = (node: string, index = 0) => ({ node, type: 'main' as const, index });
const lm = (node: string) => ({
	ai_languageModel: [[{ node, type: 'ai_languageModel' as const, index: 0 }]],
});

/** Trigger → Probe LLM (+ Scripted Model). */
function singleProbeWorkflow(
	probeParams: INodeParameters = {},
	modelParams: INodeParameters = {},
	probeExtra: Partial<INode> = {},
): WorkflowJson {
	return {
		id: 'wf-single-probe',
		name: 'single probe',
		nodes: [
			trigger,
			probe(
				'Probe LLM',
				'node-probe-1',
				{ sessionId: '={{ $json.sessionId }}', ...probeParams },
				probeExtra,
			),
			model('Scripted Model', 'node-model-1', modelParams),
		],
		connections: {
			[trigger.name]: { main: [[main('Probe LLM')]] },
			'Scripted Model': lm('Probe LLM'),
		},
	};
}

afterEach(() => scriptedModelLog.clear());

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

describe('engine harness (n8n-core WorkflowExecute in-process)', () => {
	it('feeds trigger items into the root node and evaluates expressions', async () => {
		const result = await runWorkflow(singleProbeWorkflow(), {
			nodeTypes,
			triggerItems: [
				{ json: { chatInput: 'hello there', sessionId: 'session-A' } },
				{ json: { chatInput: 'second item', sessionId: 'session-B' } },
			],
		});

		assert.equal(result.status, 'success', JSON.stringify(result.error));
		assert.equal(result.error, undefined);
		assert.equal(result.lastNodeExecuted, 'Probe LLM');
		const out = result.output('Probe LLM');
		assert.equal(out.length, 2);
		assert.equal(out[0].json.prompt, 'hello there'); // default '={{ $json.chatInput }}'
		assert.equal(out[0].json.sessionId, 'session-A'); // '={{ $json.sessionId }}'
		assert.equal(out[1].json.sessionId, 'session-B');
		assert.deepEqual(out[1].pairedItem, { item: 1 });
		assert.deepEqual(result.lastNodeOutput, out);
		// one root run handling both items; trigger ran first
		assert.equal(result.runCount('Probe LLM'), 1);
		assert.deepEqual(
			result.executionOrder.filter((n) => n !== 'Scripted Model'),
			[trigger.name, 'Probe LLM'],
		);
		// the trigger node passed the items through unchanged
		assert.deepEqual(
			result.output(trigger.name).map((i) => i.json),
			[
				{ chatInput: 'hello there', sessionId: 'session-A' },
				{ chatInput: 'second item', sessionId: 'session-B' },
			],
		);
	});

	it('calls the scripted model via getInputConnectionData and logs every call', async () => {
		const result = await runWorkflow(singleProbeWorkflow({}, { modelName: 'gpt-4o-mini' }), {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'ping' } }, { json: { chatInput: 'pong' } }],
		});
		assert.equal(result.status, 'success', JSON.stringify(result.error));

		const out = result.output('Probe LLM');
		assert.equal(out[0].json.output, '[echo] ping (1 messages)');
		assert.equal(out[1].json.output, '[echo] pong (1 messages)');
		assert.equal(out[0].json.modelName, 'gpt-4o-mini');

		const calls = scriptedModelLog.forNode('Scripted Model');
		assert.equal(calls.length, 2);
		assert.deepEqual(calls[0].messages, [{ role: 'user', content: 'ping' }]);
		assert.deepEqual(calls[1].messages, [{ role: 'user', content: 'pong' }]);
		assert.deepEqual(
			calls.map((c) => c.callIndex),
			[0, 1],
		);
		assert.equal(calls[0].nodeId, 'node-model-1');
		assert.equal(calls[0].workflowId, 'wf-single-probe');
		assert.equal(calls[0].executionId, result.executionId);
		assert.equal(calls[1].reply, '[echo] pong (1 messages)');

		// like n8n's real LLM sub-nodes, each call shows up in the sub-node's run data
		assert.equal(result.runCount('Scripted Model'), 2);
		const modelRun = result.output('Scripted Model', {
			runIndex: 1,
			connectionType: 'ai_languageModel',
		});
		assert.deepEqual(modelRun[0].json.response, { content: '[echo] pong (1 messages)' });
		assert.equal(result.runData['Scripted Model'][0].source[0]?.previousNode, 'Probe LLM');
	});

	it('supports list replies and simulated model failures', async () => {
		const listed = await runWorkflow(
			singleProbeWorkflow({}, { reply: 'list', replies: JSON.stringify(['first', 'second']) }),
			{ nodeTypes, triggerItems: [{ json: { chatInput: 'a' } }, { json: { chatInput: 'b' } }] },
		);
		assert.equal(listed.status, 'success', JSON.stringify(listed.error));
		assert.deepEqual(
			listed.output('Probe LLM').map((i) => i.json.output),
			['first', 'second'],
		);

		const failing = await runWorkflow(
			singleProbeWorkflow({}, { reply: 'throw', errorMessage: 'provider is down (429)' }),
			{ nodeTypes, triggerItems: [{ json: { chatInput: 'a' } }] },
		);
		assert.equal(failing.status, 'error');
		assert.match(failing.error?.message ?? '', /provider is down \(429\)/);
		assert.equal(failing.lastNodeExecuted, 'Probe LLM');
		assert.equal(
			scriptedModelLog.forExecution(failing.executionId)[0].error,
			'provider is down (429)',
		);
		assert.equal(failing.nodeError('Scripted Model')?.message, 'provider is down (429)');
	});

	it('reads binary data of trigger items with getBinaryDataBuffer/assertBinaryData', async () => {
		const result = await runWorkflow(singleProbeWorkflow({ binaryProperty: 'data' }), {
			nodeTypes,
			triggerItems: [
				{
					json: { chatInput: 'summarise the file' },
					binary: {
						data: binaryData('Hello from a file ✓', {
							mimeType: 'text/plain',
							fileName: 'note.txt',
						}),
					},
				},
			],
		});
		assert.equal(result.status, 'success', JSON.stringify(result.error));
		const [item] = result.output('Probe LLM');
		assert.deepEqual(item.json.attachment, {
			text: 'Hello from a file ✓',
			mimeType: 'text/plain',
			bytes: Buffer.byteLength('Hello from a file ✓'),
		});
		assert.equal(
			scriptedModelLog.last()?.messages[0].content,
			'summarise the file\n\n[attachment]\nHello from a file ✓',
		);

		// a missing binary property is a node error, not a crash
		const missing = await runWorkflow(singleProbeWorkflow({ binaryProperty: 'nope' }), {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'x' }, binary: { data: binaryData('abc') } }],
		});
		assert.equal(missing.status, 'error');
		assert.match(missing.error?.message ?? '', /nope/);
	});

	it('returns node errors, and continues with onError: continueRegularOutput', async () => {
		// 1) throwing root node, default onError → execution error, no crash
		const failed = await runWorkflow(singleProbeWorkflow({ failWith: 'bad input' }), {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'x' } }],
		});
		assert.equal(failed.status, 'error');
		assert.equal(failed.error?.message, 'bad input');
		assert.equal(failed.lastNodeExecuted, 'Probe LLM');
		assert.equal(failed.nodeError('Probe LLM')?.message, 'bad input');
		assert.equal(failed.runData['Probe LLM'][0].executionStatus, 'error');

		// 2) same node with onError: continueRegularOutput → continueOnFail() is true,
		//    the node emits an error item and the run continues to the next node
		const wf = singleProbeWorkflow(
			{ failWith: 'bad input' },
			{},
			{ onError: 'continueRegularOutput' },
		);
		wf.nodes.push(probe('After', 'node-after', { prompt: '={{ "after: " + $json.error }}' }));
		wf.nodes.push(model('After Model', 'node-after-model'));
		wf.connections['Probe LLM'] = { main: [[main('After')]] };
		wf.connections['After Model'] = lm('After');
		const continued = await runWorkflow(wf, {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'x' } }],
		});
		assert.equal(continued.status, 'success', JSON.stringify(continued.error));
		assert.equal(continued.error, undefined);
		assert.deepEqual(continued.output('Probe LLM')[0].json, {
			error: 'bad input',
			continueOnFail: true,
		});
		assert.equal(continued.output('After')[0].json.output, '[echo] after: bad input (1 messages)');
		assert.equal(continued.lastNodeExecuted, 'After');

		// 3) a node that throws anyway (ignores continueOnFail): the engine records the
		//    error on the node run, passes its input through and runs the next node
		const boomWf: WorkflowJson = {
			id: 'wf-boom',
			nodes: [
				trigger,
				{
					id: 'node-boom',
					name: 'Boom',
					type: 'CUSTOM.boom',
					typeVersion: 1,
					position: [200, 0],
					parameters: {},
					onError: 'continueRegularOutput',
				},
				{
					id: 'node-next',
					name: 'Next',
					type: TEST_LOOP_TYPE,
					typeVersion: 1,
					position: [400, 0],
					parameters: { iterations: 1 },
				},
			],
			connections: {
				[trigger.name]: { main: [[main('Boom')]] },
				Boom: { main: [[main('Next')]] },
			},
		};
		const boom = await runWorkflow(boomWf, {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'in' } }],
		});
		assert.equal(boom.status, 'success', JSON.stringify(boom.error));
		assert.equal(boom.nodeError('Boom')?.message, 'boom exploded');
		assert.deepEqual(boom.output('Boom')[0].json, { chatInput: 'in' });
		assert.deepEqual(boom.output('Next')[0].json, { chatInput: 'in', iteration: 1 });

		// n8n-core quirk: if such a node is the *last* one, WorkflowExecute still
		// reports the execution as 'error' (its executionError is never reset).
		delete boomWf.connections.Boom;
		const boomLast = await runWorkflow(boomWf, {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'in' } }],
		});
		assert.equal(boomLast.status, 'error');
		assert.equal(boomLast.error?.message, 'boom exploded');
		assert.deepEqual(boomLast.output('Boom')[0].json, { chatInput: 'in' });
		assert.equal(boomLast.runCount('Next'), 0);
	});

	it('runs two root nodes in sequence, each with its own model sub-node', async () => {
		const wf: WorkflowJson = {
			id: 'wf-two-roots',
			nodes: [
				trigger,
				probe('Writer', 'node-writer', { sessionId: '={{ $json.sessionId }}' }),
				model('Writer Model', 'node-writer-model', {
					modelName: 'gpt-4o-mini',
					reply: 'list',
					replies: '["draft one"]',
				}),
				probe('Critic', 'node-critic', {
					prompt: '={{ "critique: " + $json.output }}',
					sessionId: '={{ $json.sessionId }}',
				}),
				model('Critic Model', 'node-critic-model', { modelName: 'claude-test' }),
			],
			connections: {
				[trigger.name]: { main: [[main('Writer')]] },
				Writer: { main: [[main('Critic')]] },
				'Writer Model': lm('Writer'),
				'Critic Model': lm('Critic'),
			},
		};
		const result = await runWorkflow(wf, {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'write', sessionId: 's-2' } }],
		});
		assert.equal(result.status, 'success', JSON.stringify(result.error));

		assert.equal(result.output('Writer')[0].json.output, 'draft one');
		assert.equal(result.output('Writer')[0].json.modelName, 'gpt-4o-mini');
		const critic = result.output('Critic')[0].json;
		assert.equal(critic.output, '[echo] critique: draft one (1 messages)');
		assert.equal(critic.modelName, 'claude-test');
		assert.equal(critic.sessionId, 's-2', 'sessionId comes from the Writer output item');
		assert.equal(result.lastNodeExecuted, 'Critic');

		assert.deepEqual(
			scriptedModelLog.forNode('Writer Model').map((c) => c.messages[0].content),
			['write'],
		);
		assert.deepEqual(
			scriptedModelLog.forNode('Critic Model').map((c) => c.messages[0].content),
			['critique: draft one'],
		);
		assert.deepEqual(result.executionOrder, [
			trigger.name,
			'Writer Model',
			'Writer',
			'Critic Model',
			'Critic',
		]);
	});

	it('exposes workflow id, node id, execution id and instance id to the node', async () => {
		const result = await runWorkflow(singleProbeWorkflow(), {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'who am i' } }],
			executionId: 'exec-42',
			instanceId: 'instance-xyz',
		});
		assert.equal(result.status, 'success', JSON.stringify(result.error));
		const json = result.output('Probe LLM')[0].json;
		assert.equal(json.workflowId, 'wf-single-probe');
		assert.equal(json.nodeId, 'node-probe-1');
		assert.equal(json.nodeName, 'Probe LLM');
		assert.equal(json.executionId, 'exec-42');
		assert.equal(json.instanceId, 'instance-xyz');
		assert.equal(json.continueOnFail, false);
		assert.equal(result.executionId, 'exec-42');
		assert.equal(result.workflowId, 'wf-single-probe');

		// default execution ids are unique per run
		const again = await runWorkflow(singleProbeWorkflow(), {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'x' } }],
		});
		const again2 = await runWorkflow(singleProbeWorkflow(), {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'x' } }],
		});
		assert.notEqual(again.executionId, again2.executionId);
		assert.equal(again.output('Probe LLM')[0].json.executionId, again.executionId);
	});

	it('runs the same root node several times in one execution through a real loop', async () => {
		// Trigger → Probe → Loop ─done→ (end)
		//             ↑        └loop→ Probe
		const wf: WorkflowJson = {
			id: 'wf-loop',
			nodes: [
				trigger,
				probe('Probe LLM', 'node-probe-loop', { prompt: '={{ $json.chatInput ?? $json.output }}' }),
				model('Scripted Model', 'node-model-loop'),
				{
					id: 'node-loop',
					name: 'Loop',
					type: TEST_LOOP_TYPE,
					typeVersion: 1,
					position: [400, 0],
					parameters: { iterations: 3 },
				},
			],
			connections: {
				[trigger.name]: { main: [[main('Probe LLM')]] },
				'Probe LLM': { main: [[main('Loop')]] },
				Loop: { main: [[], [main('Probe LLM')]] },
				'Scripted Model': lm('Probe LLM'),
			},
		};
		const result = await runWorkflow(wf, {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'hi' } }],
		});
		assert.equal(result.status, 'success', JSON.stringify(result.error));
		assert.equal(result.runCount('Probe LLM'), 3);
		assert.equal(result.runCount('Loop'), 3);
		assert.deepEqual(
			scriptedModelLog.forNode('Scripted Model').map((c) => c.messages[0].content),
			['hi', '[echo] hi (1 messages)', '[echo] [echo] hi (1 messages) (1 messages)'],
		);
		const done = result.output('Loop', { runIndex: 2, outputIndex: 0 });
		assert.equal(done.length, 1);
		assert.equal(done[0].json.iteration, 3);
		assert.equal(result.lastNodeExecuted, 'Loop');
		// the node id is stable across runs
		assert.deepEqual(
			[0, 1, 2].map((runIndex) => result.output('Probe LLM', { runIndex })[0].json.nodeId),
			['node-probe-loop', 'node-probe-loop', 'node-probe-loop'],
		);
	});

	it('accepts n8n exports using real trigger types and reports harness misuse clearly', async () => {
		const wf = singleProbeWorkflow();
		wf.nodes[0] = { ...trigger, type: '@n8n/n8n-nodes-langchain.chatTrigger', typeVersion: 1.1 };
		const result = await runWorkflow(wf, {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'aliased' } }],
		});
		assert.equal(result.status, 'success', JSON.stringify(result.error));
		assert.equal(result.output('Probe LLM')[0].json.output, '[echo] aliased (1 messages)');

		await assert.rejects(
			runWorkflow(singleProbeWorkflow(), { nodeTypes: {} }),
			/Unknown node type "CUSTOM\.probeLlm"/,
		);

		// required model input not connected → node error from n8n-core's input validation
		const noModel = singleProbeWorkflow();
		delete noModel.connections['Scripted Model'];
		const unconnected = await runWorkflow(noModel, {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'x' } }],
		});
		assert.equal(unconnected.status, 'error');
		assert.match(unconnected.error?.message ?? '', /Model/);

		// parameter issues (WorkflowHasIssuesError) come back as an error result naming the issue
		const issues = await runWorkflow(
			{
				id: 'wf-issues',
				nodes: [
					trigger,
					{
						id: 'node-np',
						name: 'NP',
						type: 'CUSTOM.needsParam',
						typeVersion: 1,
						position: [200, 0],
						parameters: {},
					},
				],
				connections: { [trigger.name]: { main: [[main('NP')]] } },
			},
			{ nodeTypes },
		);
		assert.equal(issues.status, 'error');
		assert.match(issues.error?.message ?? '', /workflow has issues/);
		assert.match(issues.error?.description ?? '', /"NP".*Must/);
	});

	it('does not mutate the workflow JSON, so it can be run repeatedly', async () => {
		const wf = singleProbeWorkflow();
		const before = JSON.stringify(wf);
		const a = await runWorkflow(wf, { nodeTypes, triggerItems: [{ json: { chatInput: 'one' } }] });
		const b = await runWorkflow(wf, { nodeTypes, triggerItems: [{ json: { chatInput: 'two' } }] });
		assert.equal(JSON.stringify(wf), before);
		assert.equal(a.output('Probe LLM')[0].json.output, '[echo] one (1 messages)');
		assert.equal(b.output('Probe LLM')[0].json.output, '[echo] two (1 messages)');
		// the call log accumulates across runs (cleared in afterEach); calls are tagged by execution
		assert.equal(scriptedModelLog.calls.length, 2);
		assert.equal(scriptedModelLog.forExecution(b.executionId)[0].callIndex, 0);
	});
});
