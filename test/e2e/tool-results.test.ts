/**
 * Tool Results in Memory on a real n8n (N8N_VERSION; run on 2.8.4 and 2.40.7), the package installed from
 * its tarball: n8n's own AI Agent with n8n's Code Tool, which returns 51,234 characters, and an LLM Memory
 * Store in each mode. The only stand-in is the model: the fake OpenAI server calls the tool when a message
 * carries `[[fake:tool=big_result:51234]]` and answers from its result; its reply names the result's size
 * rather than quoting it (the server's `reply` option), so the answers stay short, as a model's would.
 * Asserted from the fake server's request log, turn by turn: the model gets the whole result within the
 * turn that called the tool, and on later turns what the mode stored of it (each result's size, each
 * paired with its call by tool_call_id, in order), and from the stored documents.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import {
	contentText,
	lastUserText,
	startFakeOpenAi,
	trailingToolResults,
} from '../../demo/model-server';
import type { ChatMessage, FakeOpenAi } from '../../demo/model-server';
import { LocalDiskStorage, NodeMemory } from '../../src/internal';
import { WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import { packPackage } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import { openAiCredential } from '../support/workflows';

type Json = Record<string, any>;

const CHARS = 51_234;
/** The Code Tool's JavaScript: `query` characters of "row 0 row 1 …" (nothing JSON needs to escape). */
const BIG_RESULT_JS = [
	'const n = Number(query);',
	"let s = '';",
	"for (let i = 0; s.length < n; i++) s += 'row ' + i + ' ';",
	'return s.slice(0, n);',
].join('\n');

/** The workflows: one per setting, each a Chat Trigger → AI Agent with the Code Tool and a store. */
const SETTINGS = {
	keep: { id: 'e2eToolResKeep01', hook: 'd001', store: { maxHistoryTokens: 100_000 } },
	keepDefaults: { id: 'e2eToolResKeep02', hook: 'd002', store: {} },
	note: { id: 'e2eToolResNote01', hook: 'd003', store: { toolResults: 'note' } },
	leaveOut: { id: 'e2eToolResLeave1', hook: 'd004', store: { toolResults: 'leaveOut' } },
} as const;
type Setting = keyof typeof SETTINGS;
const webhookId = (s: Setting) => `e2e0c0de-0000-4000-8000-00000000${SETTINGS[s].hook}`;
const storeId = (s: Setting) => `${SETTINGS[s].id}-store`;

function workflow(setting: Setting): Json {
	const { id, store } = SETTINGS[setting];
	const w = new WorkflowBuilder(id, `tool results: ${setting}`);
	const agent = w.agent('Agent', `tool results ${setting}`);
	w.main(w.chatTrigger(webhookId(setting)), agent);
	const tool = w.add({
		name: 'big_result', // the agent names the tool after its node
		type: '@n8n/n8n-nodes-langchain.toolCode',
		typeVersion: 1.1,
		parameters: {
			name: 'big_result',
			description: 'Returns as many characters of rows as the input number asks for.',
			language: 'javaScript',
			jsCode: BIG_RESULT_JS,
		},
	});
	w.sub(tool, 'ai_tool', agent);
	w.sub(w.store('Memory', storeId(setting), { memoryMode: 'node', ...store }), 'ai_memory', agent);
	return w.json();
}

/** The fake model's answer, with the size of each tool result it answers from instead of its text. */
function reply(messages: ChatMessage[]): string {
	const sizes = trailingToolResults(messages).map((r) => r.length);
	const tools = sizes.length ? ` with tool results of ${sizes.join(', ')} characters` : '';
	const roles = messages.map((m) => m.role).join(',');
	return `FAKE-LLM reply to "${lastUserText(messages)}"${tools} (saw ${messages.length} messages: ${roles})`;
}

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;

/**
 * A message the model was sent, compactly: "user: …", "assistant calls big_result {…} [#1]", "tool [#1]:
 * 16,066 characters" (its text when short). Call IDs become #1, #2 … in order of appearance, so a call
 * and its result can be compared without knowing the fake server's IDs.
 */
function render(messages: Json[]): string[] {
	const ids = new Map<string, string>();
	const ref = (id: string) => ids.get(id) ?? (ids.set(id, `#${ids.size + 1}`), ids.get(id));
	return messages.map((m) => {
		if (m.role === 'assistant' && m.tool_calls?.length)
			return m.tool_calls
				.map(
					(c: Json) => `assistant calls ${c.function.name} ${c.function.arguments} [${ref(c.id)}]`,
				)
				.join(' + ');
		const text = contentText(m.content);
		if (m.role === 'tool')
			return `tool [${ref(m.tool_call_id)}]: ${text.length > 200 ? `${text.length} characters` : text}`;
		return `${m.role}: ${text}`;
	});
}

/** The requests of one workflow (its agent's system message names it), without the system message. */
function requestsOf(setting: Setting): Json[][] {
	return llm!
		.completions()
		.filter((r) => r.body?.messages?.[0]?.content === `tool results ${setting}`)
		.map((r) => r.body.messages.slice(1));
}

const Q1 = `fetch the rows [[fake:tool=big_result:${CHARS}]]`;
const Q2 = `fetch them again [[fake:tool=big_result:${CHARS}]]`;
const Q3 = 'how many rows were there?';
const CALL = `assistant calls big_result {"input":"${CHARS}"}`;
const cutNote = (left: number) =>
	`\n[… ${left} more characters of tool output were not kept in memory]`;
const note = (chars: number) =>
	`[tool result of big_result: ${chars.toLocaleString('en-US')} characters, not kept in memory]`;

/**
 * Three turns on a fresh session: two that call the tool, then a question. Returns the model's requests
 * of the three turns (two each for the tool turns), the answers, and the tool result as the agent handed
 * it to the model within turn 1 (n8n wraps the tool's output as `[{"response":"…"}]`).
 */
async function threeTurns(setting: Setting, session: string) {
	const answers: string[] = [];
	for (const text of [Q1, Q2, Q3]) {
		const r = await sendChat(n8n!.chatUrl(webhookId(setting)), {
			sessionId: session,
			chatInput: text,
		});
		assert.equal(r.status, 200, r.body);
		answers.push(String(r.shown));
	}
	const requests = requestsOf(setting);
	assert.equal(requests.length, 5, 'a tool turn makes two model calls, a plain one one');
	const result = contentText(requests[1].at(-1)!.content);
	assert.equal(requests[1].at(-1)!.role, 'tool');
	assert.match(result, /^\[\{"response":"row 0 row 1 row 2 /);
	assert.ok(result.length > CHARS && result.length < CHARS + 40, `${result.length} characters`);
	return { requests: requests.map(render), raw: requests, answers, result };
}

/** Turn 3's request: whole tool turns in order, every result right after its call. */
function assertPaired(request: Json[]) {
	for (const [i, m] of request.entries()) {
		const calls = m.role === 'assistant' ? (m.tool_calls ?? []) : [];
		const results = request.slice(i + 1, i + 1 + calls.length);
		assert.deepEqual(
			results.map((r) => [r.role, r.tool_call_id]),
			calls.map((c: Json) => ['tool', c.id]),
			`call at ${i} is followed by its result`,
		);
	}
	assert.notEqual(request[0]?.role, 'tool');
}

/** What a Node-mode store keeps on disk, read through the engine. */
async function stored(setting: Setting, session: string) {
	const storage = new LocalDiskStorage({ root: n8n!.memoryRoot });
	return await new NodeMemory(SETTINGS[setting].id, session, storeId(setting), {
		storage,
	}).messages();
}

describe('Tool Results in Memory with n8n’s AI Agent and Code Tool on a real n8n', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0, reply }); // first, so after() closes it even when packing fails
		const fake = llm;
		n8n = await joinSharedN8n({
			tarball: await packPackage(),
			credentials: [openAiCredential(fake.url)],
			workflows: (Object.keys(SETTINGS) as Setting[]).map(workflow),
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
	});

	it('Keep: later turns get each result cut at 16,000 characters with a note, paired with its call, in order', async () => {
		const { requests, raw, answers, result } = await threeTurns('keep', 'keep-1');
		const kept = result.slice(0, 16_000) + cutNote(result.length - 16_000);
		assert.equal(
			answers[0],
			`FAKE-LLM reply to "${Q1}" with tool results of ${result.length} characters (saw 4 messages: system,user,assistant,tool)`,
		);
		assert.deepEqual(requests[4], [
			`user: ${Q1}`,
			`${CALL} [#1]`,
			`tool [#1]: ${kept.length} characters`,
			`assistant: ${answers[0]}`,
			`user: ${Q2}`,
			`${CALL} [#2]`,
			`tool [#2]: ${kept.length} characters`,
			`assistant: ${answers[1]}`,
			`user: ${Q3}`,
		]);
		assert.equal(contentText(raw[4][2].content), kept);
		assertPaired(raw[4]);
		assert.match(
			answers[1],
			/\(saw 8 messages: system,user,assistant,tool,assistant,user,assistant,tool\)$/,
		);
	});

	it('Keep with the default budget (2,000 tokens): a turn holding one kept result does not fit, so no history is sent', async () => {
		const { requests } = await threeTurns('keepDefaults', 'keep-2');
		assert.deepEqual(requests[2], [`user: ${Q2}`]);
		assert.deepEqual(requests[4], [`user: ${Q3}`]);
		const messages = await stored('keepDefaults', 'keep-2');
		assert.deepEqual(
			messages.map((m) => m.role),
			[
				'user',
				'assistant',
				'tool',
				'assistant',
				'user',
				'assistant',
				'tool',
				'assistant',
				'user',
				'assistant',
			],
		);
	});

	it('Keep a Short Note: later turns get the calls and a one-line note of each result’s size, paired, in order', async () => {
		const { requests, raw, answers, result } = await threeTurns('note', 'note-1');
		assert.deepEqual(requests[4], [
			`user: ${Q1}`,
			`${CALL} [#1]`,
			`tool [#1]: ${note(result.length)}`,
			`assistant: ${answers[0]}`,
			`user: ${Q2}`,
			`${CALL} [#2]`,
			`tool [#2]: ${note(result.length)}`,
			`assistant: ${answers[1]}`,
			`user: ${Q3}`,
		]);
		assertPaired(raw[4]);
		// Within a turn the model still gets the whole result: only what is stored is a note.
		assert.equal(requests[3].at(-1), `tool [#2]: ${result.length} characters`);
		const messages = await stored('note', 'note-1');
		assert.deepEqual(
			messages.filter((m) => m.role === 'tool').map((m) => [m.content, m.name, m.tool_call_id]),
			[0, 1].map((i) => [
				note(result.length),
				'big_result',
				messages[1 + 4 * i].tool_calls?.[0].id,
			]),
		);
	});

	it('Leave Out Tool Turns: later turns get the questions and answers only; no tool step is stored', async () => {
		const { requests, answers } = await threeTurns('leaveOut', 'leave-1');
		assert.deepEqual(requests[4], [
			`user: ${Q1}`,
			`assistant: ${answers[0]}`,
			`user: ${Q2}`,
			`assistant: ${answers[1]}`,
			`user: ${Q3}`,
		]);
		assert.deepEqual(requests[2], [`user: ${Q1}`, `assistant: ${answers[0]}`, `user: ${Q2}`]);
		const messages = await stored('leaveOut', 'leave-1');
		assert.deepEqual(
			messages.map((m) => m.role),
			['user', 'assistant', 'user', 'assistant', 'user', 'assistant'],
		);
		assert.ok(messages.every((m) => !m.tool_calls));
	});

	it('the n8n log shows no unknown node types', () => {
		assert.doesNotMatch(n8n!.log(), /Unrecognized node type/);
	});
});
