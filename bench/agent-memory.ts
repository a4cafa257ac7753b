/**
 * A chat turn of n8n's AI Agent with the LLM Memory Store against the same agent with n8n's Simple Memory
 * (benchmark, not a test), through a real n8n (N8N_VERSION, default the newest supported). Each agent has
 * the Calculator tool (offered, not called) and n8n's OpenAI Chat Model pointed at the local fake OpenAI
 * server (the only stand-in: no real model is reachable here; it answers at once). Both memories hold
 * 100 stored turns of the same session before measuring and send the same window of 10 turns; the store
 * keeps Node memory on local disk. A third agent without memory is the baseline. Turns rotate between
 * the variants so machine noise hits all alike. Prints a markdown table.
 *
 *   N8N_VERSION=2.8.4 node --import tsx bench/agent-memory.ts      (BENCH_TURNS, default 60)
 */
import { WorkflowBuilder } from '../test/support/agent-workflows';
import { sendChat } from '../test/support/chat';
import { contentText, startFakeOpenAi } from '../demo/model-server';
import { N8N_VERSION, packPackage, startN8n } from '../test/support/n8n-harness';
import { freePort } from '../test/support/rgw';
import { openAiCredential } from '../test/support/workflows';
import { machineLine, median, percentile } from './stats';

const SEED = 100;
const TURNS = Number(process.env.BENCH_TURNS ?? 60);
const WINDOW = 10;

interface Variant {
	id: string;
	webhookId: string;
	tag: string;
	label: string;
}

const STORE: Variant = {
	id: 'benchAgentStore1',
	webhookId: 'be0c0de0-0000-4000-8000-0000000000c1',
	tag: 'bench store',
	label: 'AI Agent + LLM Memory Store (Node memory, local disk)',
};
const SIMPLE: Variant = {
	id: 'benchAgentSimple',
	webhookId: 'be0c0de0-0000-4000-8000-0000000000c2',
	tag: 'bench simple',
	label: 'AI Agent + n8n Simple Memory (in process)',
};
const NONE: Variant = {
	id: 'benchAgentNoMem1',
	webhookId: 'be0c0de0-0000-4000-8000-0000000000c3',
	tag: 'bench none',
	label: 'AI Agent without memory',
};

function workflow(v: Variant, memory: (w: WorkflowBuilder) => string | undefined) {
	const w = new WorkflowBuilder(v.id, `bench: ${v.label}`);
	const agent = w.agent('Agent', v.tag);
	w.main(w.chatTrigger(v.webhookId), agent);
	w.sub(w.calculator(), 'ai_tool', agent);
	const mem = memory(w);
	if (mem) w.sub(mem, 'ai_memory', agent);
	return w.json();
}

(async () => {
	const llm = await startFakeOpenAi({ port: 0 });
	const tarball = await packPackage();
	const n8n = await startN8n({
		tarball,
		port: await freePort(),
		brokerPort: await freePort(),
		credentials: [openAiCredential(llm.url)],
		workflows: [
			workflow(STORE, (w) =>
				w.store('Memory', 'bench-agent-store', {
					memoryMode: 'node',
					contextWindowLength: WINDOW,
					maxHistoryTokens: 100_000,
				}),
			),
			workflow(SIMPLE, (w) => w.simpleMemory('Memory', WINDOW)),
			workflow(NONE, () => undefined),
		],
	});
	try {
		const turn = async (v: Variant, i: number) => {
			const r = await sendChat(n8n.chatUrl(v.webhookId), {
				sessionId: 'bench',
				chatInput: `message number ${i} about the weather and the plan for tomorrow`,
			});
			if (r.status !== 200) throw new Error(`${v.label}: turn failed: ${r.status} ${r.body}`);
			return r;
		};
		for (let i = 0; i < SEED; i++) await Promise.all([turn(STORE, i), turn(SIMPLE, i)]);
		for (let i = 0; i < 5; i++) await turn(NONE, i); // warm-up
		const variants = [STORE, SIMPLE, NONE];
		const lat = new Map(variants.map((v) => [v, [] as number[]]));
		for (let i = 0; i < TURNS; i++) {
			for (let k = 0; k < variants.length; k++) {
				const v = variants[(i + k) % variants.length];
				lat.get(v)!.push((await turn(v, SEED + i)).ms);
			}
		}
		/** History messages the model got in the variant's last call (between the system and the new user message). */
		const history = (v: Variant) => {
			const last = llm
				.completions()
				.filter((r) => r.body?.messages?.[0]?.content === v.tag)
				.at(-1);
			const messages = (last?.body.messages ?? []) as Array<{ role: string; content: unknown }>;
			return {
				count: Math.max(messages.length - 2, 0),
				chars: messages.slice(1, -1).reduce((n, m) => n + contentText(m.content).length, 0),
			};
		};
		const row = (v: Variant) => {
			const xs = lat.get(v)!;
			const h = history(v);
			return `| ${v.label} | ${median(xs).toFixed(1)} | ${percentile(xs, 0.1).toFixed(1)} | ${percentile(xs, 0.9).toFixed(1)} | ${h.count} messages (${h.chars.toLocaleString('en-US')} chars) |`;
		};
		const s = median(lat.get(STORE)!);
		const m = median(lat.get(SIMPLE)!);
		const n = median(lat.get(NONE)!);
		console.log(machineLine(`n8n ${N8N_VERSION}`));
		console.log(
			`\n### AI Agent chat turn: LLM Memory Store vs Simple Memory (${SEED}→${SEED + TURNS} stored turns, window ${WINDOW} turns, ${TURNS} turns per variant, rotating; ms)\n`,
		);
		console.log('| workflow | median | p10 | p90 | history sent |');
		console.log('|---|---:|---:|---:|---:|');
		for (const v of variants) console.log(row(v));
		console.log(
			`\nLLM Memory Store vs Simple Memory at the median: ${s - m >= 0 ? '+' : ''}${(s - m).toFixed(1)} ms per turn (ratio ${(s / m).toFixed(2)}×).`,
		);
		console.log(
			`Over the agent without memory: store ${(s - n).toFixed(1)} ms (${(s / n).toFixed(2)}×), Simple Memory ${(m - n).toFixed(1)} ms (${(m / n).toFixed(2)}×).`,
		);
	} finally {
		await n8n.stop();
		await llm.close();
	}
})().catch((e) => {
	console.error(e);
	process.exit(1);
});
