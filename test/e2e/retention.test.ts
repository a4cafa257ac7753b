/**
 * Retention on a real n8n (N8N_VERSION; scripts/test.sh runs 2.8.4 and 2.40.7): LLM with Memory with
 * Expire After (Days) = 1 keeps chat memory, versioned data and long-term captures of a session; the
 * passage of time is faked by setting the stored last-write times back two days on disk (nothing
 * sleeps). The next turn's request to the model then holds no history, no data and nothing recalled of
 * it, and no stored byte of it is left; the LLM Memory Manager's Prune Expired deletes a session nobody
 * reads and reports it; Save Version with Keep Last N Versions deletes older versions and History says
 * where it was cut; examples/nightly-retention.json, imported as shipped, runs Prune Expired and logs
 * what it deleted. The model is the local fake OpenAI server (the only stand-in).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi } from '../../demo/model-server';
import { WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import { packPackage } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import { openAiCredential } from '../support/workflows';
import { expanded } from '../support/stored-segments';

type Json = Record<string, any>;

const DAY_MS = 86_400_000;
const EXAMPLE_FILE = path.resolve(__dirname, '../../examples/nightly-retention.json');
const EXAMPLE_ID = JSON.parse(readFileSync(EXAMPLE_FILE, 'utf8')).id as string;
const CHAT = { id: 'e2eRetainChat001', webhookId: 'e2e0c0de-0000-4000-8000-0000000re001' };
const PRUNE = { id: 'e2eRetainPrune01', path: 'e2e-retention-prune' };

/** Chat → LLM with Memory keeping chat, versioned data and captures, each expiring after one day. */
function chatWorkflow(): Json {
	const w = new WorkflowBuilder(CHAT.id, 'retention: chat');
	const node = w.llmWithMemory('LLM', 'retention-llm', {
		systemMessage: 'retention bot',
		memoryMode: 'conversation',
		versionedData: true,
		initialData: '{"step": 1}',
		longTermMemory: true,
		longTermOptions: { scope: 'conversation' },
		options: { expireAfterDays: 1 },
	});
	w.main(w.chatTrigger(CHAT.webhookId), node);
	return w.json();
}

/**
 * Webhooks → LLM Memory Manager: Prune Expired (every workflow); Save Version keeping the last 2
 * versions; History (grouped); Get Version (an error becomes the item).
 */
function pruneWorkflow(): Json {
	const w = new WorkflowBuilder(PRUNE.id, 'retention: prune');
	const manager = w.llmMemoryManager(
		'Prune',
		{ resource: 'conversationMemory', operation: 'pruneExpired', pruneScope: 'all' },
		{ typeVersion: 1.1 },
	);
	w.main(w.webhook('Prune Webhook', PRUNE.path), manager);
	const session = { conversationIdType: 'customKey', conversationId: 'data-session' };
	const data = (name: string, parameters: Json) => {
		const node = w.llmMemoryManager(
			name,
			{ resource: 'versionedData', ...session, ...parameters },
			{ typeVersion: 1.1 },
		);
		w.main(w.webhook(`${name} Webhook`, `e2e-retention-${name.toLowerCase()}`), node);
	};
	data('Save', {
		operation: 'saveVersion',
		data: '={{ JSON.stringify($json.body.data) }}',
		summary: '={{ $json.body.summary }}',
		options: { keepLastVersions: 2 },
	});
	data('History', { operation: 'history', returnAll: true, options: { groupEntries: true } });
	data('Version', { operation: 'getVersion', version: '={{ $json.body.version }}' });
	const json = w.json();
	for (const n of json.nodes as Json[])
		if (n.name === 'Version') n.onError = 'continueRegularOutput';
	return json;
}

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;

async function post(hook: string, body: Json = {}): Promise<Json> {
	const res = await fetch(`${n8n!.baseUrl}/webhook/${hook}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	const text = await res.text();
	assert.equal(res.status, 200, text);
	return JSON.parse(text) as Json;
}

const memoryRoot = () => n8n!.memoryRoot;

/** Stored files (relative to the memory folder) holding `text`. */
function filesHolding(text: string): string[] {
	const root = memoryRoot();
	return readdirSync(root, { recursive: true, encoding: 'utf8' })
		.filter((f) => statSync(path.join(root, f)).isFile())
		.filter((f) => expanded(readFileSync(path.join(root, f))).includes(text));
}

/** Sets a session's stored last-write times two days back: chat memory, versioned data, captures. */
function ageSession(session: string): void {
	const back = new Date(Date.now() - 2 * DAY_MS).toISOString();
	const set = (key: string, field: string) => {
		const file = path.join(memoryRoot(), key);
		const doc = JSON.parse(readFileSync(file, 'utf8'));
		assert.equal(doc.expire_after_days, 1, `${key} carries the rule`);
		writeFileSync(file, JSON.stringify({ ...doc, [field]: back }));
	};
	set(`conversation_memory/${CHAT.id}/${session}.json`, 'updated_at');
	set(`versioned_data/${CHAT.id}/${session}/branches/main.json`, 'updated_at');
	set(`memory_base/${CHAT.id}/sessions/${session}/log.json`, 'captured_at');
}

async function say(session: string, text: string): Promise<void> {
	const r = await sendChat(n8n!.chatUrl(CHAT.webhookId), { sessionId: session, chatInput: text });
	assert.equal(r.status, 200, r.body);
}

const lastRequest = () => JSON.stringify(llm!.completions().at(-1)!.body.messages);

describe('Retention on a real n8n', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 });
		n8n = await joinSharedN8n({
			tarball: await packPackage(),
			credentials: [openAiCredential(llm.url)],
			workflows: [chatWorkflow(), pruneWorkflow(), EXAMPLE_FILE],
			// The example's Code node logs to n8n's output with this set, as its note says.
			env: { CODE_ENABLE_STDOUT: 'true' },
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
	});

	it('past its Expire After, a session reaches the model without history, data or recall, and is gone', async () => {
		await say('s1', 'my code is Retain-Secret-4471');
		await say('s1', 'what is my code?');
		assert.match(lastRequest(), /Retain-Secret-4471/, 'within the rule, history reaches the model');
		ageSession('s1');
		await say('s1', 'hello again');
		const messages = llm!.completions().at(-1)!.body.messages as Json[];
		assert.doesNotMatch(JSON.stringify(messages), /Retain-Secret-4471/);
		assert.deepEqual(
			messages.filter((m) => m.role !== 'system').map((m) => m.content),
			['hello again'],
			'no earlier turn',
		);
		assert.deepEqual(filesHolding('Retain-Secret-4471'), [], 'chat, data and captures deleted');
	});

	it('Prune Expired deletes a session nobody reads, every kind, and reports it', async () => {
		await say('s2', 'remember Prune-Secret-9013');
		ageSession('s2');
		// Stored before the sweep: the chat memory and the capture log (whose newest messages the word
		// index reads from the log itself) hold the text.
		const holding = filesHolding('Prune-Secret-9013');
		for (const f of [
			`conversation_memory/${CHAT.id}/s2.json`,
			`memory_base/${CHAT.id}/sessions/s2/log.json`,
		])
			assert.ok(holding.includes(f), `${f} holds it: ${holding.join(', ')}`);
		const out = await post(PRUNE.path);
		const text = JSON.stringify(out);
		assert.deepEqual(
			[out.workflowId, out.chatMemory, out.versionedData, out.captures, out.capturedMessages],
			[null, 1, 1, 1, 2],
			text,
		);
		assert.deepEqual(out.expired, {
			chatMemory: [`${CHAT.id}/s2`],
			versionedData: [`${CHAT.id}/s2`],
			captures: [`${CHAT.id}/s2`],
		});
		assert.deepEqual(out.skipped, []);
		assert.deepEqual(filesHolding('Prune-Secret-9013'), []);
		// The session kept alive by the last test's turn stays.
		assert.ok(existsSync(path.join(memoryRoot(), `conversation_memory/${CHAT.id}/s1.json`)));
	});

	it('Save Version with Keep Last N Versions: older versions deleted, History says where it was cut', async () => {
		for (let i = 1; i <= 4; i++)
			assert.equal(
				(await post('e2e-retention-save', { data: { i }, summary: `s${i}` })).version,
				i,
			);
		const page = await post('e2e-retention-history');
		assert.deepEqual(
			[page.entries.map((e: Json) => e.version), page.truncatedBefore, page.nextBefore],
			[[4, 3], 3, null],
		);
		const gone = await post('e2e-retention-version', { version: 1 });
		assert.match(String(gone.error), /Keep Last N Versions deleted the versions before 3/);
		const versions = path.join(memoryRoot(), `versioned_data/${PRUNE.id}/data-session/versions`);
		assert.deepEqual(readdirSync(versions).sort(), ['0000000003.json', '0000000004.json']);
	});

	it('examples/nightly-retention.json, as shipped: its run prunes and logs what it deleted', async () => {
		await say('s3', 'nightly Nightly-Secret-3307');
		ageSession('s3');
		const raw = await n8n!.cli('execute', `--id=${EXAMPLE_ID}`, '--rawOutput');
		const line =
			/\[llm-memory retention\] \S+ deleted: 1 chat memories, 1 versioned data, 1 capture logs \(2 messages\), 0 files; \d+ objects/;
		// In the run's output (the Code node's item), and on n8n's console: the Code node's console.log
		// and the Manager's own log line.
		const output = JSON.parse(raw.slice(raw.indexOf('\n{') + 1)) as Json;
		const logged = output.data.resultData.runData['Log what was deleted'][0].data.main[0][0].json;
		assert.match(logged.line, line);
		const head = raw.slice(0, raw.indexOf('\n{'));
		assert.match(head, new RegExp(`\\[Node "Log what was deleted"\\] '${line.source}`), head);
		assert.match(
			head,
			/LLM Memory Manager: Prune Expired found 1 chat memories, 1 versioned data and 1 capture logs expired; \d+ objects deleted, 0 kept/,
		);
		assert.deepEqual(filesHolding('Nightly-Secret-3307'), []);
	});
});
