// Remember Facts through n8n-core's WorkflowExecute: LLM with Memory learns with its own model, the LLM
// Memory Store with the model on its Facts Model input (the stand-in agent loads and saves as n8n's AI
// Agent does). The models are scripted stand-ins; a fact extraction is answered with the demo model's
// deterministic answer (demo/facts.ts), so what is learned follows from what the user said.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import type { INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { TEST_IMAGE_AGENT_TYPE, TestImageAgent } from '../support/agent-stand-in';
import { chatCalls, factsCalls, factsSectionOf, scriptFactsModel } from '../support/facts-model';
import type { FactsPlan } from '../support/facts-model';
import { nodeTypes as llmNodeTypes, workflow } from '../support/manager-workflows';
import { LlmMemoryStore } from '../support/node-under-test';
import { echoModelNode, scriptedModelLog } from '../support/scripted-model';
import { STORE_NODE_TYPE, standInAgentWorkflow } from '../support/stand-in-agent-workflow';
import { tempDir } from '../support/storages';
import { runWorkflow } from '../support/workflow-harness';
import type { WorkflowJson } from '../support/workflow-harness';

type Json = Record<string, any>;

const storeNodeTypes = {
	[STORE_NODE_TYPE]: new LlmMemoryStore(),
	[TEST_IMAGE_AGENT_TYPE]: new TestImageAgent(),
};

/** Remember Facts, the user from the item, read after every turn (Learn After 0). */
const FACTS: INodeParameters = {
	rememberFacts: true,
	longTermUserId: '={{ $json.userId }}',
	factsOptions: { learnAfterTokens: 0 },
};

const item = (chatInput: string, sessionId: string, userId?: string): INodeExecutionData[] => [
	{ json: { chatInput, sessionId, ...(userId ? { userId } : {}) } },
];

function llmWorkflow(folder: string, params: INodeParameters = {}): WorkflowJson {
	return workflow(folder, {
		id: 'wf-facts',
		llms: [
			{ name: 'A', id: 'node-a', params: { memoryMode: 'conversation', ...FACTS, ...params } },
		],
	});
}

async function llmTurn(wf: WorkflowJson, text: string, session: string, user?: string) {
	const r = await runWorkflow(wf, {
		nodeTypes: llmNodeTypes,
		triggerItems: item(text, session, user),
	});
	assert.equal(r.status, 'success', `${r.error?.message} ${r.error?.description ?? ''}`);
	return r.output('A')[0].json as Json;
}

afterEach(() => scriptedModelLog.clear());

describe('Remember Facts in LLM with Memory (in-process)', () => {
	it('facts of one conversation reach the model in the next one of the same user, never another user’s; a move supersedes', async () => {
		scriptFactsModel('A Model');
		const wf = llmWorkflow(tempDir('facts-llm'));
		const first = await llmTurn(wf, 'Hello there. I live in Lyon.', 'c1', 'alice');
		const learned = first.memory.facts;
		assert.deepEqual(
			[learned.userId, learned.memoryBaseId, learned.extracted, learned.shown],
			['alice', 'wf-facts', true, 0],
		);
		assert.deepEqual(learned.added, [{ id: 'f1', text: 'Lives in Lyon' }]);
		assert.equal(factsCalls('A Model').length, 1, 'the node’s own model read the turn');

		await llmTurn(wf, 'Where do I live?', 'c2', 'alice');
		const seen = chatCalls('A Model').at(-1)!;
		assert.equal(seen.messages[0].role, 'system');
		assert.match(factsSectionOf(seen), /- \d{4}-\d\d-\d\d: Lives in Lyon/);
		await llmTurn(wf, 'Where do I live?', 'c3', 'bob');
		assert.equal(factsSectionOf(chatCalls('A Model').at(-1)!), '', 'bob never sees alice’s facts');

		const moved = await llmTurn(wf, 'Big news: we moved to Oslo.', 'c2', 'alice');
		assert.deepEqual(moved.memory.facts.updated, [{ from: 'f1', id: 'f2', text: 'Lives in Oslo' }]);
		const after = await llmTurn(wf, 'Any tips for the weekend?', 'c4', 'alice');
		const section = factsSectionOf(chatCalls('A Model').at(-1)!);
		assert.match(section, /Lives in Oslo/);
		assert.doesNotMatch(section, /Lyon/, 'the superseded fact never reaches the model');
		assert.equal(after.memory.facts.shown, 1);
	});

	it('a failed or malformed extraction never fails the turn: the output says why, and the next try reads the turns', async () => {
		const plan: FactsPlan = ['throw', 'malformed'];
		scriptFactsModel('A Model', plan);
		const wf = llmWorkflow(tempDir('facts-llm'));
		const failed = await llmTurn(wf, 'I have a dog named Biscuit.', 's1', 'carol');
		assert.match(failed.output, /^\[echo\] I have a dog named Biscuit\./);
		assert.match(failed.memory.facts.extractionError, /facts model unavailable/);
		assert.deepEqual(failed.memory.facts.added, []);
		const malformed = await llmTurn(wf, 'Nice weather today.', 's1', 'carol');
		assert.ok(malformed.memory.facts.extractionError, JSON.stringify(malformed.memory.facts));
		assert.equal(malformed.memory.facts.readTurns, 0);
		const next = await llmTurn(wf, 'Fine.', 's1', 'carol');
		assert.equal(next.memory.facts.readTurns, 3, 'the unread turns were read at the next try');
		assert.deepEqual(next.memory.facts.added, [{ id: 'f1', text: 'Has a dog named Biscuit' }]);
		assert.equal(plan.length, 0);
	});

	it('without a User ID the facts are the conversation’s own and the output says so; with Fail the model is never called', async () => {
		scriptFactsModel('A Model');
		const folder = tempDir('facts-llm');
		const own = await llmTurn(llmWorkflow(folder), 'I work at the bakery.', 's1');
		assert.equal(own.memory.facts.conversationId, 's1');
		assert.match(own.memory.facts.warning, /User ID is empty/);
		assert.deepEqual(own.memory.facts.added, [{ id: 'f1', text: 'Works at the bakery' }]);
		await llmTurn(llmWorkflow(folder), 'And now?', 's2');
		assert.equal(factsSectionOf(chatCalls('A Model').at(-1)!), '', 'another conversation');
		scriptedModelLog.clear();
		const wf = llmWorkflow(folder, { longTermEmptyUserId: 'fail' });
		const r = await runWorkflow(wf, { nodeTypes: llmNodeTypes, triggerItems: item('hi', 's3') });
		assert.equal(r.status, 'error');
		assert.match(String(r.error?.message), /The User ID is empty/);
		assert.equal(scriptedModelLog.forNode('A Model').length, 0);
	});

	it('the facts section counts against Max History Tokens: the history gives way', async () => {
		scriptFactsModel('A Model');
		const folder = tempDir('facts-llm');
		const options = { options: { maxHistoryTokens: 300 } };
		const wf = llmWorkflow(folder, options);
		for (let i = 0; i < 6; i++)
			await llmTurn(wf, `I like the colour number ${i} and more words to fill.`, 's1', 'dan');
		const m = (await llmTurn(wf, 'Hello again', 's1', 'dan')).memory;
		assert.ok(m.facts.shown >= 3 && m.facts.tokens > 0, JSON.stringify(m.facts));
		assert.ok(m.historyTokens + m.facts.tokens <= 300, `${m.historyTokens} + ${m.facts.tokens}`);
		const plain = llmWorkflow(folder, { ...options, rememberFacts: false });
		const without = (await llmTurn(plain, 'Hello again', 's1', 'dan')).memory;
		assert.equal(without.facts, undefined);
		assert.ok(
			without.historyTokens > 300 - m.facts.tokens,
			'without facts, the history fills the budget',
		);
		assert.ok(without.historyMessages > m.historyMessages, 'with facts, the history gave way');
	});
});

/** The stand-in agent's workflow with the store's Facts Model (and a Summary Model, when asked). */
function agentWorkflow(folder: string, models: { facts?: string; summary?: string } = {}) {
	const wf = standInAgentWorkflow('wf-store-facts', {
		memoryMode: 'conversation',
		localFolder: folder,
		contextWindowLength: 100,
		...FACTS,
		...(models.summary ? { historyOverflow: 'summarize' } : {}),
	});
	const wire = (name: string | undefined, index: number) => {
		if (!name) return;
		if (!wf.nodes.some((n) => n.name === name))
			wf.nodes.push(echoModelNode(name, name.toLowerCase().replace(/\s+/g, '-'), 600));
		const out = (wf.connections[name] ??= {});
		const lists = (out.ai_languageModel ??= [[]]);
		(lists[0] ??= []).push({ node: 'Memory', type: 'ai_languageModel', index });
	};
	wire(models.summary, 0);
	wire(models.facts, models.summary ? 1 : 0);
	return wf;
}

async function agentTurn(wf: WorkflowJson, text: string, session: string, user: string) {
	const r = await runWorkflow(wf, {
		nodeTypes: storeNodeTypes,
		triggerItems: item(text, session, user),
	});
	assert.equal(r.status, 'success', `${r.error?.message} ${r.error?.description ?? ''}`);
	return (r.runData['Memory'] ?? []).map((task) => task.data?.ai_memory?.[0]?.[0]?.json as Json);
}

describe('Remember Facts in the LLM Memory Store (in-process, the stand-in agent)', () => {
	it('learns with the model on its Facts Model input; the next conversation of the user starts with the facts, another user’s does not', async () => {
		for (const name of ['Agent Model', 'Facts Model']) scriptFactsModel(name);
		const wf = agentWorkflow(tempDir('facts-store'), { facts: 'Facts Model' });
		const calls = await agentTurn(wf, 'I have a cat named Tom.', 's1', 'erin');
		assert.deepEqual(
			calls.map((c) => c.action),
			['loadMemoryVariables', 'saveContext', 'learnFacts'],
		);
		const learned = calls.at(-1)!.facts;
		assert.deepEqual([learned.userId, learned.extracted], ['erin', true]);
		assert.deepEqual(learned.added, [{ id: 'f1', text: 'Has a cat named Tom' }]);
		assert.equal(factsCalls('Facts Model').length, 1);
		assert.equal(factsCalls('Agent Model').length, 0, 'the agent’s model never extracts');

		const next = await agentTurn(wf, 'What pets do I have?', 's2', 'erin');
		assert.equal(next[0].facts.shown, 1);
		const call = chatCalls('Agent Model').at(-1)!;
		assert.equal(call.messages[0].role, 'user', 'the facts come as the history’s first message');
		assert.match(factsSectionOf(call), /Has a cat named Tom/);
		await agentTurn(wf, 'What pets do I have?', 's3', 'frank');
		assert.equal(factsSectionOf(chatCalls('Agent Model').at(-1)!), '');
	});

	it('with a Summary Model too, each input’s model does its own work (also one model on both inputs)', async () => {
		for (const name of ['Agent Model', 'Facts Model', 'Summary Model']) scriptFactsModel(name);
		const wf = agentWorkflow(tempDir('facts-store'), {
			summary: 'Summary Model',
			facts: 'Facts Model',
		});
		await agentTurn(wf, 'I live in Lyon.', 's1', 'gina');
		assert.equal(factsCalls('Facts Model').length, 1);
		assert.equal(factsCalls('Summary Model').length, 0);
		scriptedModelLog.clear();
		for (const name of ['Agent Model', 'Both']) scriptFactsModel(name);
		const both = agentWorkflow(tempDir('facts-store'), { summary: 'Both', facts: 'Both' });
		const calls = await agentTurn(both, 'I live in Lyon.', 's1', 'gina');
		assert.deepEqual(calls.at(-1)!.facts.added, [{ id: 'f1', text: 'Lives in Lyon' }]);
		assert.equal(factsCalls('Both').length, 1);
	});

	it('Remember Facts without a Facts Model stops before the agent runs, saying what to connect', async () => {
		scriptFactsModel('Agent Model');
		const wf = agentWorkflow(tempDir('facts-store'));
		const r = await runWorkflow(wf, {
			nodeTypes: storeNodeTypes,
			triggerItems: item('hi', 's1', 'h'),
		});
		assert.equal(r.status, 'error');
		const error = r.error as { message?: string; description?: string } | undefined;
		assert.match(
			`${error?.message} ${error?.description}`,
			/Remember Facts needs a chat model on the Facts Model input/,
		);
		assert.equal(chatCalls('Agent Model').length, 0);
	});
});
