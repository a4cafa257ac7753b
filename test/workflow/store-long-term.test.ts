// The LLM Memory Store's Long-Term Memory through n8n-core's WorkflowExecute, with the stand-in agent
// (loadMemoryVariables, then saveContext): every call of a turn shows the turn's recall report (what
// was recalled with its scores, why nothing was, or the recall's error), a capture that failed says
// so on the pane, and the next turn captures the missed turn once. The model is the scripted stand-in.
import assert from 'node:assert/strict';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';

import type { INodeExecutionData } from 'n8n-workflow';

import { TEST_IMAGE_AGENT_TYPE, TestImageAgent } from '../support/agent-stand-in';
import { LlmMemoryStore } from '../support/node-under-test';
import { scriptedModelLog } from '../support/scripted-model';
import { STORE_NODE_TYPE, standInAgentWorkflow } from '../support/stand-in-agent-workflow';
import { tempDir } from '../support/storages';
import { runWorkflow } from '../support/workflow-harness';
import type { WorkflowJson } from '../support/workflow-harness';

const nodeTypes = {
	[STORE_NODE_TYPE]: new LlmMemoryStore(),
	[TEST_IMAGE_AGENT_TYPE]: new TestImageAgent(),
};

type Json = Record<string, any>;

const agentWorkflow = (folder: string): WorkflowJson =>
	standInAgentWorkflow('wf-store-ltm', {
		memoryMode: 'conversation',
		localFolder: folder,
		longTermMemory: true,
		longTermUserId: '={{ $json.user }}',
	});

const chat = (chatInput: string, sessionId: string): INodeExecutionData[] => [
	{ json: { chatInput, sessionId, user: 'ana' } },
];

/** Every call the store logged in the turn, as its output pane shows them: action and output. */
async function turn(wf: WorkflowJson, text: string, sessionId = 's1'): Promise<Json[]> {
	const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat(text, sessionId) });
	assert.equal(r.status, 'success', r.error?.message);
	return (r.runData['Memory'] ?? []).map((task) => task.data?.ai_memory?.[0]?.[0]?.json as Json);
}

afterEach(() => scriptedModelLog.clear());

describe('LLM Memory Store: the recall report on every call, and a missed capture made up', () => {
	it('every call of a turn shows its recall: the entries with scores, or why nothing was recalled', async () => {
		const wf = agentWorkflow(tempDir('store-ltm'));
		await turn(wf, 'My order number is 4471 and it goes to Porto', 's1');
		const calls = await turn(wf, 'Where does order 4471 go?', 's2');
		assert.deepEqual(
			calls.map((c) => c.action),
			['loadMemoryVariables', 'saveContext', 'captureIntoLongTermMemory'],
		);
		for (const c of calls) {
			assert.ok(c.longTermMemory.recalled >= 1, JSON.stringify(c));
			assert.match(c.longTermMemory.entries[0].text, /4471/);
			assert.ok(c.longTermMemory.entries[0].score > 0);
			assert.deepEqual(c.longTermMemory.search, { mode: 'lexical' }, 'how the search went');
		}
		assert.equal(calls.at(-1)!.longTermMemory.captured, 2);
		const thanks = await turn(wf, 'thanks!', 's2');
		for (const c of thanks) assert.match(c.longTermMemory.notRecalled, /small talk/);
	});

	it('a failed recall and a failed capture show on the pane; the next turn captures the missed turn once', async () => {
		const folder = tempDir('store-ltm');
		const wf = agentWorkflow(folder);
		await turn(wf, 'I was born in Tromso');
		const bases = path.join(folder, 'memory_base');
		renameSync(bases, `${bases}.away`);
		writeFileSync(bases, 'not a folder');
		const down = await turn(wf, 'My dog is called Biscuit');
		for (const c of down) assert.match(c.longTermMemory.recallError, /ENOTDIR/, JSON.stringify(c));
		assert.match(down.at(-1)!.longTermMemory.captureError, /not captured .*next turn/);
		rmSync(bases);
		renameSync(`${bases}.away`, bases);
		const next = await turn(wf, 'And I like sailing');
		assert.equal(next.at(-1)!.longTermMemory.caughtUp, 1);
		assert.equal(next.at(-1)!.longTermMemory.captured, 4);
		const again = await turn(wf, 'What is my dog called? Biscuit?', 's9');
		assert.equal(again.at(-1)!.longTermMemory.caughtUp, undefined);
		assert.ok(again[0].longTermMemory.entries.some((e: Json) => /Biscuit/.test(e.text)));
	});
});
