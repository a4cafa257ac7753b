/**
 * The LLM Memory Store sub-node on a real n8n (N8N_VERSION), with n8n's own AI Agent, Calculator tool,
 * Chat Trigger (Load Previous Session = From Memory) and Chat Memory Manager. The package is installed
 * from its npm pack tarball; workflows are imported and published with n8n's CLI; chat turns are POSTed
 * like the chat widget sends them. The only stand-in is the model: n8n's OpenAI Chat Model talks to the
 * local fake OpenAI server, which answers with a tool call when a message carries `[[fake:tool=…]]`, so
 * the agent really runs the Calculator and then answers from its result. Everything is asserted from
 * what the model was sent (the fake server's request log) and from the stored documents.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { MemoryStorage, S3Storage } from '../../src/internal';
import { ConversationMemory, LocalDiskStorage, NodeMemory } from '../../src/internal';
import { SESSION_FROM_CHAT_OR_BODY, WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import { contentText, startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi, LoggedRequest } from '../../demo/model-server';
import { executionData, finishedExecutions, subNodeLog, waitFor } from '../support/n8n-executions';
import { packPackage } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import { ensureRgw, RGW_CREDENTIALS, rgwStorage } from '../support/rgw';
import { openAiCredential, S3_CREDENTIAL, s3Credential } from '../support/workflows';

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;
let s3: S3Storage;

// --- workflows -------------------------------------------------------------------------------------

/** Chat Trigger (reload from memory) → AI Agent with Calculator and a Node-mode store; webhooks → Chat Memory Manager on the same store. */
const TOOLS = {
	id: 'e2eAgentTools001',
	webhookId: 'e2e0c0de-0000-4000-8000-00000000b001',
	store: 'e2e-store-tools',
};
function toolsWorkflow() {
	const w = new WorkflowBuilder(TOOLS.id, 'agent: tools, reload, memory manager');
	const trigger = w.chatTrigger(TOOLS.webhookId, { loadPreviousSession: 'memory' });
	const agent = w.agent('Agent', 'tools agent');
	w.main(trigger, agent);
	w.sub(w.calculator(), 'ai_tool', agent);
	const store = w.store('Memory', TOOLS.store, {
		memoryMode: 'node',
		conversationIdType: 'customKey',
		conversationId: SESSION_FROM_CHAT_OR_BODY,
	});
	const managers = {
		list: { mode: 'load', simplifyOutput: false, options: { groupMessages: true } },
		delete2: { mode: 'delete', deleteMode: 'lastN', lastMessagesCount: 2 },
		insert: {
			mode: 'insert',
			insertMode: 'insert',
			messages: {
				messageValues: [
					{ type: 'user', message: 'inserted question' },
					{ type: 'ai', message: 'inserted answer' },
				],
			},
		},
		clear: { mode: 'delete', deleteMode: 'all' },
	};
	const roots = [agent, trigger];
	for (const [name, parameters] of Object.entries(managers)) {
		const manager = w.memoryManager(`Manager ${name}`, parameters);
		w.main(w.webhook(`Webhook ${name}`, `e2e-store-${name}`), manager);
		roots.push(manager);
	}
	w.sub(store, 'ai_memory', ...roots);
	return w.json();
}

/** Context window of one turn. */
const WINDOW = { id: 'e2eAgentWindow01', webhookId: 'e2e0c0de-0000-4000-8000-00000000b002' };
/** A small token budget. */
const BUDGET = { id: 'e2eAgentBudget01', webhookId: 'e2e0c0de-0000-4000-8000-00000000b003' };
function limitedWorkflow(
	wf: { id: string; webhookId: string },
	tag: string,
	limits: Record<string, number>,
) {
	const w = new WorkflowBuilder(wf.id, `agent: ${tag}`);
	const agent = w.agent('Agent', tag);
	w.main(w.chatTrigger(wf.webhookId), agent);
	w.sub(w.calculator(), 'ai_tool', agent);
	w.sub(
		w.store('Memory', `e2e-store-${tag}`, { memoryMode: 'node', ...limits }),
		'ai_memory',
		agent,
	);
	return w.json();
}

/** Two agents, each with its own Node-mode store. */
const TWO = { id: 'e2eTwoAgents0001', webhookId: 'e2e0c0de-0000-4000-8000-00000000b004' };
function twoAgentsWorkflow() {
	const w = new WorkflowBuilder(TWO.id, 'two agents, node memory');
	const a = w.agent('Agent A', 'agent A');
	const b = w.agent('Agent B', 'agent B', {
		promptType: 'define',
		text: "={{ 'B: ' + $('When chat message received').item.json.chatInput }}",
	});
	w.main(w.chatTrigger(TWO.webhookId), a).main(a, b);
	w.sub(w.store('Memory A', 'e2e-store-a', { memoryMode: 'node' }), 'ai_memory', a);
	w.sub(
		w.store('Memory B', 'e2e-store-b', {
			memoryMode: 'node',
			conversationIdType: 'customKey',
			conversationId: "={{ $('When chat message received').item.json.sessionId }}",
		}),
		'ai_memory',
		b,
	);
	return w.json();
}

/** An agent and an LLM with Memory node in Conversation mode. */
const SHARED = { id: 'e2eAgentAndLlm01', webhookId: 'e2e0c0de-0000-4000-8000-00000000b005' };
function sharedWorkflow() {
	const w = new WorkflowBuilder(SHARED.id, 'agent and LLM with Memory share a conversation');
	const agent = w.agent('Agent', 'shared agent');
	const llmNode = w.llmWithMemory('LLM', 'e2e-shared-llm', {
		memoryMode: 'conversation',
		systemMessage: 'shared llm',
		promptType: 'define',
		text: "={{ 'B: ' + $('When chat message received').item.json.chatInput }}",
		conversationIdType: 'customKey',
		conversationId: "={{ $('When chat message received').item.json.sessionId }}",
	});
	w.main(w.chatTrigger(SHARED.webhookId), agent).main(agent, llmNode);
	w.sub(w.calculator(), 'ai_tool', agent);
	w.sub(w.store('Memory', 'e2e-store-shared', { memoryMode: 'conversation' }), 'ai_memory', agent);
	return w.json();
}

/** The AI Agent 2.2 (Tools Agent V2: LangChain's AgentExecutor calls loadMemoryVariables and saveContext). */
const V2 = { id: 'e2eAgentV2000001', webhookId: 'e2e0c0de-0000-4000-8000-00000000b007' };
function v2Workflow() {
	const w = new WorkflowBuilder(V2.id, 'agent 2.2 with the store');
	const agent = w.agent('Agent', 'agent v2', {}, 2.2);
	w.main(w.chatTrigger(V2.webhookId), agent);
	w.sub(w.calculator(), 'ai_tool', agent);
	w.sub(w.store('Memory', 'e2e-store-v2', { memoryMode: 'node' }), 'ai_memory', agent);
	return w.json();
}

/** The agent test on S3 (radosgw). */
const ON_S3 = {
	id: 'e2eAgentOnS30001',
	webhookId: 'e2e0c0de-0000-4000-8000-00000000b006',
	store: 'e2e-store-s3',
};
function s3Workflow() {
	const w = new WorkflowBuilder(ON_S3.id, 'agent memory on S3');
	const agent = w.agent('Agent', 'agent on s3');
	w.main(w.chatTrigger(ON_S3.webhookId), agent);
	w.sub(w.calculator(), 'ai_tool', agent);
	w.sub(
		w.store(
			'Memory',
			ON_S3.store,
			{ memoryMode: 'node', storage: 's3' },
			{ llmMemoryS3Api: S3_CREDENTIAL },
		),
		'ai_memory',
		agent,
	);
	return w.json();
}

// --- helpers ---------------------------------------------------------------------------------------

/**
 * A message the model was sent, compactly: "user: …", "assistant: …", "assistant calls Calculator
 * {"input":"6*7"} [#1]", "tool [#1]: 42". Tool-call IDs become #1, #2 … in order of appearance, so a
 * call and its result can be compared without knowing the fake server's IDs.
 */
function render(messages: Array<Record<string, any>>): string[] {
	const ids = new Map<string, string>();
	const ref = (id: string) => {
		if (!ids.has(id)) ids.set(id, `#${ids.size + 1}`);
		return ids.get(id);
	};
	return messages.map((m) => {
		if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length)
			return m.tool_calls
				.map(
					(c: any) => `assistant calls ${c.function.name} ${c.function.arguments} [${ref(c.id)}]`,
				)
				.join(' + ');
		if (m.role === 'tool') return `tool [${ref(m.tool_call_id)}]: ${contentText(m.content)}`;
		return `${m.role}: ${contentText(m.content)}`;
	});
}

/** The model calls whose system message is `tag`, each rendered without the system message. */
function callsOf(tag: string, requests: LoggedRequest[] = llm!.completions()): string[][] {
	return requests
		.filter((r) => r.body?.messages?.[0]?.content === tag)
		.map((r) => render(r.body.messages.slice(1)));
}

/** History part of a call: the messages before its last user message. */
function historyOf(call: string[]): string[] {
	let last = call.length - 1;
	while (last >= 0 && !call[last].startsWith('user: ')) last--;
	return call.slice(0, Math.max(last, 0));
}

/** History must start with a user message, and every tool call must be followed by its results. */
function assertWholeTurns(history: string[], label: string) {
	if (history.length === 0) return;
	assert.match(
		history[0],
		/^user: /,
		`${label}: history starts with a user message: ${JSON.stringify(history)}`,
	);
	for (let i = 0; i < history.length; i++) {
		const calls = [...history[i].matchAll(/\[(#\d+)\]/g)].map((m) => m[1]);
		if (!history[i].startsWith('assistant calls')) continue;
		const results = history
			.slice(i + 1, i + 1 + calls.length)
			.map((h) => /^tool \[(#\d+)\]/.exec(h)?.[1]);
		assert.deepEqual(
			results,
			calls,
			`${label}: call at ${i} is followed by its results: ${JSON.stringify(history)}`,
		);
	}
}

const chat = (wf: { webhookId: string }, sessionId: string | undefined, chatInput: string) =>
	sendChat(n8n!.chatUrl(wf.webhookId), { sessionId: sessionId as string, chatInput });

async function turn(wf: { webhookId: string }, sessionId: string, chatInput: string) {
	const r = await chat(wf, sessionId, chatInput);
	assert.equal(r.status, 200, r.body);
	return r;
}

async function manage(action: string, sessionId: string): Promise<any> {
	const res = await fetch(`${n8n!.baseUrl}/webhook/e2e-store-${action}`, {
		method: 'POST',
		headers: { 'Content-Type': 'application/json' },
		body: JSON.stringify({ sessionId }),
	});
	const body = await res.text();
	assert.equal(res.status, 200, body);
	return JSON.parse(body);
}

/** Messages the Chat Memory Manager lists, as "HumanMessage: text" (tool calls as "AIMessage → Calculator"). */
async function listed(sessionId: string): Promise<string[]> {
	const out = await manage('list', sessionId);
	assert.equal(out.messagesCount, out.messages.length);
	return out.messages.map((m: any) => {
		const kind = m.id.at(-1);
		const calls = m.kwargs.tool_calls?.map((c: any) => c.name) ?? [];
		return calls.length ? `${kind} → ${calls.join(',')}` : `${kind}: ${m.kwargs.content}`;
	});
}

/** Where the nodes keep memory on Local Disk: this file's folder on the shared n8n (n8n.memoryRoot). */
const disk = () => new LocalDiskStorage({ root: n8n!.memoryRoot });

/** What a store in Node mode has stored, read through the engine (whatever the document format). */
async function storedMessages(
	wfId: string,
	session: string,
	storeId: string,
	storage: MemoryStorage = disk(),
	keyPrefix?: string,
) {
	const messages = await new NodeMemory(wfId, session, storeId, { storage, keyPrefix }).messages();
	assert.ok(messages.length > 0, `nothing stored for ${wfId}/${session}/${storeId}`);
	return messages;
}

const REPLY = (text: string, seen: string) => `FAKE-LLM reply to "${text}" (saw ${seen})`;
const TOOL_Q = 'what is 6 times 7? [[fake:tool=Calculator:6*7]]';
/** What n8n's agent hands the model as the Calculator's result (the tool node's output items as JSON). */
const TOOL_RESULT = '[{"response":"42"}]';
const TOOL_ANSWER = `FAKE-LLM reply to "${TOOL_Q}" with tool results [${TOOL_RESULT}] (saw 4 messages: system,user,assistant,tool)`;
/** Turn 1 of a session that used the Calculator, as the model sees it in later turns. */
const TOOL_TURN = [
	`user: ${TOOL_Q}`,
	'assistant calls Calculator {"input":"6*7"} [#1]',
	`tool [#1]: ${TOOL_RESULT}`,
	`assistant: ${TOOL_ANSWER}`,
];

// --- tests -----------------------------------------------------------------------------------------

describe('LLM Memory Store with n8n’s AI Agent on a real n8n', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 }); // first, so after() closes it even when packing fails
		const fake = llm;
		const [tarball, storage] = await Promise.all([packPackage(), rgwStorage()]);
		s3 = storage;
		n8n = await joinSharedN8n({
			tarball,
			credentials: [
				openAiCredential(fake.url),
				s3Credential(s3.endpoint!, s3.bucket, RGW_CREDENTIALS),
			],
			workflows: [
				toolsWorkflow(),
				limitedWorkflow(WINDOW, 'window one turn', { contextWindowLength: 1 }),
				limitedWorkflow(BUDGET, 'small budget', { maxHistoryTokens: 200 }),
				twoAgentsWorkflow(),
				sharedWorkflow(),
				s3Workflow(),
				v2Workflow(),
			],
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
		(await ensureRgw()).stop();
	});

	it('a tool turn: the agent runs the Calculator, and turn 2 receives human, tool call, tool result and answer in order', async () => {
		const t1 = await turn(TOOLS, 'tools-1', TOOL_Q);
		const t2 = await turn(TOOLS, 'tools-1', 'thanks');
		assert.equal(t1.shown, TOOL_ANSWER);
		assert.equal(
			t2.shown,
			REPLY('thanks', '6 messages: system,user,assistant,tool,assistant,user'),
		);
		const calls = callsOf('tools agent');
		assert.deepEqual(calls.at(-1), [...TOOL_TURN, 'user: thanks']);
		// Within turn 1, the model got the Calculator's real result (the fake server only asked for the call).
		assert.equal(calls.at(-2)!.at(-1), `tool [#1]: ${TOOL_RESULT}`);
	});

	it('memory holds the tool turn as user, assistant with tool_calls, tool, assistant', async () => {
		const messages = await storedMessages(TOOLS.id, 'tools-1', TOOLS.store);
		assert.ok(
			existsSync(path.join(n8n!.memoryRoot, 'node_memory', TOOLS.id, 'tools-1')),
			'on local disk, in the memory folder',
		);
		assert.deepEqual(
			messages.map((m) => [
				m.role,
				m.tool_calls ? '(tool call)' : m.content,
				m.tool_calls?.map((c) => `${c.name}(${JSON.stringify(c.args)})`) ?? null,
				m.name ?? null,
			]),
			[
				['user', TOOL_Q, null, null],
				['assistant', '(tool call)', ['Calculator({"input":"6*7"})'], null],
				['tool', TOOL_RESULT, null, 'Calculator'],
				['assistant', TOOL_ANSWER, null, null],
				['user', 'thanks', null, null],
				[
					'assistant',
					REPLY('thanks', '6 messages: system,user,assistant,tool,assistant,user'),
					null,
					null,
				],
			],
		);
		assert.equal(messages[2].tool_call_id, messages[1].tool_calls![0].id);
		// Threads as in LLM with Memory: each message's parent is the one before it.
		for (let i = 1; i < messages.length; i++)
			assert.equal(messages[i].parent_message_id, messages[i - 1].message_id);
	});

	it('the store logs what it loaded and saved on its input and output panes, as n8n’s memory nodes do', async () => {
		const first = await waitFor(() => finishedExecutions(n8n!, TOOLS.id)[0]);
		assert.equal(first.success, true);
		const data = await waitFor(async () => await executionData(n8n!, first.executionId));
		const log = subNodeLog(data, 'Memory', 'ai_memory');
		const loads = log.filter((l) => l.input?.action === 'loadMemoryVariables');
		assert.ok(loads.length >= 1, JSON.stringify(log));
		assert.deepEqual(loads[0].output?.chatHistory, [], 'turn 1 starts with an empty history');
		assert.equal(loads[0].input?.key, `node_memory/${TOOLS.id}/tools-1/${TOOLS.store}.json`);
		const saves = log.filter((l) => l.input?.action === 'addMessages');
		assert.equal(saves.length, 1, JSON.stringify(log));
		assert.deepEqual(
			saves[0].input?.messages.map((m: any) => m.role),
			['user', 'assistant', 'tool', 'assistant'],
		);
		assert.equal(saves[0].output?.storedTurns.length, 1);
		// Turn 2 loaded turn 1 (serialized as LangChain messages, which the editor renders as a chat).
		const second = await waitFor(() => finishedExecutions(n8n!, TOOLS.id)[1]);
		const log2 = subNodeLog(
			(await waitFor(async () => await executionData(n8n!, second.executionId)))!,
			'Memory',
			'ai_memory',
		);
		const loaded = log2.find((l) => l.input?.action === 'loadMemoryVariables')?.output;
		assert.deepEqual(
			loaded?.chatHistory.map((m: any) => m.id.at(-1)),
			['HumanMessage', 'AIMessage', 'ToolMessage', 'AIMessage'],
		);
		assert.equal(loaded?.turns, 1);
		assert.equal(log2.find((l) => l.input?.action === 'saveContext')?.input?.input.input, 'thanks');
	});

	it('Load Previous Session returns the earlier turns in the widget’s shape, without tool messages', async () => {
		const r = await sendChat(n8n!.chatUrl(TOOLS.webhookId), {
			action: 'loadPreviousSession',
			sessionId: 'tools-1',
		});
		assert.equal(r.status, 200, r.body);
		const data = r.json.data as any[];
		// What @n8n/chat renders: id naming the class (HumanMessage = user, anything else = bot), kwargs.content.
		assert.deepEqual(
			data.map((m) => [m.lc, m.type, m.id.join('.'), m.kwargs.content]),
			[
				[1, 'constructor', 'langchain_core.messages.HumanMessage', TOOL_Q],
				[1, 'constructor', 'langchain_core.messages.AIMessage', TOOL_ANSWER],
				[1, 'constructor', 'langchain_core.messages.HumanMessage', 'thanks'],
				[
					1,
					'constructor',
					'langchain_core.messages.AIMessage',
					REPLY('thanks', '6 messages: system,user,assistant,tool,assistant,user'),
				],
			],
		);
		const other = await sendChat(n8n!.chatUrl(TOOLS.webhookId), {
			action: 'loadPreviousSession',
			sessionId: 'never-used',
		});
		assert.deepEqual(other.json, { data: [] });
	});

	it('n8n’s Chat Memory Manager lists, deletes and inserts messages of the store', async () => {
		const answer2 = REPLY('thanks', '6 messages: system,user,assistant,tool,assistant,user');
		assert.deepEqual(await listed('tools-1'), [
			`HumanMessage: ${TOOL_Q}`,
			'AIMessage → Calculator',
			`ToolMessage: ${TOOL_RESULT}`,
			`AIMessage: ${TOOL_ANSWER}`,
			'HumanMessage: thanks',
			`AIMessage: ${answer2}`,
		]);
		// Delete the last 2 messages (turn 2): the manager clears and re-adds the rest, tool turn included.
		assert.deepEqual(await manage('delete2', 'tools-1'), { success: true });
		assert.deepEqual(await listed('tools-1'), [
			`HumanMessage: ${TOOL_Q}`,
			'AIMessage → Calculator',
			`ToolMessage: ${TOOL_RESULT}`,
			`AIMessage: ${TOOL_ANSWER}`,
		]);
		await turn(TOOLS, 'tools-1', 'after the delete');
		assert.deepEqual(callsOf('tools agent').at(-1), [...TOOL_TURN, 'user: after the delete']);
		// Insert a question and its answer: stored as one turn, which the agent then receives.
		assert.deepEqual(await manage('insert', 'tools-1'), { success: true });
		const afterInsert = await listed('tools-1');
		assert.deepEqual(afterInsert.slice(-2), [
			'HumanMessage: inserted question',
			'AIMessage: inserted answer',
		]);
		assert.equal(afterInsert.length, 8);
		await turn(TOOLS, 'tools-1', 'and now?');
		assert.deepEqual(callsOf('tools agent').at(-1)!.slice(-3), [
			'user: inserted question',
			'assistant: inserted answer',
			'user: and now?',
		]);
		// Delete everything: nothing listed, nothing reloaded, the next turn starts fresh.
		assert.deepEqual(await manage('clear', 'tools-1'), { success: true });
		assert.deepEqual(await listed('tools-1'), []);
		const reload = await sendChat(n8n!.chatUrl(TOOLS.webhookId), {
			action: 'loadPreviousSession',
			sessionId: 'tools-1',
		});
		assert.deepEqual(reload.json, { data: [] });
		await turn(TOOLS, 'tools-1', 'fresh');
		assert.deepEqual(callsOf('tools agent').at(-1), ['user: fresh']);
	});

	it('a one-turn window keeps the whole tool turn, and never starts with a tool message', async () => {
		await turn(WINDOW, 'w-1', TOOL_Q);
		await turn(WINDOW, 'w-1', 'second');
		await turn(WINDOW, 'w-1', 'third');
		const firstCalls = callsOf('window one turn').filter((c) => !c.at(-1)!.startsWith('tool'));
		const [c1, c2, c3] = firstCalls.map(historyOf);
		assert.deepEqual(c1, []);
		assert.deepEqual(c2, TOOL_TURN, 'the window of one turn is the whole tool turn (4 messages)');
		assert.deepEqual(c3, [
			'user: second',
			`assistant: ${REPLY('second', '6 messages: system,user,assistant,tool,assistant,user')}`,
		]);
	});

	it('a token budget drops whole turns: history never begins with a tool message or an orphaned tool call', async () => {
		for (let i = 1; i <= 6; i++)
			await turn(BUDGET, 'b-1', i % 2 ? `question ${i}: ${TOOL_Q}` : `plain question ${i}`);
		const calls = callsOf('small budget');
		assert.ok(calls.length >= 9, 'tool turns make two model calls each');
		const histories = calls.map(historyOf);
		histories.forEach((h, i) => assertWholeTurns(h, `call ${i}`));
		const turnsIn = (h: string[]) => h.filter((m) => m.startsWith('user: ')).length;
		const shown = JSON.stringify(histories, null, 1);
		assert.ok(
			histories.some((h) => h[1]?.startsWith('assistant calls')),
			`a kept tool turn comes whole, starting with its user message: ${shown}`,
		);
		assert.ok(
			histories.every((h) => turnsIn(h) <= 3),
			`200 tokens hold at most a few turns, so older ones were dropped: ${shown}`,
		);
		assert.ok(
			histories.slice(-2).every((h) => turnsIn(h) >= 1),
			`the newest turns still fit: ${shown}`,
		);
	});

	it('two agents with Node-mode stores never see each other’s turns', async () => {
		await turn(TWO, 'two-1', 'pick a colour');
		await turn(TWO, 'two-1', 'another one');
		assert.deepEqual(callsOf('agent A').at(-1), [
			'user: pick a colour',
			`assistant: ${REPLY('pick a colour', '2 messages: system,user')}`,
			'user: another one',
		]);
		assert.deepEqual(callsOf('agent B').at(-1), [
			'user: B: pick a colour',
			`assistant: ${REPLY('B: pick a colour', '2 messages: system,user')}`,
			'user: B: another one',
		]);
	});

	it('an agent and an LLM with Memory node in Conversation mode share one history, tool turns included', async () => {
		await turn(SHARED, 'shared-1', TOOL_Q);
		const llmSaw = callsOf('shared llm').at(-1);
		assert.deepEqual(
			llmSaw,
			[...TOOL_TURN, `user: B: ${TOOL_Q}`],
			'LLM with Memory replays the agent’s tool turn',
		);
		await turn(SHARED, 'shared-1', 'again');
		assert.deepEqual(callsOf('shared agent').at(-1), [
			...TOOL_TURN,
			`user: B: ${TOOL_Q}`,
			`assistant: ${REPLY(`B: ${TOOL_Q}`, '6 messages: system,user,assistant,tool,assistant,user')}`,
			'user: again',
		]);
		const conversation = await new ConversationMemory(SHARED.id, 'shared-1', {
			storage: disk(),
		}).messages();
		assert.deepEqual(
			conversation.filter((m) => m.role === 'user').map((m) => m.content),
			[TOOL_Q, `B: ${TOOL_Q}`, 'again', 'B: again'],
			'one conversation document holds both nodes’ turns',
		);
	});

	it('node mode without a session ID fails with n8n’s familiar error before any model call', async () => {
		const before = llm!.completions().length;
		const r = await chat(TWO, undefined, 'who am I?');
		assert.equal(r.status, 500, r.body);
		assert.equal(llm!.completions().length, before, 'the model was never called');
		const failed = await waitFor(() =>
			n8n!
				.events()
				.find((e) => e.eventName === 'n8n.workflow.failed' && e.payload?.workflowId === TWO.id),
		);
		assert.equal(failed.payload.lastNodeExecuted, 'Agent A');
		assert.equal(
			failed.payload.errorMessage,
			'Error in sub-node Memory A',
			JSON.stringify(failed.payload),
		);
		assert.equal(failed.payload.errorNodeType, 'n8n-nodes-llm-memory.llmMemoryStore');
		// n8n shows our message as the error's description, as for its own memory nodes.
		const saved = JSON.stringify(
			await waitFor(async () => await executionData(n8n!, String(failed.payload.executionId))),
		);
		assert.match(saved, /No session ID found/);
		assert.match(saved, /Expected to find the session ID in an input field called 'sessionId'/);
	});

	// Issue 7 #0 for the store: n8n hands the Chat Trigger's sessionId through unvalidated, so an
	// object must fail by name before any model call instead of collapsing into "[object Object]".
	it('a session ID that is an object fails by name before any model call, and stores nothing', async () => {
		const before = llm!.completions().length;
		const seenBefore = n8n!
			.events()
			.filter(
				(e) => e.eventName === 'n8n.workflow.failed' && e.payload?.workflowId === TWO.id,
			).length;
		for (const user of ['alice', 'bob']) {
			const r = await chat(TWO, { user } as unknown as string, `my name is ${user}`);
			assert.equal(r.status, 500, r.body);
		}
		assert.equal(llm!.completions().length, before, 'the model was never called');
		const failed = await waitFor(() => {
			const f = n8n!
				.events()
				.filter((e) => e.eventName === 'n8n.workflow.failed' && e.payload?.workflowId === TWO.id);
			return f.length >= seenBefore + 2 ? f.slice(seenBefore) : undefined;
		});
		for (const f of failed) {
			assert.equal(f.payload.errorNodeType, 'n8n-nodes-llm-memory.llmMemoryStore');
			const saved = JSON.stringify(
				await waitFor(async () => await executionData(n8n!, String(f.payload.executionId))),
			);
			assert.match(saved, /Session ID must be a string or a number, got an object/);
		}
		const sessions = path.join(n8n!.memoryRoot, 'node_memory', TWO.id);
		assert.equal(existsSync(path.join(sessions, '[object Object]')), false);
	});

	it('AI Agent 2.2 (LangChain’s AgentExecutor): loads and saves through loadMemoryVariables and saveContext', async () => {
		const t1 = await turn(V2, 'v2-1', TOOL_Q);
		assert.match(t1.shown ?? '', /with tool results \[42\]/, 'the Calculator ran');
		await turn(V2, 'v2-1', 'thanks');
		// Version 2 saves a tool turn as its input and final answer (saveContext): that is what it replays.
		assert.deepEqual(callsOf('agent v2').at(-1), [
			`user: ${TOOL_Q}`,
			`assistant: ${t1.shown}`,
			'user: thanks',
		]);
	});

	it('S3 (radosgw): the agent’s tool turn is stored on S3 and replayed in turn 2', async () => {
		await turn(ON_S3, 's3-1', TOOL_Q);
		await turn(ON_S3, 's3-1', 'thanks');
		assert.deepEqual(callsOf('agent on s3').at(-1), [...TOOL_TURN, 'user: thanks']);
		const keys = (await s3.list('')).map((o) => o.key);
		assert.ok(
			keys.length > 0 && keys.every((k) => k.startsWith(`n8n/node_memory/${ON_S3.id}/s3-1/`)),
			JSON.stringify(keys),
		);
		const messages = await storedMessages(ON_S3.id, 's3-1', ON_S3.store, s3, 'n8n');
		assert.deepEqual(
			messages.map((m) => m.role),
			['user', 'assistant', 'tool', 'assistant', 'user', 'assistant'],
		);
		assert.equal(existsSync(path.join(n8n!.memoryRoot, 'node_memory', ON_S3.id)), false);
	});

	it('the n8n log shows no unknown node types and no leaked secret', () => {
		const log = n8n!.log();
		assert.doesNotMatch(log, /Unrecognized node type/);
		assert.ok(!log.includes(RGW_CREDENTIALS.secretAccessKey));
	});
});
