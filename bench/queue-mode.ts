/**
 * Chat-turn latency and throughput in n8n's queue mode (main + 2 workers, PostgreSQL, Redis, memory on
 * radosgw S3) against regular mode (one n8n, memory on local disk), both running at once on this
 * machine (benchmark, not a test). The same workflow (Chat Trigger → LLM with Memory, Conversation mode)
 * runs in both; n8n's OpenAI Chat Model node talks to the local fake OpenAI-compatible server (the only
 * stand-in; it answers at once), so the figures are n8n's and the memory's own cost.
 *
 * At concurrency c, c sessions send turns one after another (c turns in flight); each batch uses fresh
 * sessions so history length is the same in every batch. Batches alternate between the two modes, which
 * swap order each round, so machine noise hits both alike. Prints a markdown table.
 *
 *   N8N_VERSION=2.8.4 node --import tsx bench/queue-mode.ts     (BENCH_ROUNDS 3, BENCH_BATCH 24 turns)
 */
import { startFakeOpenAi } from '../demo/model-server';
import { sendChat } from '../test/support/chat';
import { N8N_VERSION, packPackage, startN8n } from '../test/support/n8n-harness';
import { startQueueCluster } from '../test/support/queue-cluster';
import { freePort, RGW_CREDENTIALS, rgwStorage } from '../test/support/rgw';
import {
	chatWorkflow,
	openAiCredential,
	S3_CREDENTIAL,
	s3Credential,
} from '../test/support/workflows';
import { machineLine, median } from './stats';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BATCH = Number(process.env.BENCH_BATCH ?? 24);
const LEVELS = [1, 4, 8];
const WF = { id: 'benchQueueMode01', webhookId: 'be0c0de0-0000-4000-8000-0000000000d1' };

function workflow(storage: 'localDisk' | 's3') {
	return chatWorkflow({
		...WF,
		name: `bench: queue mode vs regular (${storage})`,
		llms: [
			{
				name: 'LLM',
				id: 'be000000-0000-4000-8000-0000000000d1',
				parameters: { memoryMode: 'conversation', storage },
				...(storage === 's3' ? { credentials: { llmMemoryS3Api: S3_CREDENTIAL } } : {}),
			},
		],
	});
}

/** The same chat flow with n8n's own Basic LLM Chain instead of our node (a control: no package code). */
const CHAIN = { id: 'benchQueueChain1', webhookId: 'be0c0de0-0000-4000-8000-0000000000d2' };
function chainWorkflow() {
	const wf = chatWorkflow({
		...CHAIN,
		name: 'bench: Basic LLM Chain (control)',
		llms: [{ name: 'LLM', id: 'be000000-0000-4000-8000-0000000000d2', parameters: {} }],
	});
	for (const node of wf.nodes)
		if (node.name === 'LLM')
			Object.assign(node, {
				type: '@n8n/n8n-nodes-langchain.chainLlm',
				typeVersion: 1.9,
				parameters: { promptType: 'auto' },
			});
	return wf;
}

/** A request n8n did not answer within this long counts as unanswered (and stalls its batch). */
const REQUEST_TIMEOUT_MS = 30_000;

interface Batch {
	latencies: number[];
	turnsPerSecond: number;
	unanswered: number;
}

/** BATCH turns over `c` fresh sessions, c in flight. */
async function batch(url: string, c: number, tag: string): Promise<Batch> {
	const latencies: number[] = [];
	let unanswered = 0;
	const started = performance.now();
	await Promise.all(
		Array.from({ length: c }, async (_, s) => {
			for (let i = s; i < BATCH; i += c) {
				const r = await sendChat(
					url,
					{
						sessionId: `${tag}-s${s}`,
						chatInput: `turn ${i} about the weather and the plan for tomorrow`,
					},
					REQUEST_TIMEOUT_MS,
				).catch((e: Error) => {
					if (e.name !== 'TimeoutError') throw e;
					return undefined;
				});
				if (!r) {
					unanswered++;
					continue;
				}
				if (r.status !== 200) throw new Error(`${tag}: turn failed: ${r.status} ${r.body}`);
				latencies.push(r.ms);
			}
		}),
	);
	return { latencies, unanswered, turnsPerSecond: BATCH / ((performance.now() - started) / 1000) };
}

(async () => {
	const [tarball, llm, s3] = await Promise.all([
		packPackage(),
		startFakeOpenAi({ port: 0 }),
		rgwStorage({ prefix: 'n8n' }),
	]);
	const regular = await startN8n({
		tarball,
		port: await freePort(),
		brokerPort: await freePort(),
		credentials: [openAiCredential(llm.url)],
		workflows: [workflow('localDisk')],
	});
	const cluster = await startQueueCluster({
		tarball,
		port: 5840, // the queue-mode test uses 5790 and up
		credentials: [
			openAiCredential(llm.url),
			s3Credential(s3.endpoint!, s3.bucket, RGW_CREDENTIALS),
		],
		workflows: [workflow('s3'), chainWorkflow()],
	});
	try {
		const modes = [
			{ name: 'regular', url: regular.chatUrl(WF.webhookId) },
			{ name: 'queue', url: cluster.main.chatUrl(WF.webhookId) },
		];
		for (const m of modes) await batch(m.url, 4, `warm-${m.name}`); // JIT, connections, first writes
		const results = new Map<string, Batch[]>();
		for (const c of LEVELS)
			for (let r = 0; r < ROUNDS; r++)
				for (const m of r % 2 ? [...modes].reverse() : modes) {
					const key = `${m.name}@${c}`;
					results.set(key, [...(results.get(key) ?? []), await batch(m.url, c, `${key}-r${r}`)]);
				}
		const lat = (key: string) => median(results.get(key)!.flatMap((b) => b.latencies));
		const tps = (key: string) => median(results.get(key)!.map((b) => b.turnsPerSecond));
		console.log(machineLine(`n8n ${N8N_VERSION}`));
		console.log(
			`\n### Chat turns: queue mode (main + 2 workers, PostgreSQL, Redis, memory on radosgw) vs regular mode (one n8n, memory on local disk); ${ROUNDS} interleaved batches of ${BATCH} turns per cell\n`,
		);
		console.log(
			'| concurrency | regular: median latency (ms) | queue: median latency (ms) | latency ratio | regular: turns/s | queue: turns/s | throughput ratio |',
		);
		console.log('|---:|---:|---:|---:|---:|---:|---:|');
		for (const c of LEVELS) {
			const [lr, lq, tr, tq] = [
				lat(`regular@${c}`),
				lat(`queue@${c}`),
				tps(`regular@${c}`),
				tps(`queue@${c}`),
			];
			console.log(
				`| ${c} | ${lr.toFixed(0)} | ${lq.toFixed(0)} | ${(lq / lr).toFixed(2)}× | ${tr.toFixed(1)} | ${tq.toFixed(1)} | ${(tq / tr).toFixed(2)}× |`,
			);
		}
		const lost = (mode: string) =>
			LEVELS.reduce(
				(n, c) => n + results.get(`${mode}@${c}`)!.reduce((k, b) => k + b.unanswered, 0),
				0,
			);
		const total = LEVELS.length * ROUNDS * BATCH;
		// The control: n8n's own Basic LLM Chain on the same queue-mode cluster, concurrency 8.
		let control = 0;
		for (let r = 0; r < ROUNDS; r++)
			control += (await batch(cluster.main.chatUrl(CHAIN.webhookId), 8, `chain-r${r}`)).unanswered;
		console.log(
			`\nChat requests n8n left unanswered (no reply within ${REQUEST_TIMEOUT_MS / 1000} s): regular ${lost('regular')} of ${total}, queue ${lost('queue')} of ${total}; control without this package (n8n's Basic LLM Chain, queue mode, concurrency 8): ${control} of ${ROUNDS * BATCH}. Latency medians leave them out; turns/s counts the stall.`,
		);
		const failed = [WF.id, CHAIN.id]
			.flatMap((id) => cluster.executions(id))
			.filter((e) => e.status !== 'success');
		console.log(`Queue-mode executions n8n recorded as anything but success: ${failed.length}.`);
		const byWorker = [0, 1].map(
			(w) => [...cluster.executionWorkers().values()].filter((x) => x === w).length,
		);
		console.log(`\nQueue-mode executions per worker: ${byWorker.join(' / ')}.`);
	} finally {
		await Promise.all([regular.stop(), cluster.stop()]);
		await llm.close();
	}
})().catch((e) => {
	console.error(e);
	process.exit(1);
});
