/**
 * A newcomer's first day with long-term memory on a real n8n (N8N_VERSION), the package installed from
 * its tarball, nothing failing silently: an empty User ID with Recall Scope *This User* says so in the
 * output (and *When User ID Is Empty = Fail* stops before the model is called); a Memory Base that does
 * not exist is an error naming the bases; every call of the LLM Memory Store in a turn shows the turn's
 * recall; List Captured Messages across all conversations works; Forget User names every object it
 * deleted or rewrote, checked against the storage before and after. The fake OpenAI-compatible server
 * (demo/model-server.ts) is the only stand-in: it answers every request and logs it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { contentText, startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi } from '../../demo/model-server';
import { CHAT_TRIGGER_NAME, WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import {
	executionData,
	failedSince,
	failureCount,
	finishedExecutions,
	subNodeLog,
	waitFor,
} from '../support/n8n-executions';
import { packPackage } from '../support/n8n-harness';
import type { N8nInstance } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import { openAiCredential } from '../support/workflows';
import { expanded } from '../support/stored-segments';

type Json = Record<string, any>;

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;

const USER = `={{ ($('${CHAT_TRIGGER_NAME}').item.json.metadata || {}).userId }}`;
const MB_TYPE = 'n8n-nodes-llm-memory.memoryBase';

const CHAT = { id: 'e2eFirstDayLlm01', webhookId: 'e2e0c0de-0000-4000-8000-00000000fd01' };
const FAIL = { id: 'e2eFirstDayFail1', webhookId: 'e2e0c0de-0000-4000-8000-00000000fd02' };
const AGENT = { id: 'e2eFirstDayAgnt1', webhookId: 'e2e0c0de-0000-4000-8000-00000000fd03' };
const ADMIN = { id: 'e2eFirstDayAdmin' };
// One word, kept whole by the word index, that no ID, number or timestamp can hold by chance (a code of
// four digits can turn up inside a stored ID or millisecond time).
const ANA_CODE = 'quokka9002';

/** Chat Trigger → LLM with Memory, Long-Term Memory on, the user from the chat's metadata. */
function chatWorkflow(wf: { id: string; webhookId: string }, extra: Json = {}): Json {
	const w = new WorkflowBuilder(wf.id, `first day: ${wf.id}`);
	const node = w.llmWithMemory('LLM', `${wf.id}-llm`, {
		systemMessage: 'You are the first-day bot',
		longTermMemory: true,
		longTermUserId: USER,
		...extra,
	});
	w.main(w.chatTrigger(wf.webhookId), node);
	return w.json();
}

/** Chat Trigger → AI Agent 3.1 with an LLM Memory Store with Long-Term Memory. */
function agentWorkflow(): Json {
	const w = new WorkflowBuilder(AGENT.id, 'first day: agent');
	const agent = w.agent('Agent', 'You are the first-day agent');
	w.main(w.chatTrigger(AGENT.webhookId), agent);
	w.sub(
		w.store('Memory', `${AGENT.id}-store`, { longTermMemory: true, longTermUserId: USER }),
		'ai_memory',
		agent,
	);
	return w.json();
}

/** Webhooks: Search on a base given in the body, List Captured Messages of every conversation, Forget User. */
function adminWorkflow(): Json {
	const w = new WorkflowBuilder(ADMIN.id, 'first day: admin');
	const search = w.add({
		name: 'Search',
		type: MB_TYPE,
		typeVersion: 1,
		parameters: {
			operation: 'search',
			baseId: '={{ $json.body.baseId }}',
			query: '={{ $json.body.query }}',
			sessionScope: 'all',
		},
	});
	w.main(w.webhook('Search Webhook', 'e2e-first-day-search'), search);
	const list = w.add({
		name: 'List',
		type: MB_TYPE,
		typeVersion: 1,
		parameters: {
			operation: 'listMessages',
			baseId: CHAT.id,
			sessionScope: 'all',
			returnAll: true,
		},
	});
	w.main(w.webhookAll('List Webhook', 'e2e-first-day-list'), list);
	const forget = w.llmMemoryManager('Forget', {
		resource: 'conversationMemory',
		operation: 'forgetUser',
		forgetBy: 'user',
		forgetUserId: '={{ $json.body.userId }}',
	});
	w.main(w.webhook('Forget Webhook', 'e2e-first-day-forget'), forget);
	return w.json();
}

async function post(webhook: string, body: Json): Promise<{ status: number; json: any }> {
	const res = await fetch(`${n8n!.baseUrl}/webhook/${webhook}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	const text = await res.text();
	let json: any;
	try {
		json = JSON.parse(text);
	} catch {
		json = text;
	}
	return { status: res.status, json };
}

const chat = (wf: { webhookId: string }, sessionId: string, chatInput: string, userId?: string) =>
	sendChat(n8n!.chatUrl(wf.webhookId), {
		sessionId,
		chatInput,
		...(userId ? { metadata: { userId } } : {}),
	});

const asked = (text: string) =>
	llm!
		.requests()
		.filter((r) => r.path === '/v1/chat/completions')
		.some((r) => (r.body.messages as Json[]).some((m) => contentText(m.content).includes(text)));

/** The stored objects (expanded) that hold ana's locker code. */
const holding = (root: string, keys: Iterable<string>) =>
	[...keys].filter((k) => expanded(readFileSync(path.join(root, k))).includes(ANA_CODE));

/** Every stored object under the memory folder, with a digest of its bytes (lock files left out). */
function snapshot(root: string): Map<string, string> {
	const out = new Map<string, string>();
	if (!existsSync(root)) return out;
	for (const f of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
		const p = path.join(root, f);
		if (!statSync(p).isFile() || /\.lock$|\.tmp-/.test(f)) continue;
		out.set(
			f.split(path.sep).join('/'),
			createHash('sha256').update(readFileSync(p)).digest('hex'),
		);
	}
	return out;
}

describe('The first day with long-term memory on a real n8n', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 });
		n8n = await joinSharedN8n({
			tarball: await packPackage(),
			credentials: [openAiCredential(llm.url)],
			workflows: [
				chatWorkflow(CHAT),
				chatWorkflow(FAIL, { longTermEmptyUserId: 'fail' }),
				agentWorkflow(),
				adminWorkflow(),
			],
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
	});

	it('This User with an empty User ID: the turn answers, and the output says recall covered this conversation only', async () => {
		const r = await chat(CHAT, 'fd-1', 'My locker code is 4471');
		assert.equal(r.status, 200, r.body);
		const lt = r.json.memory.longTermMemory;
		assert.equal(lt.scope, 'conversation');
		assert.match(lt.warning, /User ID is empty/);
		const named = await chat(CHAT, 'fd-2', `My locker code is ${ANA_CODE}`, 'ana');
		assert.equal(named.json.memory.longTermMemory.warning, undefined, 'a User ID: no warning');
	});

	it('When User ID Is Empty = Fail stops before the model is called', async () => {
		const since = failureCount(n8n!, FAIL.id);
		const r = await chat(FAIL, 'fd-3', 'remember the code word albatross');
		assert.notEqual(r.status, 200);
		const failed = await failedSince(n8n!, FAIL.id, since);
		assert.match(String(failed.errorMessage), /The User ID is empty/);
		assert.equal(asked('albatross'), false, 'the model was never called');
	});

	it('a Memory Base that does not exist is an error naming the bases of the storage', async () => {
		const since = failureCount(n8n!, ADMIN.id);
		const r = await post('e2e-first-day-search', { baseId: 'no-such-base', query: 'locker' });
		assert.notEqual(r.status, 200);
		const text = String((await failedSince(n8n!, ADMIN.id, since)).errorMessage);
		assert.match(text, /^No Memory Base named "no-such-base" \(bases in this storage: /);
		assert.ok(text.includes(`"${CHAT.id}"`), `the base that exists is named: ${text}`);
		const found = await post('e2e-first-day-search', { baseId: CHAT.id, query: 'locker code' });
		assert.equal(found.status, 200, JSON.stringify(found.json));
	});

	it('every call of the LLM Memory Store in a turn shows the turn’s recall', async () => {
		await chat(AGENT, 'fd-a1', 'My cat is called Miso', 'bea');
		const r = await chat(AGENT, 'fd-a2', 'What is my cat called? Miso?', 'bea');
		assert.equal(r.status, 200, r.body);
		const second = await waitFor(() => finishedExecutions(n8n!, AGENT.id)[1]);
		const data = await waitFor(async () => await executionData(n8n!, second.executionId));
		const calls = subNodeLog(data!, 'Memory', 'ai_memory');
		assert.ok(calls.length >= 2, JSON.stringify(calls));
		for (const c of calls) {
			const lt = c.output?.longTermMemory;
			assert.ok(lt, `${c.output?.action}: ${JSON.stringify(c.output)}`);
			assert.ok(lt.recalled >= 1 && /Miso/.test(JSON.stringify(lt.entries)), JSON.stringify(lt));
		}
	});

	it('List Captured Messages across all conversations', async () => {
		const r = await post('e2e-first-day-list', {});
		assert.equal(r.status, 200, JSON.stringify(r.json));
		const items = Array.isArray(r.json) ? r.json : [r.json];
		const sessions = new Set(items.map((m: Json) => m.session_id));
		assert.ok(sessions.has('fd-1') && sessions.has('fd-2'), JSON.stringify([...sessions]));
		// Return All: every message of every conversation, each once and none skipped (seq 1, 2, … in
		// each); not counted ahead (total null), and no page after it.
		const seqs = new Map<string, number[]>();
		for (const m of items) seqs.set(m.session_id, [...(seqs.get(m.session_id) ?? []), m.seq]);
		for (const [s, list] of seqs)
			assert.deepEqual(
				list,
				list.map((_, i) => i + 1),
				s,
			);
		assert.ok(
			items.every((m: Json) => m.total === null && m.nextOffset === null),
			JSON.stringify(items[0]),
		);
	});

	it('Forget User names every object it deleted or rewrote, checked against the storage', async () => {
		const root = n8n!.memoryRoot;
		const before = snapshot(root);
		assert.ok(holding(root, before.keys()).length > 0, 'what the user said was stored');
		const r = await post('e2e-first-day-forget', { userId: 'ana' });
		assert.equal(r.status, 200, JSON.stringify(r.json));
		const report = Array.isArray(r.json) ? r.json[0] : r.json;
		const after = snapshot(root);
		const removed = [...before.keys()].filter((k) => !after.has(k)).sort();
		const changed = [...after.keys()].filter((k) => before.get(k) !== after.get(k)).sort();
		assert.deepEqual(report.conversationIds, ['fd-2']);
		assert.deepEqual([...new Set(report.deleted as string[])].sort(), removed);
		assert.deepEqual([...(report.rewritten as string[])].sort(), changed);
		assert.ok(removed.length > 0 && changed.length > 0, JSON.stringify(report));
		assert.deepEqual(holding(root, after.keys()), [], 'no stored object holds what the user said');
	});
});
