/**
 * The chat turns scripts/house.ts follows through nodes/: LLM with Memory, and the stand-in agent
 * with the LLM Memory Store, both with Long-Term Memory on, in-process with the scripted model.
 */

import { TEST_IMAGE_AGENT_TYPE, TestImageAgent } from '../test/support/agent-stand-in';
import { LlmMemoryStore, LlmWithMemory } from '../test/support/node-under-test';
import { echoModelNode } from '../test/support/scripted-model';
import { tempDir } from '../test/support/storages';
import { standInAgentWorkflow, STORE_NODE_TYPE } from '../test/support/stand-in-agent-workflow';
import { TRIGGER_NODE } from '../test/support/test-nodes';
import { runWorkflow } from '../test/support/workflow-harness';
import type { WorkflowJson } from '../test/support/workflow-harness';

const LLM = 'n8n-nodes-llm-memory.llmWithMemory';
const nodeTypes = {
	[LLM]: new LlmWithMemory(),
	[STORE_NODE_TYPE]: new LlmMemoryStore(),
	[TEST_IMAGE_AGENT_TYPE]: new TestImageAgent(),
};

const model = echoModelNode();

const longTerm = { longTermMemory: true, longTermUserId: 'ana' };

function llmWorkflow(folder: string): WorkflowJson {
	return {
		id: 'wf-house-llm',
		name: 'house',
		nodes: [
			TRIGGER_NODE,
			{
				id: 'llm',
				name: 'LLM',
				type: LLM,
				typeVersion: 1,
				position: [200, 0],
				parameters: { localFolder: folder, ...longTerm },
			},
			model,
		],
		connections: {
			Trigger: { main: [[{ node: 'LLM', type: 'main', index: 0 }]] },
			Model: { ai_languageModel: [[{ node: 'LLM', type: 'ai_languageModel', index: 0 }]] },
		},
	};
}

const agentWorkflow = (folder: string): WorkflowJson =>
	standInAgentWorkflow('wf-house-agent', { localFolder: folder, ...longTerm });

/** One turn each, in its own folder; each call is a new turn of the same conversation. */
export function turns(): Record<string, () => Promise<void>> {
	const run = (wf: WorkflowJson) => {
		let n = 0;
		return async () => {
			const r = await runWorkflow(wf, {
				nodeTypes,
				triggerItems: [{ json: { chatInput: `My order ${++n} ships to Porto`, sessionId: 's1' } }],
			});
			if (r.status !== 'success') throw new Error(r.error?.message);
		};
	};
	return {
		'LLM with Memory (Long-Term Memory on)': run(llmWorkflow(tempDir('house'))),
		'AI Agent + LLM Memory Store (Long-Term Memory on)': run(agentWorkflow(tempDir('house'))),
	};
}
