// Summarize Older Turns in-process through n8n-core's WorkflowExecute: LLM with Memory summarizes with
// its own model, and the LLM Memory Store with the model on its Summary Model input, for the stand-in
// agent. The model is the scripted stand-in; it answers a summary request with the demo model's
// extractive summary (the user's sentences with a number or a name).
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import type { INode, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { extractiveSummary, isSummaryRequest } from '../../demo/summaries';
import type { ChatMessage } from '../../demo/messages';
import { TEST_IMAGE_AGENT_TYPE, TestImageAgent } from '../support/agent-stand-in';
import {
	nodeTypes as managerNodeTypes,
	workflow as managerWorkflow,
} from '../support/manager-workflows';
import { LlmMemoryStore, LlmWithMemory } from '../support/node-under-test';
import { echoModelNode, scriptedModelLog } from '../support/scripted-model';
import type { NormalizedMessage } from '../support/scripted-model';
import { tempDir } from '../support/storages';
import { TRIGGER_NODE } from '../support/test-nodes';
import { runWorkflow } from '../support/workflow-harness';
import type { WorkflowJson } from '../support/workflow-harness';
import { TiktokenCounter } from '../../src/internal';
import { userText } from '../support/summary-script';

const counter = new TiktokenCounter('o200k_base');

const LLM_TYPE = 'n8n-nodes-llm-memory.llmWithMemory';
const STORE_TYPE = 'n8n-nodes-llm-memory.llmMemoryStore';
const nodeTypes = {
	[LLM_TYPE]: new LlmWithMemory(),
	[STORE_TYPE]: new LlmMemoryStore(),
	[TEST_IMAGE_AGENT_TYPE]: new TestImageAgent(),
};

type Json = Record<string, any>;

const BUDGET = 1000;
const TURNS = 120;

const model = (name: string): INode => echoModelNode(name, name.toLowerCase().replace(/\s+/g, '-'));

/** Summary requests get the extractive summary (or fail while `failing`); other calls a short reply. */
function scriptModel(name: string, state = { failing: false }) {
	scriptedModelLog.setHandler(name, (messages: NormalizedMessage[]) => {
		if (!isSummaryRequest(messages as ChatMessage[])) return 'Sure, happy to chat.';
		if (state.failing) throw new Error('summary model unavailable');
		return extractiveSummary(messages as ChatMessage[]);
	});
	return state;
}

const isSummaryCall = (messages: NormalizedMessage[]) =>
	isSummaryRequest(messages as ChatMessage[]);
const chatCalls = (name: string) =>
	scriptedModelLog.forNode(name).filter((c) => !isSummaryCall(c.messages));
const summaryCalls = (name: string) =>
	scriptedModelLog.forNode(name).filter((c) => isSummaryCall(c.messages));
const requestText = (messages: NormalizedMessage[]) => messages.map((m) => m.content).join('\n');

function llmWorkflow(folder: string, options: INodeParameters = {}): WorkflowJson {
	return {
		id: 'wf-summary',
		name: 'summaries',
		nodes: [
			TRIGGER_NODE,
			{
				id: 'llm',
				name: 'LLM',
				type: LLM_TYPE,
				typeVersion: 1,
				position: [200, 0],
				parameters: {
					memoryMode: 'conversation',
					localFolder: folder,
					options: { maxHistoryTokens: BUDGET, historyOverflow: 'summarize', ...options },
				},
			},
			model('Model'),
		],
		connections: {
			Trigger: { main: [[{ node: 'LLM', type: 'main', index: 0 }]] },
			Model: { ai_languageModel: [[{ node: 'LLM', type: 'ai_languageModel', index: 0 }]] },
		},
	};
}

/** Trigger → stand-in agent (its own model) with an LLM Memory Store; the store's Summary Model. */
function agentWorkflow(folder: string, withSummaryModel = true): WorkflowJson {
	const store: INode = {
		id: 'store',
		name: 'Memory',
		type: STORE_TYPE,
		typeVersion: 1,
		position: [400, 200],
		parameters: {
			memoryMode: 'conversation',
			localFolder: folder,
			maxHistoryTokens: BUDGET,
			contextWindowLength: 1000,
			historyOverflow: 'summarize',
		},
	};
	return {
		id: 'wf-summary-agent',
		name: 'summaries with an agent',
		nodes: [
			TRIGGER_NODE,
			{
				id: 'agent',
				name: 'Agent',
				type: TEST_IMAGE_AGENT_TYPE,
				typeVersion: 1,
				position: [200, 0],
				parameters: { save: 'saveContext' },
			},
			model('Agent Model'),
			model('Summary Model'),
			store,
		],
		connections: {
			Trigger: { main: [[{ node: 'Agent', type: 'main', index: 0 }]] },
			'Agent Model': {
				ai_languageModel: [[{ node: 'Agent', type: 'ai_languageModel', index: 0 }]],
			},
			...(withSummaryModel
				? {
						'Summary Model': {
							ai_languageModel: [[{ node: 'Memory', type: 'ai_languageModel', index: 0 }]],
						},
					}
				: {}),
			Memory: { ai_memory: [[{ node: 'Agent', type: 'ai_memory', index: 0 }]] },
		},
	};
}

const chat = (chatInput: string): INodeExecutionData[] => [
	{ json: { chatInput, sessionId: 's1' } },
];

async function turn(wf: WorkflowJson, text: string, node: string): Promise<Json> {
	const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat(text) });
	assert.equal(r.status, 'success', r.error?.message);
	return r.output(node)[0].json as Json;
}

afterEach(() => scriptedModelLog.clear());

describe('Summarize Older Turns through n8n (in-process)', () => {
	it(`LLM with Memory: the facts of turns 3 and 50 reach the model at turn ${TURNS}, within budget`, async () => {
		scriptModel('Model');
		const folder = tempDir();
		const wf = llmWorkflow(folder);
		const outputs: Json[] = [];
		for (let t = 1; t <= TURNS; t++) outputs.push(await turn(wf, userText(t), 'LLM'));
		const last = chatCalls('Model').at(-1)!;
		assert.match(requestText(last.messages), /Ada Lovelace/);
		assert.match(requestText(last.messages), /48213/);
		const system = last.messages[0];
		assert.equal(system.role, 'system');
		assert.match(system.content, /\[Summary of earlier turns\]/);
		const calls = summaryCalls('Model').length;
		assert.ok(calls >= 2 && calls <= TURNS / 10, `${calls} summary calls in ${TURNS} turns`);
		for (const [i, o] of outputs.entries()) {
			const used = o.memory.historyTokens + (o.memory.summary?.tokens ?? 0);
			assert.ok(used <= BUDGET, `turn ${i + 1}: ${used} tokens`);
		}
		const shown = outputs.at(-1)!.memory.summary;
		assert.ok(shown.tokens > 0 && shown.turns > 50, JSON.stringify(shown));
		assert.equal(typeof shown.refreshed, 'boolean');
		assert.equal(outputs.filter((o) => o.memory.summary?.refreshed).length, calls);
		// The Manager's Get Messages returns the stored summaries with Include Summaries.
		const read = async (options: INodeParameters) => {
			const wfm = managerWorkflow(folder, {
				id: 'wf-summary',
				manager: { operation: 'getMessages', memoryMode: 'conversation', returnAll: true, options },
			});
			const r = await runWorkflow(wfm, { nodeTypes: managerNodeTypes, triggerItems: chat('x') });
			assert.equal(r.status, 'success', r.error?.message);
			return r.output('Manager').map((item) => item.json as Json);
		};
		const grouped = (await read({ groupMessages: true, includeSummaries: true }))[0];
		assert.equal(grouped.total, 2 * TURNS);
		assert.ok(grouped.summaries.length > 0 && grouped.summaries.length <= 8);
		assert.equal(grouped.summaries[0].role, 'summary');
		assert.match(grouped.summaries[0].content, /Ada Lovelace[\s\S]*48213/);
		assert.equal(grouped.summaries[0].turns, shown.turns);
		const items = await read({ includeSummaries: true });
		assert.equal(items[0].role, 'summary');
		assert.equal(items.filter((i) => i.role === 'summary').length, grouped.summaries.length);
		assert.equal((await read({})).filter((i) => i.role === 'summary').length, 0);
	});

	it('LLM with Memory: a failing summarizer leaves every turn stored and the chat answering', async () => {
		const state = scriptModel('Model');
		const wf = llmWorkflow(tempDir());
		for (let t = 1; t <= 40; t++) await turn(wf, userText(t), 'LLM');
		state.failing = true;
		const failed: Json[] = [];
		for (let t = 41; t <= 80; t++) {
			const out = await turn(wf, userText(t), 'LLM');
			assert.equal(out.output, 'Sure, happy to chat.');
			if (out.memory.summary?.error) failed.push(out);
		}
		assert.ok(failed.length > 0, 'the failure was reported in memory.summary.error');
		assert.match(failed[0].memory.summary.error, /summary model unavailable/);
		state.failing = false;
		const next = await turn(wf, 'What is my name?', 'LLM');
		assert.equal(next.memory.summary.error, undefined);
		assert.equal(next.memory.summary.refreshed, true);
		assert.match(requestText(chatCalls('Model').at(-1)!.messages), /Ada Lovelace/);
		const all = await turn(
			llmWorkflow(wf.nodes[1].parameters.localFolder as string, {
				historyOverflow: 'dropOldest',
				maxHistoryTokens: 1_000_000,
			}),
			'count',
			'LLM',
		);
		assert.equal(all.memory.historyMessages, 2 * 81, 'every turn is stored');
	});

	it('the LLM Memory Store summarizes with its Summary Model for an agent', async () => {
		scriptModel('Agent Model');
		scriptModel('Summary Model');
		const wf = agentWorkflow(tempDir());
		for (let t = 1; t <= TURNS; t++) await turn(wf, userText(t), 'Agent');
		const last = chatCalls('Agent Model').at(-1)!;
		assert.match(requestText(last.messages), /\[Summary of earlier turns\][\s\S]*Ada Lovelace/);
		assert.match(requestText(last.messages), /48213/);
		// The agent keeps its own system message first: the summary arrives as a user-role message.
		assert.equal(last.messages.filter((m) => m.role === 'system').length, 0);
		assert.equal(summaryCalls('Agent Model').length, 0, 'the agent’s model never summarizes');
		// The history the store handed over (the lead with the summary, then the turns) fits the budget.
		const history = last.messages.slice(0, -1);
		const tokens = history.reduce((n, m) => n + counter.count(m.content), 0);
		assert.ok(tokens <= BUDGET, `${tokens} tokens of history and summary`);
		const calls = summaryCalls('Summary Model').length;
		assert.ok(calls >= 2 && calls <= TURNS / 10, `${calls} summary calls`);
	});

	it('the LLM Memory Store with Summarize Older Turns and no Summary Model says what to connect', async () => {
		scriptModel('Agent Model');
		const r = await runWorkflow(agentWorkflow(tempDir(), false), {
			nodeTypes,
			triggerItems: chat('hello'),
		});
		assert.equal(r.status, 'error');
		// n8n names the sub-node in the message and shows ours as the description.
		const error = r.error as { message?: string; description?: string } | undefined;
		assert.match(String(error?.message), /Memory/);
		assert.match(
			`${error?.message} ${error?.description}`,
			/Summarize Older Turns needs a chat model on the Summary Model input/,
		);
		assert.equal(chatCalls('Agent Model').length, 0, 'the agent never called its model');
	});
});
