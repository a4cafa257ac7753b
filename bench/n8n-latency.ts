/**
 * Chat-turn latency through a real n8n (N8N_VERSION, default the newest; benchmark, not a test): the same Chat Trigger workflow
 * with Node memory holding 100 stored turns, against the workflow with memory off. Both use the same
 * local OpenAI-compatible server (the only stand-in: no real model is reachable here). A third variant
 * keeps the memory work but a 0-token history budget, to split storage cost from the cost of a longer
 * prompt. Turns rotate between the variants so machine noise hits all alike. Prints a markdown table.
 */
import { sendChat } from '../test/support/chat';
import { N8N_VERSION, packPackage, startN8n } from '../test/support/n8n-harness';
import { chatWorkflow, openAiCredential } from '../test/support/workflows';
import { startFakeOpenAi } from '../demo/model-server';
import { freePort } from '../test/support/rgw';
import { machineLine, median, percentile } from './stats';

const WITH = { id: 'benchWithMemory1', webhookId: 'be0c0de0-0000-4000-8000-0000000000b1' };
const WITHOUT = { id: 'benchNoMemory001', webhookId: 'be0c0de0-0000-4000-8000-0000000000b2' };
/** Node memory that reads, appends and flushes, but sends no history: the storage cost alone. */
const STORAGE_ONLY = { id: 'benchStoreOnly01', webhookId: 'be0c0de0-0000-4000-8000-0000000000b3' };
const SEED = 100;
const TURNS = Number(process.env.BENCH_TURNS ?? 60);

(async () => {
	const [tarball, llm] = await Promise.all([packPackage(), startFakeOpenAi({ port: 0 })]);
	const n8n = await startN8n({
		tarball,
		port: await freePort(),
		brokerPort: await freePort(),
		credentials: [openAiCredential(llm.url)],
		workflows: [
			chatWorkflow({
				...WITH,
				name: 'bench: node memory',
				llms: [{ name: 'LLM', id: 'bench-llm-mem', parameters: { memoryMode: 'node' } }],
			}),
			chatWorkflow({
				...WITHOUT,
				name: 'bench: no memory',
				llms: [{ name: 'LLM', id: 'bench-llm-none', parameters: { memoryMode: 'none' } }],
			}),
			chatWorkflow({
				...STORAGE_ONLY,
				name: 'bench: memory, no history sent',
				llms: [
					{
						name: 'LLM',
						id: 'bench-llm-store',
						parameters: { memoryMode: 'node', options: { maxHistoryTokens: 0 } },
					},
				],
			}),
		],
	});
	try {
		const turn = async (wf: typeof WITH, i: number) => {
			const r = await sendChat(n8n.chatUrl(wf.webhookId), {
				sessionId: 'bench',
				chatInput: `message number ${i} about the weather and the plan for tomorrow`,
			});
			if (r.status !== 200) throw new Error(`turn failed: ${r.status} ${r.body}`);
			return r;
		};
		for (let i = 0; i < SEED; i++) await Promise.all([turn(WITH, i), turn(STORAGE_ONLY, i)]);
		for (let i = 0; i < 5; i++) await turn(WITHOUT, i); // warm-up
		const variants = [WITH, WITHOUT, STORAGE_ONLY];
		const lat = new Map(variants.map((v) => [v, [] as number[]]));
		let history = 0;
		for (let i = 0; i < TURNS; i++) {
			for (let k = 0; k < variants.length; k++) {
				const wf = variants[(i + k) % variants.length];
				const r = await turn(wf, SEED + i);
				lat.get(wf)!.push(r.ms);
				if (wf === WITH) history = r.json.memory.historyMessages;
			}
		}
		const row = (xs: number[]) =>
			`${median(xs).toFixed(1)} | ${percentile(xs, 0.1).toFixed(1)} | ${percentile(xs, 0.9).toFixed(1)}`;
		const m = median(lat.get(WITH)!);
		const n = median(lat.get(WITHOUT)!);
		const s = median(lat.get(STORAGE_ONLY)!);
		console.log(machineLine(`n8n ${N8N_VERSION}`));
		console.log(`\n### Chat turn through n8n (${TURNS} turns per variant, rotating; ms)\n`);
		console.log('| workflow | median | p10 | p90 | history sent |');
		console.log('|---|---:|---:|---:|---:|');
		console.log(
			`| Chat → LLM with Memory, Node memory, ${SEED}→${SEED + TURNS} stored turns (local disk) | ${row(lat.get(WITH)!)} | ${history} messages (2,000-token budget) |`,
		);
		console.log(
			`| same, Node memory with a 0-token history budget (storage work only) | ${row(lat.get(STORAGE_ONLY)!)} | 0 |`,
		);
		console.log(`| same workflow, Memory Mode None | ${row(lat.get(WITHOUT)!)} | 0 |`);
		console.log(
			`\nMemory overhead at the median: ${(m - n).toFixed(1)} ms per turn (ratio ${(m / n).toFixed(2)}×), of which`,
		);
		console.log(
			`reading, appending and flushing is ${(s - n).toFixed(1)} ms (${(s / n).toFixed(2)}×) and the rest is n8n and the model client handling the longer prompt.`,
		);
	} finally {
		await n8n.stop();
		await llm.close();
	}
})().catch((e) => {
	console.error(e);
	process.exit(1);
});
