/**
 * Remember Facts on a real n8n (N8N_VERSION), the package installed from its tarball, joining the
 * shared n8n: what a user said in one conversation reaches the model in the next one of the same user,
 * through LLM with Memory and through n8n's AI Agent with an LLM Memory Store (its Facts Model input),
 * and never another user's; "we moved to Oslo" supersedes "Lives in Lyon"; a person's edit through the
 * LLM Memory Manager reaches the model at the next turn, and Roll Back Facts restores the fact; the
 * Manager's Facts operations work as AI Agent tools; a failed or malformed extraction never fails a
 * turn; 100 chat turns cost at most 20 extraction calls.
 *
 * The fake OpenAI-compatible server (demo/model-server.ts) is the only stand-in. It answers a fact
 * extraction deterministically from what the request gave it (demo/facts.ts: "I live in Lyon" → add
 * "Lives in Lyon", quoting those words; "we moved to Oslo" → update it to "Lives in Oslo"), so what is
 * learned follows from what the user said; every request it received is checked for what the model saw.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { contentText, startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi, LoggedRequest } from '../../demo/model-server';
import { encodingForModel, FACTS_END, FACTS_START, TiktokenCounter } from '../../src/internal';
import { CHAT_TRIGGER_NAME, WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import { packPackage } from '../support/n8n-harness';
import type { N8nInstance } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import { openAiCredential } from '../support/workflows';

type Json = Record<string, any>;

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;

const USER = `={{ ($('${CHAT_TRIGGER_NAME}').item.json.metadata || {}).userId }}`;
/** Remember Facts with the user from the chat's metadata; `learnAfter` 0 reads after every turn. */
const facts = (learnAfter?: number): Json => ({
	rememberFacts: true,
	longTermUserId: USER,
	...(learnAfter !== undefined ? { factsOptions: { learnAfterTokens: learnAfter } } : {}),
});

const LLM = { id: 'e2eFactsLlmMem01', webhookId: 'e2e0c0de-0000-4000-8000-00000000fa01' };
const AGENT = { id: 'e2eFactsAgent001', webhookId: 'e2e0c0de-0000-4000-8000-00000000fa02' };
const TOOLS = { id: 'e2eFactsTools001', webhookId: 'e2e0c0de-0000-4000-8000-00000000fa03' };
const COUNT = { id: 'e2eFactsCount001', webhookId: 'e2e0c0de-0000-4000-8000-00000000fa04' };
const ADMIN = { id: 'e2eFactsAdmin001' };

/** Chat Trigger → LLM with Memory with Remember Facts. */
function llmWorkflow(wf: { id: string; webhookId: string }, system: string, extra: Json): Json {
	const w = new WorkflowBuilder(wf.id, `facts: ${system}`);
	const node = w.llmWithMemory('LLM', `${wf.id}-llm`, { systemMessage: system, ...extra });
	w.main(w.chatTrigger(wf.webhookId), node);
	return w.json();
}

/** Chat Trigger → AI Agent with an LLM Memory Store with Remember Facts and a Facts Model of its own. */
function agentWorkflow(): Json {
	const w = new WorkflowBuilder(AGENT.id, 'facts: agent');
	const agent = w.agent('Agent', 'facts agent');
	w.main(w.chatTrigger(AGENT.webhookId), agent);
	const store = w.store('Memory', `${AGENT.id}-store`, facts(0));
	w.sub(store, 'ai_memory', agent);
	w.sub(w.model('Facts Model'), 'ai_languageModel', store);
	return w.json();
}

/** Chat Trigger → AI Agent with the Manager's Get Facts and Add Fact as tools on LLM's facts. */
function toolsWorkflow(): Json {
	const w = new WorkflowBuilder(TOOLS.id, 'facts: the Manager as tools');
	const agent = w.agent('Agent', 'facts tools agent');
	w.main(w.chatTrigger(TOOLS.webhookId), agent);
	const common = { resource: 'facts', factsBaseId: LLM.id, factsUserId: USER };
	const get = w.llmMemoryManager(
		'Get Facts',
		{ ...common, operation: 'getFacts', toolDescription: 'What is known about the user' },
		{ asTool: true },
	);
	const add = w.llmMemoryManager(
		'Add Fact',
		{
			...common,
			operation: 'addFact',
			factText: "={{ $fromAI('fact', 'The fact, as one short statement', 'string') }}",
			toolDescription: 'Remember a fact about the user',
		},
		{ asTool: true },
	);
	w.sub(get, 'ai_tool', agent);
	w.sub(add, 'ai_tool', agent);
	return w.json();
}

/** Webhooks → the Manager's Facts operations on LLM's facts, the user and the values from the body. */
function adminWorkflow(): Json {
	const w = new WorkflowBuilder(ADMIN.id, 'facts: admin');
	const body = (field: string) => `={{ $json.body.${field} }}`;
	const common = { resource: 'facts', factsBaseId: LLM.id, factsUserId: body('userId') };
	const ops: Record<string, Json> = {
		get: { operation: 'getFacts', includeSuperseded: true },
		edit: {
			operation: 'editFact',
			factId: body('factId'),
			factText: body('text'),
			editedBy: body('by'),
		},
		history: { operation: 'factsHistory', returnAll: true },
		rollback: { operation: 'rollbackFacts', factsVersion: body('version'), editedBy: body('by') },
	};
	for (const [name, params] of Object.entries(ops))
		w.main(
			w.webhook(`${name} Webhook`, `e2e-facts-${name}`),
			w.llmMemoryManager(`Facts ${name}`, { ...common, ...params }, { typeVersion: 1.1 }),
		);
	return w.json();
}

async function admin(op: string, body: Json): Promise<Json> {
	const res = await fetch(`${n8n!.baseUrl}/webhook/e2e-facts-${op}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	const json = (await res.json()) as Json;
	assert.equal(res.status, 200, JSON.stringify(json));
	return json;
}

const chat = async (wf: { webhookId: string }, sessionId: string, text: string, user: string) => {
	const r = await sendChat(n8n!.chatUrl(wf.webhookId), {
		sessionId,
		chatInput: text,
		metadata: { userId: user },
	});
	assert.equal(r.status, 200, r.body);
	return r;
};

const chatRequests = () => llm!.completions().filter((r) => !llm!.factRequests().includes(r));
/** The chat request (not an extraction) whose last user message was `text`. */
function requestFor(text: string, system: string): LoggedRequest {
	const found = chatRequests().filter((r) => {
		const messages = r.body.messages as Json[];
		return (
			contentText(messages[0]?.content).startsWith(system) &&
			contentText(messages.at(-1)?.content) === text
		);
	});
	assert.ok(found.length > 0, `no request for "${text}"`);
	return found.at(-1)!;
}

/** The facts section the model received in a request ('' when none). */
function sectionOf(r: LoggedRequest): string {
	const text = (r.body.messages as Json[]).map((m) => contentText(m.content)).join('\n');
	const at = text.indexOf(FACTS_START);
	return at < 0 ? '' : text.slice(at, text.indexOf(FACTS_END, at) + FACTS_END.length);
}

describe('Remember Facts on a real n8n', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 });
		n8n = await joinSharedN8n({
			tarball: await packPackage(),
			credentials: [openAiCredential(llm.url)],
			workflows: [
				llmWorkflow(LLM, 'facts bot', facts(0)),
				agentWorkflow(),
				toolsWorkflow(),
				adminWorkflow(),
				llmWorkflow(COUNT, 'count bot', { ...facts(), options: { window: 20 } }),
			],
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
	});

	it('LLM with Memory: what Alice said in conversation 1 reaches the model in conversation 2, never Bob’s', async () => {
		const first = await chat(LLM, 'lm-1', 'Hello! I live in Lyon.', 'alice');
		const learned = first.json.memory.facts;
		assert.deepEqual([learned.userId, learned.memoryBaseId], ['alice', LLM.id]);
		assert.deepEqual(learned.added, [{ id: 'f1', text: 'Lives in Lyon' }]);
		await chat(LLM, 'lm-2', 'Where do I live?', 'alice');
		const seen = requestFor('Where do I live?', 'facts bot');
		assert.equal(seen.body.messages[0].role, 'system');
		assert.match(sectionOf(seen), /\n- \d{4}-\d\d-\d\d: Lives in Lyon\n/);
		assert.ok(contentText(seen.body.messages[0].content).includes(sectionOf(seen)));
		await chat(LLM, 'lm-3', 'Where does Bob live?', 'bob');
		assert.equal(sectionOf(requestFor('Where does Bob live?', 'facts bot')), '');
	});

	it('AI Agent + LLM Memory Store with a Facts Model: the same, as the history’s first message', async () => {
		const before = llm!.factRequests().length;
		await chat(AGENT, 'ag-1', 'By the way, I have a cat named Miso.', 'carla');
		assert.equal(llm!.factRequests().length, before + 1, 'the Facts Model read the turn');
		await chat(AGENT, 'ag-2', 'What is my cat called?', 'carla');
		const seen = requestFor('What is my cat called?', 'facts agent');
		const lead = (seen.body.messages as Json[])[1];
		assert.equal(lead.role, 'user');
		assert.ok(contentText(lead.content).startsWith(FACTS_START), contentText(lead.content));
		assert.match(sectionOf(seen), /Has a cat named Miso/);
		await chat(AGENT, 'ag-3', 'What is my cat called, Dan asks?', 'dan');
		assert.equal(sectionOf(requestFor('What is my cat called, Dan asks?', 'facts agent')), '');
	});

	it('"we moved to Oslo" supersedes "Lives in Lyon": only Oslo reaches the model afterwards', async () => {
		const moved = await chat(LLM, 'lm-2', 'Big news: we moved to Oslo.', 'alice');
		assert.deepEqual(moved.json.memory.facts.updated, [
			{ from: 'f1', id: 'f2', text: 'Lives in Oslo' },
		]);
		await chat(LLM, 'lm-4', 'Any plans for the weekend?', 'alice');
		const section = sectionOf(requestFor('Any plans for the weekend?', 'facts bot'));
		assert.match(section, /Lives in Oslo/);
		assert.doesNotMatch(section, /Lyon/);
		const got = await admin('get', { userId: 'alice' });
		assert.deepEqual(
			got.facts.map((f: Json) => [f.id, f.status, f.supersededBy ?? null]),
			[
				['f1', 'superseded', 'f2'],
				['f2', 'current', null],
			],
		);
		assert.equal(got.facts[1].evidence.quote, 'we moved to Oslo');
	});

	it('a person’s edit through the Manager reaches the model at the next turn; Roll Back Facts restores the fact', async () => {
		const edited = await admin('edit', {
			userId: 'alice',
			factId: 'f2',
			text: 'Lives in Bergen',
			by: 'ada@example.com',
		});
		assert.deepEqual([edited.fact.id, edited.fact.evidence.by], ['f3', 'ada@example.com']);
		await chat(LLM, 'lm-5', 'Where am I now?', 'alice');
		const section = sectionOf(requestFor('Where am I now?', 'facts bot'));
		assert.match(section, /Lives in Bergen/);
		assert.doesNotMatch(section, /Oslo/);

		const history = await admin('history', { userId: 'alice' });
		const edit = history.entries.find((e: Json) => e.version === edited.version);
		assert.equal(edit.summary, 'f2 → f3 edited by ada@example.com');
		const back = await admin('rollback', { userId: 'alice', version: edit.parent, by: 'ada' });
		const current = back.facts.filter((f: Json) => f.status === 'current').map((f: Json) => f.text);
		assert.deepEqual(current, ['Lives in Oslo']);
		await chat(LLM, 'lm-6', 'And where am I now?', 'alice');
		const restored = sectionOf(requestFor('And where am I now?', 'facts bot'));
		assert.match(restored, /Lives in Oslo/);
		assert.doesNotMatch(restored, /Bergen/);
	});

	it('the Manager’s Facts operations as AI Agent tools: Add Fact, then Get Facts, reach the model', async () => {
		const text = `remember that I like jazz [[fake:tool=Add Fact:${JSON.stringify({ fact: 'Likes jazz' })}]]`;
		const r = await chat(TOOLS, 'tl-1', text, 'alice');
		const [call, answer] = chatRequests()
			.filter((x) => contentText(x.body.messages[0]?.content).startsWith('facts tools agent'))
			.slice(-2);
		assert.deepEqual(call.body.tools.map((t: Json) => t.function.name).sort(), [
			'Add_Fact',
			'Get_Facts',
		]);
		const [result] = (answer.body.messages as Json[])
			.filter((m) => m.role === 'tool')
			.map((m) => JSON.parse(contentText(m.content)));
		const added = Array.isArray(result) ? result[0] : result;
		assert.deepEqual([added.userId, added.added.text], ['alice', 'Likes jazz']);
		assert.match(added.added.evidence.by, /^workflow facts: the Manager as tools$/);
		assert.match(r.shown ?? '', /with tool results \[/);
		await chat(LLM, 'lm-7', 'What music do I like?', 'alice');
		assert.match(sectionOf(requestFor('What music do I like?', 'facts bot')), /Likes jazz/);
		await chat(TOOLS, 'tl-2', 'what do you know? [[fake:tool=Get Facts:{}]]', 'alice');
		const listed = chatRequests().at(-1)!;
		const tool = (listed.body.messages as Json[]).find((m) => m.role === 'tool');
		assert.match(contentText(tool?.content), /Likes jazz/);
		assert.match(contentText(tool?.content), /Lives in Oslo/);
	});

	it('a failed or malformed extraction never fails the turn; the output says why; the next turn learns', async () => {
		llm!.failFacts({ times: 1 });
		const failed = await chat(LLM, 'lm-e', 'I have a parrot named Kiwi.', 'erik');
		assert.match(failed.json.memory.facts.extractionError, /model call failed/);
		assert.deepEqual(failed.json.memory.facts.added, []);
		llm!.failFacts({ times: 1, malformed: true });
		const malformed = await chat(LLM, 'lm-e', 'Lovely day.', 'erik');
		assert.ok(malformed.json.memory.facts.extractionError, JSON.stringify(malformed.json.memory));
		const next = await chat(LLM, 'lm-e', 'Indeed.', 'erik');
		assert.deepEqual(next.json.memory.facts.added, [{ id: 'f1', text: 'Has a parrot named Kiwi' }]);
		assert.equal(next.json.memory.facts.readTurns, 3);
	});

	it('100 chat-length turns at the default Learn After: at most 20 extraction calls, every fact of the turns read learned', async (t) => {
		const before = llm!.factRequests().length;
		const counter = new TiktokenCounter(encodingForModel('gpt-4o-mini'));
		const outputs: Json[] = [];
		const said: Array<string | undefined> = [];
		const tokens = { question: 0, answer: 0 };
		for (let i = 1; i <= 100; i++) {
			const pet = i % 10 === 3 ? `Pet${i}` : undefined;
			said.push(pet);
			const text = pet
				? `Oh, and I have a hamster named ${pet}, it is small and brown, it sleeps all day in the box on my desk, and at night it runs in its wheel.`
				: `Question ${i}: could you tell me a little more about the history of the old harbour we talked about earlier, and why it still matters to the town today?`;
			const r = await chat(COUNT, 'count-1', text, 'zoe');
			tokens.question += counter.count(text);
			tokens.answer += counter.count(r.json.output);
			outputs.push(r.json.memory.facts);
		}
		const calls = llm!.factRequests().length - before;
		const extractions = outputs.filter((f) => f.extracted);
		t.diagnostic(
			`${calls} extraction calls in 100 turns (questions ${Math.round(tokens.question / 100)} tokens, answers ${Math.round(tokens.answer / 100)} tokens on average); turns read per call: ${extractions.map((f) => f.readTurns).join(', ')}`,
		);
		assert.equal(extractions.length, calls);
		assert.ok(calls >= 5 && calls <= 20, `${calls} extraction calls`);
		const read = outputs.reduce((n, f) => n + (f.readTurns ?? 0), 0);
		const learned = outputs.flatMap((f) => (f.added ?? []).map((a: Json) => a.text)).sort();
		const expected = said
			.slice(0, read)
			.filter((p): p is string => !!p)
			.map((p) => `Has a hamster named ${p}`)
			.sort();
		assert.ok(expected.length >= 8, `${read} turns read`);
		assert.deepEqual(learned, expected);
	});

	it('the n8n log shows no unknown node types', () => {
		assert.doesNotMatch(n8n!.log(), /Unrecognized node type/);
	});
});
