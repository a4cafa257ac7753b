/**
 * A chat turn's cost through the nodes (not a test): prints a markdown table. One turn is one run of an
 * in-process workflow through n8n-core's WorkflowExecute (the tests' harness) with the scripted model
 * (the only stand-in: it answers at once), on local disk: LLM with Memory, and the stand-in agent with
 * the LLM Memory Store, each with Long-Term Memory off and on (word recall, no embedding model). Rounds
 * of the four are interleaved, so machine noise hits every row alike; p50 and p95 over TURN_BENCH_TURNS
 * turns (default 150) after 10 warm-up turns, in a conversation that grows by one turn each.
 * Knob: TURN_BENCH_TURNS.
 */
import type { INode, INodeParameters } from 'n8n-workflow';

import { TEST_IMAGE_AGENT_TYPE, TestImageAgent } from '../test/support/agent-stand-in';
import { LlmMemoryStore, LlmWithMemory } from '../test/support/node-under-test';
import { echoModelNode, scriptedModelLog } from '../test/support/scripted-model';
import { tempDir } from '../test/support/storages';
import { TRIGGER_NODE } from '../test/support/test-nodes';
import { runWorkflow } from '../test/support/workflow-harness';
import type { WorkflowJson } from '../test/support/workflow-harness';
import { loadLine, machineLine, median, percentile } from './stats';

const LLM = 'n8n-nodes-llm-memory.llmWithMemory';
const STORE = 'n8n-nodes-llm-memory.llmMemoryStore';
const nodeTypes = {
	[LLM]: new LlmWithMemory(),
	[STORE]: new LlmMemoryStore(),
	[TEST_IMAGE_AGENT_TYPE]: new TestImageAgent(),
};
const TURNS = Number(process.env.TURN_BENCH_TURNS ?? 150);
const WARMUP = 10;

const model = echoModelNode();

function workflow(kind: 'llm' | 'agent', params: INodeParameters): WorkflowJson {
	const target = kind === 'llm' ? 'LLM' : 'Agent';
	const node: INode =
		kind === 'llm'
			? {
					id: 'llm',
					name: 'LLM',
					type: LLM,
					typeVersion: 1,
					position: [200, 0],
					parameters: params,
				}
			: {
					id: 'agent',
					name: 'Agent',
					type: TEST_IMAGE_AGENT_TYPE,
					typeVersion: 1,
					position: [200, 0],
					parameters: { save: 'saveContext' },
				};
	const store: INode[] =
		kind === 'agent'
			? [
					{
						id: 'store',
						name: 'Memory',
						type: STORE,
						typeVersion: 1,
						position: [400, 200],
						parameters: params,
					},
				]
			: [];
	return {
		id: `wf-bench-${kind}`,
		name: `turn bench ${kind}`,
		nodes: [TRIGGER_NODE, node, model, ...store],
		connections: {
			Trigger: { main: [[{ node: target, type: 'main', index: 0 }]] },
			Model: { ai_languageModel: [[{ node: target, type: 'ai_languageModel', index: 0 }]] },
			...(kind === 'agent'
				? { Memory: { ai_memory: [[{ node: 'Agent', type: 'ai_memory', index: 0 }]] } }
				: {}),
		},
	};
}

interface Row {
	name: string;
	wf: WorkflowJson;
	times: number[];
	n: number;
}

async function turn(row: Row): Promise<number> {
	const text = `My order ${++row.n} ships to Porto on day ${row.n % 28}`;
	const t0 = performance.now();
	const r = await runWorkflow(row.wf, {
		nodeTypes,
		triggerItems: [{ json: { chatInput: text, sessionId: 's1' } }],
	});
	const ms = performance.now() - t0;
	if (r.status !== 'success') throw new Error(r.error?.message);
	scriptedModelLog.clear();
	return ms;
}

async function main(): Promise<void> {
	const startLoad = loadLine().replace('load ', '');
	const longTerm = { longTermMemory: true, longTermUserId: 'ana' };
	const rows: Row[] = [
		['LLM with Memory', 'llm', {}],
		['LLM with Memory, Long-Term Memory', 'llm', longTerm],
		['AI Agent (stand-in) + LLM Memory Store', 'agent', {}],
		['AI Agent (stand-in) + LLM Memory Store, Long-Term Memory', 'agent', longTerm],
	].map(([name, kind, params]) => ({
		name: name as string,
		wf: workflow(kind as 'llm' | 'agent', {
			localFolder: tempDir('turn-bench'),
			...(params as object),
		}),
		times: [],
		n: 0,
	}));
	for (let i = 0; i < WARMUP + TURNS; i++)
		for (const row of rows) {
			const ms = await turn(row);
			if (i >= WARMUP) row.times.push(ms);
		}
	const f = (x: number) => x.toFixed(2);
	console.log(
		`\n### A chat turn through the nodes (in-process n8n, local disk, ${TURNS} turns each)\n`,
	);
	console.log('| turn | p50 | p95 |\n|---|---:|---:|');
	for (const r of rows)
		console.log(`| ${r.name} | ${f(median(r.times))} ms | ${f(percentile(r.times, 0.95))} ms |`);
	console.log(`\n${machineLine(`${loadLine()} at the end, ${startLoad} at the start`)}`);
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
