/**
 * Streaming on a real n8n (N8N_VERSION): a Chat Trigger whose response mode is Streaming, POSTed like
 * the chat widget does, answered as newline-delimited JSON chunks. LLM with Memory streams through the
 * model's stream() (n8n's OpenAI Chat Model against the local fake OpenAI server, the only stand-in,
 * which sends its answer in several SSE pieces); memory holds the turn afterwards. The AI Agent's own
 * streaming path works with the LLM Memory Store too.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { LocalDiskStorage, NodeMemory } from '../../src/internal';
import { WorkflowBuilder } from '../support/agent-workflows';
import { sendChatStream } from '../support/chat-stream';
import type { StreamReply } from '../support/chat-stream';
import { contentText, startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi } from '../../demo/model-server';
import { packPackage } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import { openAiCredential } from '../support/workflows';

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;

const LLM_WF = {
	id: 'e2eStreamLlm0001',
	webhookId: 'e2e0c0de-0000-4000-8000-00000000c001',
	node: 'e2e-stream-llm',
};
const AGENT_WF = {
	id: 'e2eStreamAgent01',
	webhookId: 'e2e0c0de-0000-4000-8000-00000000c002',
	store: 'e2e-stream-store',
};

function llmWorkflow() {
	const w = new WorkflowBuilder(LLM_WF.id, 'streaming: LLM with Memory');
	const node = w.llmWithMemory('LLM', LLM_WF.node, {
		memoryMode: 'node',
		systemMessage: 'streamed llm',
	});
	w.main(w.chatTrigger(LLM_WF.webhookId, { responseMode: 'streaming' }), node);
	return w.json();
}

function agentWorkflow() {
	const w = new WorkflowBuilder(AGENT_WF.id, 'streaming: AI Agent with the memory store');
	const agent = w.agent('Agent', 'streamed agent');
	w.main(w.chatTrigger(AGENT_WF.webhookId, { responseMode: 'streaming' }), agent);
	w.sub(w.store('Memory', AGENT_WF.store, { memoryMode: 'node' }), 'ai_memory', agent);
	return w.json();
}

/** Model calls whose system message is `tag`, as "role: text" lines after the system message, with the request's stream flag. */
function callsOf(tag: string) {
	return llm!
		.completions()
		.filter((r) => r.body?.messages?.[0]?.content === tag)
		.map((r) => ({
			stream: r.body.stream === true,
			messages: (r.body.messages as any[])
				.slice(1)
				.map((m) => `${m.role}: ${contentText(m.content)}`),
		}));
}

const EXAMPLE_FILE = path.resolve(__dirname, '../../examples/agent-with-memory.json');
const EXAMPLE = JSON.parse(readFileSync(EXAMPLE_FILE, 'utf8'));

const REPLY = (text: string, seen: string) => `FAKE-LLM reply to "${text}" (saw ${seen})`;

/** The chunk types in order, with runs of items collapsed to "item×n". */
function shape(reply: StreamReply): string[] {
	const out: string[] = [];
	for (const c of reply.chunks) {
		const last = out[out.length - 1];
		if (c.type === 'item' && last?.startsWith('item×'))
			out[out.length - 1] = `item×${Number(last.slice(5)) + 1}`;
		else out.push(c.type === 'item' ? 'item×1' : c.type);
	}
	return out;
}

const stream = (wf: { webhookId: string }, sessionId: string, chatInput: string) =>
	sendChatStream(n8n!.chatUrl(wf.webhookId), { sessionId, chatInput });

describe('streaming to the chat on a real n8n', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 }); // first, so after() closes it even when packing fails
		const [tarball, fake] = [await packPackage(), llm];
		// The example workflow, as shipped, with its model credential pointed at the fake server.
		const exampleCredential = {
			...openAiCredential(fake.url),
			id: 'llmMemoryModel01',
			name: 'Chat model endpoint',
		};
		n8n = await joinSharedN8n({
			tarball,
			credentials: [openAiCredential(fake.url), exampleCredential],
			workflows: [llmWorkflow(), agentWorkflow(), EXAMPLE_FILE],
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
	});

	it('LLM with Memory streams begin, the answer piece by piece through stream(), end; memory holds the turn', async () => {
		const t1 = await stream(LLM_WF, 'st-1', 'tell me a story');
		assert.equal(t1.status, 200);
		assert.match(t1.contentType ?? '', /application\/json/);
		const answer1 = REPLY('tell me a story', '2 messages: system,user');
		assert.equal(t1.text, answer1);
		const pieces = Math.ceil(answer1.length / 16); // the fake server's SSE pieces
		assert.deepEqual(shape(t1), ['begin', `item×${pieces}`, 'end'], JSON.stringify(t1.chunks));
		assert.deepEqual(t1.otherLines, []);
		assert.ok(
			t1.chunks.every((c) => c.metadata?.nodeName === 'LLM' && c.metadata?.itemIndex === 0),
		);
		assert.deepEqual(
			callsOf('streamed llm').map((c) => c.stream),
			[true],
			'the model was called with stream: true',
		);

		const t2 = await stream(LLM_WF, 'st-1', 'and then?');
		assert.equal(t2.text, REPLY('and then?', '4 messages: system,user,assistant,user'));
		assert.deepEqual(callsOf('streamed llm').at(-1)!.messages, [
			'user: tell me a story',
			`assistant: ${answer1}`,
			'user: and then?',
		]);
		const storage = new LocalDiskStorage({ root: n8n!.memoryRoot });
		assert.deepEqual(
			(await new NodeMemory(LLM_WF.id, 'st-1', LLM_WF.node, { storage }).messages()).map(
				(m) => m.content,
			),
			['tell me a story', answer1, 'and then?', t2.text],
			'memory holds the assembled answers',
		);
	});

	it('a failed model call ends the stream with an error chunk and adds nothing to memory', async () => {
		const failed = await stream(LLM_WF, 'st-2', 'break [[fake:status=400]]');
		// One error chunk (n8n's own, from the error's description), which says what failed and that nothing was stored.
		assert.deepEqual(shape(failed), ['begin', 'error'], JSON.stringify(failed.chunks));
		assert.match(
			failed.chunks[1].content ?? '',
			/^The model call failed: .+\. Nothing was added to memory\.$/,
		);
		const next = await stream(LLM_WF, 'st-2', 'fine now');
		assert.deepEqual(
			shape(next).filter((t) => !t.startsWith('item')),
			['begin', 'end'],
		);
		assert.deepEqual(
			callsOf('streamed llm').at(-1)!.messages,
			['user: fine now'],
			'the failed turn was not stored',
		);
	});

	it('the AI Agent’s own streaming works with the LLM Memory Store: turn 2 receives turn 1', async () => {
		const t1 = await stream(AGENT_WF, 'sa-1', 'hello agent');
		const answer1 = REPLY('hello agent', '2 messages: system,user');
		assert.equal(t1.text, answer1);
		assert.equal(shape(t1)[0], 'begin');
		assert.equal(shape(t1).at(-1), 'end');
		assert.ok(t1.chunks.every((c) => c.metadata?.nodeName === 'Agent'));
		const t2 = await stream(AGENT_WF, 'sa-1', 'again');
		assert.equal(t2.text, REPLY('again', '4 messages: system,user,assistant,user'));
		assert.deepEqual(callsOf('streamed agent').at(-1)!.messages, [
			'user: hello agent',
			`assistant: ${answer1}`,
			'user: again',
		]);
		assert.ok(callsOf('streamed agent').every((c) => c.stream));
	});

	it('examples/agent-with-memory.json: a streamed tool turn through the Calculator, remembered, and reloaded without tool steps', async () => {
		const webhookId = EXAMPLE.nodes.find((n: any) => n.webhookId).webhookId;
		const system = EXAMPLE.nodes.find((n: any) => n.name === 'AI Agent').parameters.options
			.systemMessage;
		const question = 'what is 6 times 7? [[fake:tool=Calculator:6*7]]';
		const t1 = await stream({ webhookId }, 'ex-1', question);
		assert.match(
			t1.text,
			/with tool results \[\[\{"response":"42"\}\]\]/,
			JSON.stringify(t1.chunks),
		);
		const t2 = await stream({ webhookId }, 'ex-1', 'thanks');
		assert.equal(t2.text, REPLY('thanks', '6 messages: system,user,assistant,tool,assistant,user'));
		assert.deepEqual(
			callsOf(system)
				.at(-1)!
				.messages.map((m) => m.split(':')[0]),
			['user', 'assistant', 'tool', 'assistant', 'user'],
		);
		const reload = await fetch(n8n!.chatUrl(webhookId), {
			method: 'POST',
			headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify({ action: 'loadPreviousSession', sessionId: 'ex-1' }),
		});
		const data = ((await reload.json()) as { data: any[] }).data;
		assert.deepEqual(
			data.map((m) => `${m.id.at(-1)}: ${m.kwargs.content}`),
			[
				`HumanMessage: ${question}`,
				`AIMessage: ${t1.text}`,
				'HumanMessage: thanks',
				`AIMessage: ${t2.text}`,
			],
		);
	});
});
