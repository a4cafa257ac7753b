/**
 * Memory cost per chat turn through a real n8n: our nodes against n8n's own memories (benchmark, not a test).
 *
 * One n8n (N8N_VERSION, the harness's default otherwise), the package from its `npm pack` tarball, every
 * workflow a Chat Trigger whose chat turns are POSTed to its webhook, the model n8n's own OpenAI Chat
 * Model node pointed at demo/model-server.ts (a local stand-in that answers instantly). Variants:
 *   AI Agent + Simple Memory            (in-process; pre-filled by driving turns through n8n)
 *   AI Agent + Postgres Chat Memory     (Debian's PostgreSQL via scripts/services.sh; rows written directly
 *                                        into n8n_chat_histories in LangChain's format)
 *   AI Agent + Redis Chat Memory        (Debian's redis-server; one list per session, written directly)
 *   AI Agent + LLM Memory Store         (ours, when the package has that node; local disk, Node mode,
 *                                        its document written directly with the engine from src/)
 *   AI Agent without memory             baseline of the four above
 *   LLM with Memory, Node memory        (ours, local disk; its document written directly with the engine)
 *   LLM with Memory, Memory Mode None   baseline of ours
 * Every memory uses a window of BENCH_WINDOW turns (Context Window Length = our Window) and a token budget
 * that never cuts, so every variant sends the model the same prompt: system + 2×window history + user.
 * The fake server's request log is checked after every turn (exactly one model call, that prompt shape,
 * the newest history message = this session's previous turn); any mismatch aborts the run.
 *
 * At each length in BENCH_SIZES (stored turns before measuring), the variants are pre-filled, warmed up,
 * then measured round-robin (BENCH_TURNS turns each, rotating the order) so machine noise hits all alike.
 * Memory cost = a variant's median minus its own baseline's median. After the run, n8n's saved run data
 * (its SQLite database) splits each measured turn into: outside the execution (HTTP, webhook, saving the
 * execution), the root node, its memory and model sub-nodes, and the size of the run data saved.
 *
 *   node --import tsx bench/memory-compare.ts          (prints markdown on stdout, progress on stderr)
 * Knobs (env): BENCH_SIZES (100,1000), BENCH_TURNS (40), BENCH_WINDOW (10), BENCH_WARMUP (3 turns per
 * variant and length), BENCH_STORE (auto: include LLM Memory Store when package.json declares it; 0 = never),
 * BENCH_TARBALL (a package .tgz packed beforehand instead of `npm run build` + `npm pack` here; build it from
 * the same tree: our memories are pre-filled with ../src), N8N_VERSION (harness default), E2E_KEEP=1 keeps
 * the work folder (n8n user folder, our memory files). Needs root once to apt-get install PostgreSQL and
 * redis-server (scripts/services.sh install, run here when they are missing).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { LocalDiskStorage, NodeMemory } from '../src/internal';
import {
	agentChatWorkflow,
	postgresCredential,
	postgresMemory,
	redisCredential,
	redisMemory,
	simpleMemory,
} from '../test/support/compare-workflows';
import type { MemorySpec } from '../test/support/compare-workflows';
import { sendChat } from '../test/support/chat';
import { contentText, describeReply, startFakeOpenAi } from '../demo/model-server';
import type { ChatMessage, FakeOpenAi } from '../demo/model-server';
import {
	ensureN8n,
	N8N_VERSION,
	packPackage,
	REPO_ROOT,
	startN8n,
} from '../test/support/n8n-harness';
import type { N8nInstance } from '../test/support/n8n-harness';
import { freePort } from '../test/support/rgw';
import { executionTimings } from '../test/support/execution-timings';
import { ensureServices, pgUp, redisUp, resp } from '../test/support/services';
import type { Postgres, Redis } from '../test/support/services';
import { chatWorkflow, openAiCredential } from '../test/support/workflows';
import { machineLine, median, percentile } from './stats';

type Json = Record<string, any>;

const SIZES = (process.env.BENCH_SIZES ?? '100,1000')
	.split(',')
	.map((s) => Number(s.trim()))
	.filter((n) => n > 0);
const TURNS = Number(process.env.BENCH_TURNS ?? 40);
const WINDOW = Number(process.env.BENCH_WINDOW ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
/** A token budget that never cuts a 10-turn window of these messages (our default is 2,000). */
const NO_CUT_TOKENS = 1_000_000;
const SYSTEM = 'You are a helpful assistant'; // the AI Agent's System Message option as the editor fills it in; ours too
const MODEL = 'gpt-4o-mini';
const TABLE = 'n8n_chat_histories';
// Node names in the workflows (compare-workflows.ts, workflows.ts), for the breakdown from n8n's run data.
const AGENT_NODE = 'AI Agent';
const AGENT_MODEL_NODE = 'OpenAI Chat Model';
const OUR_NODES = { root: 'LLM', model: 'LLM Model' };

const userText = (i: number) => `message number ${i} about the weather and the plan for tomorrow`;
/** The fake model's answer to userText(i) in the steady state (system + 2×window history + user). */
function replyText(i: number): string {
	const history: ChatMessage[] = Array.from({ length: 2 * WINDOW }, (_, k) => ({
		role: k % 2 ? 'assistant' : 'user',
		content: '',
	}));
	return describeReply([
		{ role: 'system', content: SYSTEM },
		...history,
		{ role: 'user', content: userText(i) },
	]);
}

/** Whether the package declares the LLM Memory Store node (another part of the project builds it). */
function storeNodeDeclared(): boolean {
	if (process.env.BENCH_STORE === '0') return false;
	const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
	return (pkg.n8n?.nodes ?? []).some((p: string) => p.includes('LlmMemoryStore'));
}

interface Variant {
	key: string;
	label: string;
	/** The baseline it is measured against (undefined: it is a baseline). */
	baseline?: string;
	memory: boolean;
	id: string;
	webhookId: string;
	workflow: Json;
	/** Writes `turns` turns into the session's memory before measuring. */
	prefill?: (session: string, turns: number) => Promise<void>;
	/** Latencies per length. */
	ms: Map<number, number[]>;
	/** Stored turns per session, and the last user message sent in it. */
	stored: Map<string, number>;
	last: Map<string, string>;
	/** Per turn sent to this workflow, in order: the length it was measured at, or 0 (pre-fill, warm-up). */
	tags: number[];
	/** Names of the root node, its memory sub-node and its model sub-node (for the breakdown). */
	nodes: { root: string; memory?: string; model: string };
}

(async () => {
	const started = Date.now();
	ensureServices();
	const work = mkdtempSync(path.join(tmpdir(), 'llm-memory-compare-'));
	const memoryFolder = path.join(work, 'llm-memory'); // our nodes' Local Disk folder (absolute)
	// Interrupted: the harness and services.ts stop n8n, PostgreSQL and Redis (their handlers run first);
	// this removes the work folder, then re-raises so the process ends as signalled.
	for (const sig of ['SIGINT', 'SIGTERM'] as const) {
		process.once(sig, () => {
			if (!process.env.E2E_KEEP) rmSync(work, { recursive: true, force: true });
			process.kill(process.pid, sig);
		});
	}
	let pg: Postgres | undefined;
	let redis: Redis | undefined;
	let llm: FakeOpenAi | undefined;
	let n8n: N8nInstance | undefined;
	try {
		pg = pgUp({ lifetimeSeconds: 3 * 3600 });
		redis = redisUp({ lifetimeSeconds: 3 * 3600 });
		const withStore = storeNodeDeclared();
		// BENCH_TARBALL: a package packed beforehand (e.g. from a quiet copy of the tree while others edit it).
		const [tarball, fake, n8nDir] = await Promise.all([
			process.env.BENCH_TARBALL ?? packPackage(),
			startFakeOpenAi({ port: 0 }),
			ensureN8n(),
		]);
		llm = fake;
		// LangChain's own message serialisation, from the n8n being measured: the rows and list entries we
		// write are what its Postgres and Redis chat histories write (checked against n8n's own rows below).
		const lc = createRequire(
			path.join(n8nDir, 'node_modules/@n8n/n8n-nodes-langchain/package.json'),
		)('@langchain/core/messages');
		const stored = (role: 'user' | 'assistant', text: string) =>
			lc.mapChatMessagesToStoredMessages([
				role === 'user' ? new lc.HumanMessage(text) : new lc.AIMessage(text),
			])[0] as { type: string; data: Json };

		const variants: Variant[] = [];
		const add = (v: Omit<Variant, 'ms' | 'stored' | 'last' | 'tags'>) =>
			variants.push({ ...v, ms: new Map(), stored: new Map(), last: new Map(), tags: [] });
		const ids = (n: number) => ({
			id: `benchCompare${String(n).padStart(4, '0')}`,
			webhookId: `c0ffee00-0000-4000-8000-00000000000${n}`,
		});
		const agent = (
			n: number,
			key: string,
			label: string,
			memory?: MemorySpec,
			prefill?: Variant['prefill'],
		) => {
			const { id, webhookId } = ids(n);
			const nodes = { root: AGENT_NODE, memory: memory?.name, model: AGENT_MODEL_NODE };
			const workflow = agentChatWorkflow({
				id,
				webhookId,
				name: `compare: ${label}`,
				memory,
				systemMessage: SYSTEM,
			});
			add({
				key,
				label,
				id,
				webhookId,
				memory: !!memory,
				baseline: memory ? 'agent-none' : undefined,
				prefill,
				workflow,
				nodes,
			});
		};
		const ourNodeId = 'compare-llm-node';
		const ourStoreId = 'compare-store-node';
		/** Our document for a session, written with the engine as the node would have written it. */
		const prefillOurs =
			(workflowId: string, nodeId: string) => async (session: string, turns: number) => {
				const memory = new NodeMemory(workflowId, session, nodeId, {
					storage: new LocalDiskStorage({ root: memoryFolder }),
					model: MODEL,
				});
				for (let i = 0; i < turns; i++)
					await memory.addMessages({ userContent: userText(i), assistantContent: replyText(i) });
				await memory.flush();
			};

		agent(
			1,
			'agent-simple',
			'AI Agent + Simple Memory',
			simpleMemory(WINDOW),
			async (session, turns) => {
				for (let i = 0; i < turns; i++) await turn(byKey('agent-simple'), session, userText(i), 0);
			},
		);
		agent(
			2,
			'agent-postgres',
			'AI Agent + Postgres Chat Memory',
			postgresMemory(WINDOW),
			async (session, turns) => {
				const q = (s: string) => `'${s.replace(/'/g, "''")}'`;
				const values: string[] = [];
				for (let i = 0; i < turns; i++) {
					for (const [role, text] of [
						['user', userText(i)],
						['assistant', replyText(i)],
					] as const) {
						const { type, data } = stored(role, text);
						values.push(`(${q(session)}, ${q(JSON.stringify({ ...data, type }))}::jsonb)`);
					}
				}
				// The table as LangChain's PostgresChatMessageHistory creates it (no index on session_id).
				pg!.psql(
					`CREATE TABLE IF NOT EXISTS ${TABLE} (id SERIAL PRIMARY KEY, session_id VARCHAR(255) NOT NULL, message JSONB NOT NULL);\n` +
						`INSERT INTO ${TABLE} (session_id, message) VALUES\n${values.join(',\n')};\n`,
				);
			},
		);
		agent(
			3,
			'agent-redis',
			'AI Agent + Redis Chat Memory',
			redisMemory(WINDOW),
			async (session, turns) => {
				// LangChain's RedisChatMessageHistory: LPUSH of JSON {type, data} per message, so the newest is first.
				const entries: string[] = [];
				for (let i = 0; i < turns; i++)
					entries.push(
						JSON.stringify(stored('user', userText(i))),
						JSON.stringify(stored('assistant', replyText(i))),
					);
				const commands = [['DEL', session]];
				for (let k = 0; k < entries.length; k += 500)
					commands.push(['LPUSH', session, ...entries.slice(k, k + 500)]);
				const out = redis!.cli(['--pipe'], resp(commands));
				if (!/errors: 0,/.test(out)) throw new Error(`redis pre-fill failed: ${out}`);
			},
		);
		if (withStore) {
			const { id } = ids(4);
			agent(
				4,
				'agent-store',
				'AI Agent + LLM Memory Store (ours)',
				{
					type: 'n8n-nodes-llm-memory.llmMemoryStore',
					typeVersion: 1,
					id: ourStoreId,
					name: 'LLM Memory Store',
					parameters: {
						memoryMode: 'node',
						contextWindowLength: WINDOW,
						maxHistoryTokens: NO_CUT_TOKENS,
						storage: 'localDisk',
						localFolder: memoryFolder,
					},
				},
				prefillOurs(id, ourStoreId),
			);
		}
		agent(5, 'agent-none', 'AI Agent without memory (baseline)');
		{
			const { id, webhookId } = ids(6);
			add({
				key: 'ours-node',
				label: 'LLM with Memory, Node memory (ours)',
				baseline: 'ours-none',
				memory: true,
				id,
				webhookId,
				prefill: prefillOurs(id, ourNodeId),
				nodes: OUR_NODES,
				workflow: chatWorkflow({
					id,
					webhookId,
					name: 'compare: LLM with Memory, node',
					llms: [
						{
							name: 'LLM',
							id: ourNodeId,
							parameters: {
								systemMessage: SYSTEM,
								memoryMode: 'node',
								storage: 'localDisk',
								localFolder: memoryFolder,
								options: { window: WINDOW, maxHistoryTokens: NO_CUT_TOKENS },
							},
						},
					],
				}),
			});
		}
		{
			const { id, webhookId } = ids(7);
			add({
				key: 'ours-none',
				label: 'LLM with Memory, Memory Mode None (baseline)',
				memory: false,
				id,
				webhookId,
				nodes: OUR_NODES,
				workflow: chatWorkflow({
					id,
					webhookId,
					name: 'compare: LLM with Memory, none',
					llms: [
						{
							name: 'LLM',
							id: 'compare-llm-none',
							parameters: { systemMessage: SYSTEM, memoryMode: 'none' },
						},
					],
				}),
			});
		}
		function byKey(key: string): Variant {
			const v = variants.find((x) => x.key === key);
			if (!v) throw new Error(`no variant ${key}`);
			return v;
		}

		const port = await freePort();
		n8n = await startN8n({
			tarball,
			userFolder: path.join(work, 'n8n'), // kept after stop() for the breakdown, deleted with `work`
			port,
			brokerPort: await freePort(),
			credentials: [openAiCredential(llm.url), postgresCredential(pg), redisCredential(redis)],
			workflows: variants.map((v) => v.workflow),
		});
		console.error(
			`n8n ${n8n.version} up in ${(n8n.bootMs / 1000).toFixed(1)} s; ${variants.length} workflows`,
		);

		/**
		 * One chat turn; checks the model call it caused: exactly one, system + history + this user message,
		 * the history 2×min(window, stored turns) messages (0 without memory) ending with this session's
		 * previous turn. Returns the round-trip time.
		 */
		async function turn(v: Variant, session: string, input: string, tag: number): Promise<number> {
			llm!.clear();
			const r = await sendChat(n8n!.chatUrl(v.webhookId), { sessionId: session, chatInput: input });
			const calls = llm!.completions();
			const where = `${v.label}, session ${session}, input "${input}"`;
			if (r.status !== 200 || typeof r.json?.output !== 'string')
				throw new Error(`${where}: HTTP ${r.status} ${r.body.slice(0, 500)}`);
			if (calls.length !== 1) throw new Error(`${where}: ${calls.length} model calls, expected 1`);
			const messages: ChatMessage[] = calls[0].body?.messages ?? [];
			const roles = messages.map((m) => m.role);
			const before = v.stored.get(session) ?? 0;
			const expected = v.memory ? 2 * Math.min(WINDOW, before) : 0;
			const history = messages.slice(1, -1);
			const problems: string[] = [];
			if (roles[0] !== 'system' || contentText(messages[0]?.content) !== SYSTEM)
				problems.push('the first message is not the system message');
			if (
				roles[roles.length - 1] !== 'user' ||
				contentText(messages[messages.length - 1]?.content) !== input
			)
				problems.push('the last message is not this turn’s user message');
			if (history.length !== expected)
				problems.push(`${history.length} history messages, expected ${expected}`);
			if (history.some((m, k) => m.role !== (k % 2 ? 'assistant' : 'user')))
				problems.push('history is not user/assistant pairs');
			if (
				expected > 0 &&
				contentText(history[history.length - 2]?.content) !== v.last.get(session)
			) {
				problems.push(
					`newest history turn is "${contentText(history[history.length - 2]?.content)}", expected "${v.last.get(session)}"`,
				);
			}
			if (problems.length)
				throw new Error(`${where}: the model got [${roles.join(',')}]: ${problems.join('; ')}`);
			v.stored.set(session, before + 1);
			v.last.set(session, input);
			v.tags.push(tag);
			if (tag) v.ms.get(tag)!.push(r.ms);
			else if ((before + 1) % 250 === 0) console.error(`  ${v.label}: ${before + 1} turns`);
			return r.ms;
		}

		const rotate = async (
			size: number,
			rounds: number,
			record: boolean,
			counter: { next: number },
		) => {
			for (let i = 0; i < rounds; i++) {
				for (let k = 0; k < variants.length; k++) {
					const v = variants[(i + k) % variants.length];
					await turn(v, `${v.key}-n${size}`, userText(counter.next++), record ? size : 0);
				}
			}
		};

		/** n8n's own rows and list entries have the shape of the ones we wrote (checked once, after n8n wrote some). */
		const checkFormats = (size: number) => {
			const keysOf = (o: Json) => Object.keys(o).sort().join(',');
			const expect = {
				human: keysOf({ ...stored('user', 'x').data, type: 'human' }),
				ai: keysOf({ ...stored('assistant', 'x').data, type: 'ai' }),
			};
			const expectRedis = {
				human: keysOf(stored('user', 'x').data),
				ai: keysOf(stored('assistant', 'x').data),
			};
			const rows = pg!
				.psql(
					`SELECT message::text FROM ${TABLE} WHERE session_id = 'agent-postgres-n${size}' ORDER BY id DESC LIMIT 2`,
				)
				.split('\n')
				.map((l) => JSON.parse(l));
			for (const row of rows) {
				if (keysOf(row) !== expect[row.type as 'human' | 'ai'])
					throw new Error(
						`n8n wrote a Postgres row ${JSON.stringify(row)}; we pre-filled rows with keys ${JSON.stringify(expect)}`,
					);
			}
			const entries = redis!
				.cli(['LRANGE', `agent-redis-n${size}`, '0', '1'])
				.split('\n')
				.map((l) => JSON.parse(l));
			for (const e of entries) {
				if (keysOf(e.data ?? {}) !== expectRedis[e.type as 'human' | 'ai'])
					throw new Error(
						`n8n wrote a Redis entry ${JSON.stringify(e)}; we pre-filled entries with data keys ${JSON.stringify(expectRedis)}`,
					);
			}
		};

		for (const size of SIZES) {
			const t0 = Date.now();
			// Only this length's sessions in the Postgres table (it has no index on session_id: every read scans it).
			pg.psql(`DROP TABLE IF EXISTS ${TABLE};`);
			for (const v of variants) {
				v.ms.set(size, []);
				if (!v.prefill) continue;
				const session = `${v.key}-n${size}`;
				await v.prefill(session, size);
				if (v.key !== 'agent-simple') v.stored.set(session, size); // Simple Memory counted its own turns
				v.last.set(session, userText(size - 1));
			}
			console.error(`length ${size}: pre-filled in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
			const counter = { next: size };
			await rotate(size, WARMUP, false, counter);
			checkFormats(size);
			await rotate(size, TURNS, true, counter);
			console.error(`length ${size}: ${TURNS} turns × ${variants.length} variants measured`);
		}

		// ---- where the time goes: n8n's own record of each execution (read after n8n stopped) ----
		await n8n.stop();
		const timings = (await executionTimings(path.join(work, 'n8n'))).filter(
			(t) => t.status === 'success',
		);
		const parts = new Map<Variant, Map<number, Array<Record<string, number>>>>();
		for (const v of variants) {
			const runs = timings.filter((t) => t.workflowId === v.id);
			if (runs.length !== v.tags.length) {
				console.error(
					`breakdown skipped for ${v.label}: n8n saved ${runs.length} successful executions, ${v.tags.length} turns were sent`,
				);
				continue;
			}
			const bySize = new Map<number, Array<Record<string, number>>>();
			runs.forEach((t, i) => {
				const size = v.tags[i];
				if (!size) return;
				if (!bySize.has(size)) bySize.set(size, []);
				const sum = (name?: string) =>
					name ? (t.nodes[name] ?? []).reduce((a, b) => a + b, 0) : 0;
				const root = sum(v.nodes.root);
				const memory = sum(v.nodes.memory);
				const model = sum(v.nodes.model);
				const roundTrip = v.ms.get(size)![bySize.get(size)!.length]; // the n-th measured turn at this length
				bySize.get(size)!.push({
					roundTrip,
					outside: roundTrip - t.ms,
					execution: t.ms,
					root,
					memory,
					model,
					own: root - memory - model,
					kb: t.dataChars / 1024,
				});
			});
			parts.set(v, bySize);
		}

		// ---- report ----
		const f1 = (x: number) => x.toFixed(1);
		const cost = (v: Variant, size: number) =>
			median(v.ms.get(size)!) - median(byKey(v.baseline!).ms.get(size)!);
		const ours = byKey('ours-node');
		console.log(machineLine(`n8n ${N8N_VERSION}, ${pg.version()}, ${redis.version()}`));
		console.log(
			`\nThe model is a local stand-in (demo/model-server.ts behind n8n's OpenAI Chat Model node) that answers instantly, so these are the costs of n8n and the memories alone. ` +
				`Every variant sent the model the same prompt shape: system + ${2 * WINDOW} history messages (window ${WINDOW} turns) + the user message (checked on every turn in the fake server's log; baselines: no history). ` +
				`${TURNS} turns per variant and length, round-robin in one run; ms; memory cost = median − its baseline's median.`,
		);
		for (const size of SIZES) {
			console.log(
				`\n### ${size.toLocaleString('en-US')} stored turns (${size.toLocaleString('en-US')}→${(size + WARMUP + TURNS).toLocaleString('en-US')})\n`,
			);
			console.log('| variant | median | p10 | p90 | history sent | memory cost | cost ÷ ours |');
			console.log('|---|---:|---:|---:|---:|---:|---:|');
			const oursCost = cost(ours, size);
			for (const v of variants) {
				const xs = v.ms.get(size)!;
				const c = v.baseline ? cost(v, size) : undefined;
				const ratio =
					c === undefined
						? ''
						: v === ours
							? '1.00×'
							: oursCost > 0
								? `${(c / oursCost).toFixed(2)}×`
								: 'n/a (ours ≤ 0)';
				console.log(
					`| ${v.label} | ${f1(median(xs))} | ${f1(percentile(xs, 0.1))} | ${f1(percentile(xs, 0.9))} | ${v.memory ? 2 * WINDOW : 0} | ${c === undefined ? '—' : `**${f1(c)}**`} | ${ratio} |`,
				);
			}
		}
		if (parts.size) {
			const m = (v: Variant, size: number, key: string) => {
				const xs = parts
					.get(v)
					?.get(size)
					?.map((p) => p[key]);
				return xs?.length ? f1(median(xs)) : '?';
			};
			for (const size of SIZES) {
				console.log(
					`\n### Where the time goes at ${size.toLocaleString('en-US')} stored turns (medians per turn, ms, from n8n's saved run data)\n`,
				);
				console.log(
					'| variant | round trip | outside the execution (HTTP, webhook, start, save) | execution | root node | its memory sub-node (load + save) | its model sub-node | root node’s own work | run data saved |',
				);
				console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
				for (const v of variants) {
					const mem = v.nodes.memory
						? m(v, size, 'memory')
						: v.memory
							? '(inside the root node)'
							: '—';
					console.log(
						`| ${v.label} | ${m(v, size, 'roundTrip')} | ${m(v, size, 'outside')} | ${m(v, size, 'execution')} | ${m(v, size, 'root')} | ${mem} | ${m(v, size, 'model')} | ${m(v, size, 'own')} | ${m(v, size, 'kb')} KB |`,
					);
				}
			}
			console.log(
				'\nRoot node = the AI Agent or LLM with Memory, sub-node calls included; own work = root − memory sub-node − model sub-node (for LLM with Memory, its memory work is in there). Outside the execution = round trip − (stoppedAt − startedAt). Run data saved = the execution data n8n wrote to its database for the turn.',
			);
		}
		if (SIZES.length > 1) {
			console.log('\n### Memory cost per chat turn (median − baseline median, ms)\n');
			console.log(
				`| memory | ${SIZES.map((s) => `${s.toLocaleString('en-US')} turns`).join(' | ')} |`,
			);
			console.log(`|---|${SIZES.map(() => '---:').join('|')}|`);
			for (const v of variants.filter((x) => x.baseline))
				console.log(`| ${v.label} | ${SIZES.map((s) => f1(cost(v, s))).join(' | ')} |`);
			const lowest = SIZES.map((s) => {
				const best = variants
					.filter((x) => x.baseline)
					.reduce((a, b) => (cost(b, s) < cost(a, s) ? b : a));
				return `${s.toLocaleString('en-US')}: ${best.label}`;
			});
			console.log(`\nLowest memory cost — ${lowest.join('; ')}.`);
		}
		console.error(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
	} finally {
		await n8n?.stop();
		await llm?.close();
		redis?.stop();
		pg?.stop();
		if (process.env.E2E_KEEP)
			console.error(`kept ${work} (n8n user folder in n8n/, our memory in llm-memory/)`);
		else rmSync(work, { recursive: true, force: true });
	}
})().catch((e) => {
	console.error(e);
	process.exit(1);
});
