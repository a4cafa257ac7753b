// The LLM Memory Store's Tool Results in Memory through n8n-core's WorkflowExecute, with the stand-in
// agent saving tool turns as n8n's AI Agent 3 does (chatHistory.addMessages: the user's message, an AI
// message calling http_request, a 51,234-character tool result, the answer). Checked on what the
// model receives on the next turn, in each mode: the messages in order, each result's size, each
// result paired with its call by tool_call_id; and a bad value refused before the model is called.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import type { INodeParameters } from 'n8n-workflow';

import { TEST_IMAGE_AGENT_TYPE, TestImageAgent, toolResult } from '../support/agent-stand-in';
import { LlmMemoryStore } from '../support/node-under-test';
import { scriptedModelLog } from '../support/scripted-model';
import type { NormalizedMessage } from '../support/scripted-model';
import { STORE_NODE_TYPE, standInAgentWorkflow } from '../support/stand-in-agent-workflow';
import { tempDir } from '../support/storages';
import { runWorkflow } from '../support/workflow-harness';

const nodeTypes = {
	[STORE_NODE_TYPE]: new LlmMemoryStore(),
	[TEST_IMAGE_AGENT_TYPE]: new TestImageAgent(),
};

const BIG = 51_234;
const TOOL_TURN = { save: 'addMessages', toolResultChars: BIG };
const cutNote = (left: number) =>
	`\n[… ${left} more characters of tool output were not kept in memory]`;
const NOTE = '[tool result of http_request: 51,234 characters, not kept in memory]';

afterEach(() => scriptedModelLog.clear());

/** Three turns on one session: two that call the tool, then a question; the model's calls in order. */
async function threeTurns(store: INodeParameters): Promise<NormalizedMessage[][]> {
	const wf = standInAgentWorkflow('wf-tool-results', { localFolder: tempDir('tools'), ...store });
	for (const [text, agent] of [
		['fetch the rows', TOOL_TURN],
		['fetch them again', TOOL_TURN],
		['how many rows were there?', { save: 'addMessages' }],
	] as const) {
		const r = await runWorkflow(
			{ ...wf, nodes: wf.nodes.map((n) => (n.name === 'Agent' ? { ...n, parameters: agent } : n)) },
			{ nodeTypes, triggerItems: [{ json: { chatInput: text, sessionId: 's1' } }] },
		);
		assert.equal(r.status, 'success', r.error?.message);
	}
	const calls = scriptedModelLog.forNode('Agent Model').map((c) => c.messages);
	assert.equal(calls.length, 3);
	return calls;
}

/** A message the model received, compactly: role, a call's tool and ID, a result's call ID and size. */
function brief(m: NormalizedMessage): string {
	if (m.toolCalls)
		return `assistant calls ${m.toolCalls.map((c) => `${c.name}#${c.id}`).join(',')}`;
	if (m.role === 'tool') return `tool #${m.toolCallId}: ${m.content.length} characters`;
	return `${m.role}: ${m.content}`;
}

/** The tool turns the third call received, and each result's content, after checking their pairing. */
function toolTurnsOf(call: NormalizedMessage[]) {
	const ids = call.flatMap((m) => m.toolCalls?.map((c) => c.id) ?? []);
	const results = call.filter((m) => m.role === 'tool');
	assert.deepEqual(
		results.map((r) => r.toolCallId),
		ids,
		'every result answers its call, in order',
	);
	for (const [i, m] of call.entries())
		if (m.toolCalls)
			assert.equal(call[i + 1].toolCallId, m.toolCalls[0].id, 'the result follows its call');
	return { ids, results: results.map((r) => r.content) };
}

const answer = (text: string, messages: number) =>
	`assistant: [echo] ${text} (${messages} messages)`;

describe('LLM Memory Store: Tool Results in Memory, as the model receives it on the next turn', () => {
	it('Keep (the default): each result cut at 16,000 characters with a note, paired, in order', async () => {
		// A budget that holds two kept results (the default 2,000 tokens holds none: see below).
		const calls = await threeTurns({ maxHistoryTokens: 100_000 });
		const { ids, results } = toolTurnsOf(calls[2]);
		assert.deepEqual(calls[2].map(brief), [
			'user: fetch the rows',
			`assistant calls http_request#${ids[0]}`,
			`tool #${ids[0]}: ${16_000 + cutNote(BIG - 16_000).length} characters`,
			answer('fetch the rows', 1),
			'user: fetch them again',
			`assistant calls http_request#${ids[1]}`,
			`tool #${ids[1]}: ${16_000 + cutNote(BIG - 16_000).length} characters`,
			answer('fetch them again', 5),
			'user: how many rows were there?',
		]);
		assert.equal(results[0], toolResult(BIG).slice(0, 16_000) + cutNote(BIG - 16_000));
		assert.notEqual(ids[0], ids[1]);
	});

	it('Keep with its default budget: a turn holding one kept result is over 2,000 tokens, so no history is sent', async () => {
		const calls = await threeTurns({});
		assert.deepEqual(calls[1].map(brief), ['user: fetch them again']);
		assert.deepEqual(calls[2].map(brief), ['user: how many rows were there?']);
	});

	it('Keep with Max Characters per Tool Result 1,000: results cut there, and both turns fit the default budget', async () => {
		const calls = await threeTurns({ toolResults: 'keep', maxToolResultChars: 1000 });
		const { results } = toolTurnsOf(calls[2]);
		assert.deepEqual(
			results,
			[0, 1].map(() => toolResult(BIG).slice(0, 1000) + cutNote(BIG - 1000)),
		);
		assert.equal(calls[2].length, 9);
	});

	it('Keep a Short Note: the calls with a one-line note each as the result, paired, in order, within the default budget', async () => {
		const calls = await threeTurns({ toolResults: 'note' });
		const { ids, results } = toolTurnsOf(calls[2]);
		assert.deepEqual(results, [NOTE, NOTE]);
		assert.deepEqual(calls[2].map(brief), [
			'user: fetch the rows',
			`assistant calls http_request#${ids[0]}`,
			`tool #${ids[0]}: ${NOTE.length} characters`,
			answer('fetch the rows', 1),
			'user: fetch them again',
			`assistant calls http_request#${ids[1]}`,
			`tool #${ids[1]}: ${NOTE.length} characters`,
			answer('fetch them again', 5),
			'user: how many rows were there?',
		]);
		const chars = calls[2].reduce((n, m) => n + m.content.length, 0);
		assert.ok(chars < 600, `the whole history is ${chars} characters`);
	});

	it('Leave Out Tool Turns: the user messages and the answers only', async () => {
		const calls = await threeTurns({ toolResults: 'leaveOut' });
		assert.deepEqual(calls[2].map(brief), [
			'user: fetch the rows',
			answer('fetch the rows', 1),
			'user: fetch them again',
			answer('fetch them again', 3),
			'user: how many rows were there?',
		]);
	});

	for (const [store, message] of [
		[
			{ toolResults: 'everything' },
			/Invalid toolResults: must be one of "keep", "note", "leaveOut", got "everything"/,
		],
		[
			{ toolResults: 'keep', maxToolResultChars: -5 },
			/Max Characters per Tool Result must be a whole number ≥ 0, got -5/,
		],
	] as const)
		it(`a bad value (${JSON.stringify(store)}) fails in the store, by name, before the model is called`, async () => {
			const wf = standInAgentWorkflow(
				'wf-tool-results-bad',
				{ localFolder: tempDir('tools'), ...store },
				TOOL_TURN,
			);
			const r = await runWorkflow(wf, {
				nodeTypes,
				triggerItems: [{ json: { chatInput: 'hello', sessionId: 's1' } }],
			});
			assert.equal(r.status, 'error');
			const error = r.error as { message?: string; description?: string } | undefined;
			assert.match(`${error?.message} ${error?.description}`, message);
			assert.equal(scriptedModelLog.forNode('Agent Model').length, 0, 'the model was never called');
		});
});
