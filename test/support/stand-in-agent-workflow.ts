// Trigger → the stand-in agent (agent-stand-in.ts, saving through saveContext) with a scripted model
// and an LLM Memory Store: the in-process workflow the store's tests and scripts/house.ts run.
import type { INodeParameters } from 'n8n-workflow';

import { TEST_IMAGE_AGENT_TYPE } from './agent-stand-in';
import { echoModelNode } from './scripted-model';
import { TRIGGER_NODE } from './test-nodes';
import type { WorkflowJson } from './workflow-harness';

export const STORE_NODE_TYPE = 'n8n-nodes-llm-memory.llmMemoryStore';

/**
 * The workflow, its store named "Memory" with `store` parameters, the agent's model "Agent Model";
 * `agent`: the stand-in agent's parameters (default: it saves through saveContext).
 */
export function standInAgentWorkflow(
	id: string,
	store: INodeParameters,
	agent: INodeParameters = { save: 'saveContext' },
): WorkflowJson {
	return {
		id,
		name: `stand-in agent with a store (${id})`,
		nodes: [
			TRIGGER_NODE,
			{
				id: 'agent',
				name: 'Agent',
				type: TEST_IMAGE_AGENT_TYPE,
				typeVersion: 1,
				position: [200, 0],
				parameters: agent,
			},
			echoModelNode('Agent Model', 'agent-model'),
			{
				id: 'store',
				name: 'Memory',
				type: STORE_NODE_TYPE,
				typeVersion: 1,
				position: [400, 200],
				parameters: store,
			},
		],
		connections: {
			Trigger: { main: [[{ node: 'Agent', type: 'main', index: 0 }]] },
			'Agent Model': {
				ai_languageModel: [[{ node: 'Agent', type: 'ai_languageModel', index: 0 }]],
			},
			Memory: { ai_memory: [[{ node: 'Agent', type: 'ai_memory', index: 0 }]] },
		},
	};
}
