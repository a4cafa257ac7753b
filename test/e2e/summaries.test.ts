/**
 * Summarize Older Turns on a real n8n (N8N_VERSION; scripts/test.sh runs 2.8.4 and 2.40.7), the package
 * installed from its tarball: 500 chat turns with a budget of 1,000 tokens and facts at turns 3, 50 and
 * 300, through LLM with Memory (its own model summarizes) and through n8n's AI Agent with an LLM Memory
 * Store whose Summary Model input has a model. Asserted from what the model was sent: the fake OpenAI
 * server (the only stand-in) logs every request, answers a chat with a short fixed reply, and a summary
 * request with an extractive summary (the user's sentences with a number or a name).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { contentText, startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi, LoggedRequest } from '../../demo/model-server';
import { isSummaryRequest } from '../../demo/summaries';
import { LocalDiskStorage, readMessages } from '../../src/internal';
import { CHAT_TRIGGER_NAME, WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import { packPackage } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import { openAiCredential } from '../support/workflows';
import { userText } from '../support/summary-script';

type Json = Record<string, any>;

const TURNS = 500;
const BUDGET = 1000;
const REPLY = 'Sure, happy to chat.';
const PARENT = `={{ ($('${CHAT_TRIGGER_NAME}').item.json.metadata || {}).parent || '' }}`;

const LLM = { id: 'e2eSummaryLlm001', webhookId: 'e2e0c0de-0000-4000-8000-0000000sm001' };
function llmWorkflow(): Json {
	const w = new WorkflowBuilder(LLM.id, 'summaries: LLM with Memory');
	const node = w.llmWithMemory('LLM', 'summary-llm', {
		systemMessage: 'You are the summary test bot',
		options: { maxHistoryTokens: BUDGET, historyOverflow: 'summarize', parentMessageId: PARENT },
	});
	w.main(w.chatTrigger(LLM.webhookId), node);
	return w.json();
}

const AGENT = { id: 'e2eSummaryAgent1', webhookId: 'e2e0c0de-0000-4000-8000-0000000sm002' };
function agentWorkflow(): Json {
	const w = new WorkflowBuilder(AGENT.id, 'summaries: AI Agent with the LLM Memory Store');
	const agent = w.agent('Agent', 'You are the summary agent');
	w.main(w.chatTrigger(AGENT.webhookId), agent);
	const store = w.store('Memory', `${AGENT.id}-store`, {
		maxHistoryTokens: BUDGET,
		historyOverflow: 'summarize',
	});
	w.sub(store, 'ai_memory', agent);
	w.sub(w.model('Summary Model'), 'ai_languageModel', store);
	return w.json();
}

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;

const completions = () => llm!.completions() as LoggedRequest[];
const messagesOf = (r: LoggedRequest) => r.body.messages as Json[];
const isSummary = (r: LoggedRequest) => isSummaryRequest(messagesOf(r) as never);
const textOf = (r: LoggedRequest) =>
	messagesOf(r)
		.map((m) => contentText(m.content))
		.join('\n');

async function turn(wf: { webhookId: string }, sessionId: string, text: string, parent?: string) {
	const r = await sendChat(n8n!.chatUrl(wf.webhookId), {
		sessionId,
		chatInput: text,
		...(parent ? { metadata: { parent } } : {}),
	});
	assert.equal(r.status, 200, r.body);
	return r.json as Json;
}

/** `turns` chat turns; what each reply said, and the summary requests they caused. */
async function converse(wf: { webhookId: string }, sessionId: string, turns: number) {
	const replies: Json[] = [];
	const before = completions().filter(isSummary).length;
	for (let t = 1; t <= turns; t++) replies.push(await turn(wf, sessionId, userText(t)));
	return { replies, summaryCalls: completions().filter(isSummary).length - before };
}

const storedMessages = async (appId: string, conversationId: string) => {
	const storage = new LocalDiskStorage({ root: n8n!.memoryRoot });
	return (await readMessages(storage, { appId, conversationId }, { limit: 1 })).total;
};

describe(`Summarize Older Turns on a real n8n`, { timeout: 40 * 60_000 }, () => {
	before(async () => {
		// Short answers, as a chat's usually are: how often a summary is due depends on turn size.
		llm = await startFakeOpenAi({ port: 0, reply: () => REPLY });
		n8n = await joinSharedN8n({
			tarball: await packPackage(),
			credentials: [openAiCredential(llm.url)],
			workflows: [llmWorkflow(), agentWorkflow()],
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
	});

	it(`LLM with Memory: facts of turns 3 and 50 reach the request at turn ${TURNS}; ≤ 1 call per 10 turns; a regeneration from turn 40 sees nothing later`, async () => {
		const { replies, summaryCalls } = await converse(LLM, 's1', TURNS);
		const last = completions()
			.filter((r) => !isSummary(r))
			.at(-1)!;
		const system = contentText(messagesOf(last)[0].content);
		assert.match(system, /\[Summary of earlier turns\][\s\S]*Ada Lovelace[\s\S]*48213/);
		for (const [i, r] of replies.entries()) {
			const used = r.memory.historyTokens + (r.memory.summary?.tokens ?? 0);
			assert.ok(used <= BUDGET, `turn ${i + 1}: ${used} tokens of history and summary`);
		}
		const summary = replies.at(-1)!.memory.summary;
		assert.ok(summary.turns > 400 && summary.tokens > 0, JSON.stringify(summary));
		// Regenerate the answer of turn 41, from turn 40.
		const parent = replies[39].messageId as string;
		const again = await turn(LLM, 's1', 'Regenerate from here.', parent);
		assert.equal(again.parentMessageId, parent);
		const request = completions()
			.filter((r) => !isSummary(r))
			.at(-1)!;
		assert.doesNotMatch(textOf(request), /48213|Lisbon/, 'no fact said after turn 40');
		assert.ok(again.memory.summary.turns + again.memory.historyMessages / 2 <= 40);
		assert.ok(summaryCalls >= 5 && summaryCalls <= TURNS / 10, `${summaryCalls} summary calls`);
	});

	it('LLM with Memory: a failing summarizer leaves every turn stored and the chat answering', async () => {
		const before = await storedMessages(LLM.id, 's2').catch(() => 0);
		assert.equal(before, 0);
		llm!.failSummaries({ times: 1000 });
		const failed: Json[] = [];
		for (let t = 1; t <= 80; t++) {
			const r = await turn(LLM, 's2', userText(t));
			assert.equal(r.output, REPLY);
			if (r.memory.summary?.error) failed.push(r);
		}
		assert.ok(failed.length > 0, 'the failure shows in memory.summary.error');
		llm!.failSummaries({ times: 0 });
		const next = await turn(LLM, 's2', 'What is my name?');
		assert.equal(next.memory.summary.error, undefined);
		assert.equal(next.memory.summary.refreshed, true);
		assert.equal(await storedMessages(LLM.id, 's2'), 2 * 81, 'every turn is stored');
	});

	it(`AI Agent with the LLM Memory Store and a Summary Model: facts of turns 3 and 50 at turn ${TURNS}`, async () => {
		const { summaryCalls } = await converse(AGENT, 'a1', TURNS);
		const last = completions()
			.filter((r) => !isSummary(r))
			.at(-1)!;
		assert.match(textOf(last), /\[Summary of earlier turns\][\s\S]*Ada Lovelace[\s\S]*48213/);
		assert.ok(summaryCalls >= 5 && summaryCalls <= TURNS / 10, `${summaryCalls} summary calls`);
		// The agent's system message stays the only one, first.
		assert.deepEqual(
			messagesOf(last)
				.map((m, i) => [m.role, i])
				.filter(([role]) => role === 'system'),
			[['system', 0]],
		);
		// A failing Summary Model: the agent goes on answering, every turn stored.
		llm!.failSummaries({ times: 1000 });
		for (let t = 1; t <= 30; t++)
			assert.equal((await turn(AGENT, 'a1', userText(t))).output, REPLY);
		const failedCalls = completions().filter(isSummary).length;
		llm!.failSummaries({ times: 0 });
		await turn(AGENT, 'a1', 'What is my order number?');
		assert.ok(completions().filter(isSummary).length > failedCalls, 'the next turn tried again');
		assert.equal(await storedMessages(AGENT.id, 'a1'), 2 * (TURNS + 31));
	});
});
