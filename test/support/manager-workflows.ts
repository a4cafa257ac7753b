// In-process workflows of the LLM Memory Manager tests: a test trigger, LLM with Memory nodes in a chain
// (each with its own scripted model), then optionally the LLM Memory Manager. Shared by
// test/workflow/memory-manager.test.ts and test/workflow/versioned-data.test.ts.
import * as path from 'node:path';

import type { INode, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { LlmWithMemory } from './node-under-test';
import { SCRIPTED_MODEL_TYPE } from './scripted-model';
import { TRIGGER_NODE } from './test-nodes';
import type { WorkflowJson } from './workflow-harness';

// The node's source, by explicit path (an extensionless import would find the codex .node.json first).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { LlmMemoryManager } = require(
	path.resolve(__dirname, '../../nodes/LlmMemoryManager/LlmMemoryManager.node.ts'),
) as typeof import('../../nodes/LlmMemoryManager/LlmMemoryManager.node');

export const LLM_TYPE = 'n8n-nodes-llm-memory.llmWithMemory';
export const MANAGER_TYPE = 'n8n-nodes-llm-memory.llmMemoryManager';
/** The LLM Memory Manager's newest version, which new nodes get. */
export const MANAGER_VERSION = 1.1;
export const nodeTypes = {
	[LLM_TYPE]: new LlmWithMemory(),
	[MANAGER_TYPE]: new LlmMemoryManager(),
};

type Json = Record<string, any>;

export const trigger: INode = TRIGGER_NODE;

export const connect = (_from: string, to: string) => ({
	main: [[{ node: to, type: 'main' as const, index: 0 }]],
});

export interface LlmSpec {
	name: string;
	id: string;
	params?: INodeParameters;
	/** Parameters of its scripted model (default: gpt-4o-mini, echo). */
	model?: INodeParameters;
	onError?: INode['onError'];
}

/** Trigger → LLM with Memory nodes in a chain (each with a scripted model), optionally → Manager. */
export function workflow(
	folder: string,
	opts: {
		id?: string;
		llms?: LlmSpec[];
		manager?: INodeParameters;
		managerOnError?: INode['onError'];
		/** The Manager's resource (default: conversationMemory). */
		resource?: string;
		/** The Manager's type version (default: the newest, MANAGER_VERSION). */
		managerVersion?: number;
	},
): WorkflowJson {
	const nodes: INode[] = [trigger];
	const connections: WorkflowJson['connections'] = {};
	let prev = 'Trigger';
	(opts.llms ?? []).forEach((l, i) => {
		nodes.push(
			{
				id: l.id,
				name: l.name,
				type: LLM_TYPE,
				typeVersion: 1,
				position: [200 * (i + 1), 0],
				parameters: { localFolder: folder, ...l.params },
				...(l.onError ? { onError: l.onError } : {}),
			},
			{
				id: `${l.id}-model`,
				name: `${l.name} Model`,
				type: SCRIPTED_MODEL_TYPE,
				typeVersion: 1,
				position: [200 * (i + 1), 200],
				parameters: { modelName: 'gpt-4o-mini', reply: 'echo', ...l.model },
			},
		);
		connections[prev] = connect(prev, l.name);
		connections[`${l.name} Model`] = {
			ai_languageModel: [[{ node: l.name, type: 'ai_languageModel', index: 0 }]],
		};
		prev = l.name;
	});
	if (opts.manager) {
		nodes.push({
			id: 'manager',
			name: 'Manager',
			type: MANAGER_TYPE,
			typeVersion: opts.managerVersion ?? MANAGER_VERSION,
			position: [1000, 0],
			parameters: {
				localFolder: folder,
				resource: opts.resource ?? 'conversationMemory',
				...opts.manager,
			},
			...(opts.managerOnError ? { onError: opts.managerOnError } : {}),
		});
		connections[prev] = connect(prev, 'Manager');
	}
	return { id: opts.id ?? 'wf-a', name: 'manager test', nodes, connections };
}

export const chat = (
	chatInput: string,
	sessionId = 's1',
	extra: Json = {},
): INodeExecutionData[] => [{ json: { chatInput, sessionId, ...extra } }];
