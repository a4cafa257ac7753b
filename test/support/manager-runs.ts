// Running the LLM Memory Manager tests' workflows: chat turns through LLM with Memory, then the
// Manager on what they stored. Shared by test/workflow/memory-manager*.test.ts.
import assert from 'node:assert/strict';

import type { IBinaryData, INode, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { chat, connect, nodeTypes, workflow } from './manager-workflows';
import type { LlmSpec } from './manager-workflows';
import { runWorkflow } from './workflow-harness';
import type { WorkflowRunResult } from './workflow-harness';

type Json = Record<string, any>;

/** Chat turns through LLM with Memory (one execution each). */
export async function say(
	folder: string,
	texts: string[],
	opts: { id?: string; session?: string; llms?: LlmSpec[]; binary?: IBinaryData } = {},
): Promise<Json[]> {
	const wf = workflow(folder, {
		id: opts.id,
		llms: opts.llms ?? [{ name: 'A', id: 'node-a', params: { memoryMode: 'conversation' } }],
	});
	const outputs: Json[] = [];
	for (const text of texts) {
		const items = chat(text, opts.session ?? 's1');
		if (opts.binary) items[0].binary = { data0: opts.binary };
		const r = await runWorkflow(wf, { nodeTypes, triggerItems: items });
		assert.equal(r.status, 'success', r.error?.message);
		outputs.push(r.lastNodeOutput[0].json);
	}
	return outputs;
}

/**
 * Runs a workflow of Trigger → Manager (the newest version unless `version` says otherwise). `llms`
 * are LLM with Memory nodes that the workflow holds but does not run (nothing leads to them).
 */
export async function manage(
	folder: string,
	params: INodeParameters,
	triggerItems: INodeExecutionData[] = [{ json: { sessionId: 's1' } }],
	opts: {
		id?: string;
		onError?: INode['onError'];
		credentials?: Json;
		version?: number;
		llms?: LlmSpec[];
	} = {},
): Promise<WorkflowRunResult> {
	const wf = workflow(folder, {
		id: opts.id,
		llms: opts.llms,
		manager: params,
		managerOnError: opts.onError,
		managerVersion: opts.version,
	});
	for (const l of opts.llms ?? []) delete wf.connections[l.name];
	wf.connections.Trigger = connect('Trigger', 'Manager');
	return await runWorkflow(wf, { nodeTypes, triggerItems, credentials: opts.credentials });
}

/** The Manager's output items of a successful run. */
export const ok = (r: WorkflowRunResult): Json[] => {
	assert.equal(r.status, 'success', `${r.error?.message} ${r.error?.description ?? ''}`);
	return r.output('Manager').map((i) => i.json);
};

export const getMessages = (extra: INodeParameters = {}): INodeParameters => ({
	operation: 'getMessages',
	returnAll: true,
	...extra,
});

/** The Node field (version 1.1) choosing a node by ID, by name, or from the list. */
export const memoryNode = (value: string, mode: 'id' | 'name' | 'list' = 'id') => ({
	__rl: true,
	mode,
	value,
});

export const lines = (items: Json[]) => items.map((m) => `${m.role}: ${m.content}`);
