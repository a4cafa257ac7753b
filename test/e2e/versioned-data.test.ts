/**
 * Versioned data on a real n8n (N8N_VERSION): examples/edit-json-by-chat.json as shipped runs the seed's
 * three requests through the Chat Trigger (set up a record, "change category to FRAGRANCE" → version 2,
 * "what did I just change?" answered from the version records), then its History and Rollback
 * webhooks. n8n's OpenAI Chat Model talks to the fake OpenAI server (the only stand-in), which answers
 * with an update_data tool call when a message carries `[[fake:tool=update_data:{…}]]`: the patch then
 * goes through LangChain's real tool calling. Without a marker, the same server reads a plain "Change
 * category to FRAGRANCE" itself (it is `npm start`'s offline demo model), and the example saves it.
 * Also: a bad patch saves nothing (on S3, radosgw), the LLM Memory Manager as n8n's AI Agent tool
 * (History and Diff), and Export from one workflow and Import into another.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ConversationMemory, LocalDiskStorage, VersionedData } from '../../src/internal';
import type { MemoryStorage, S3Storage } from '../../src/internal';
import { contentText, startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi, LoggedRequest } from '../../demo/model-server';
import { CHAT_TRIGGER_TYPE, WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import { sendChatStream } from '../support/chat-stream';
import { waitFor } from '../support/n8n-executions';
import { packPackage } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import { ensureRgw, RGW_CREDENTIALS, rgwStorage } from '../support/rgw';
import { openAiCredential, S3_CREDENTIAL, s3Credential } from '../support/workflows';

type Json = Record<string, any>;

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;
let s3: S3Storage;

const EXAMPLE_FILE = path.resolve(__dirname, '../../examples/edit-json-by-chat.json');
const EXAMPLE = JSON.parse(readFileSync(EXAMPLE_FILE, 'utf8'));
const EXAMPLE_CHAT: string = EXAMPLE.nodes.find(
	(n: Json) => n.type === CHAT_TRIGGER_TYPE,
).webhookId;
const RECORD = { inci: 'WATER', category: 'OTHERS', noael: [], notes: '' };
const FRAGRANCE_LINE = 'replaced /category: "OTHERS" → "FRAGRANCE"';

/** A chat message that makes the fake model call update_data with this patch and summary. */
const patchMessage = (text: string, patch: unknown[], summary: string) =>
	`${text} [[fake:tool=update_data:${JSON.stringify({ patch, summary })}]]`;
const TO_FRAGRANCE = patchMessage(
	'Change category to FRAGRANCE',
	[{ op: 'replace', path: '/category', value: 'FRAGRANCE' }],
	'Changed category to FRAGRANCE',
);
/** What the node sends back as update_data's result for that change. */
const FRAGRANCE_RESULT = JSON.stringify({
	ok: true,
	summary: 'Changed category to FRAGRANCE',
	changes: [FRAGRANCE_LINE],
});

// --- workflows -------------------------------------------------------------------------------------

/** Versioned data on S3, with an Export webhook. */
const ON_S3 = { id: 'e2eVersionsOnS31', webhookId: 'e2e0c0de-0000-4000-8000-00000000d001' };
function s3Workflow() {
	const w = new WorkflowBuilder(ON_S3.id, 'versioned data on S3, with Export');
	const s3Cred = { llmMemoryS3Api: S3_CREDENTIAL };
	const editor = w.llmWithMemory(
		'Editor',
		'e2e-vd-s3-editor',
		{
			systemMessage: 's3 editor',
			memoryMode: 'conversation',
			storage: 's3',
			versionedData: true,
			initialData: JSON.stringify(RECORD),
		},
		s3Cred,
	);
	w.main(w.chatTrigger(ON_S3.webhookId), editor);
	const exporter = w.llmMemoryManager(
		'Export',
		{
			resource: 'versionedData',
			operation: 'export',
			storage: 's3',
			conversationIdType: 'customKey',
			conversationId: '={{ $json.body.sessionId }}',
		},
		{ credentials: s3Cred },
	);
	w.main(w.webhook('Export Webhook', 'e2e-vd-export'), exporter);
	return w.json();
}

/** Another workflow (local disk): an Import webhook, and a chat that continues what was imported. */
const IMPORTED = { id: 'e2eVersionsImpo1', webhookId: 'e2e0c0de-0000-4000-8000-00000000d002' };
function importWorkflow() {
	const w = new WorkflowBuilder(IMPORTED.id, 'versioned data imported from another workflow');
	const editor = w.llmWithMemory('Editor', 'e2e-vd-imported', {
		systemMessage: 'imported editor',
		memoryMode: 'conversation',
		versionedData: true,
	});
	w.main(w.chatTrigger(IMPORTED.webhookId), editor);
	const importer = w.llmMemoryManager('Import', {
		resource: 'versionedData',
		operation: 'import',
		exportedConversation: '={{ $json.body }}',
	});
	w.main(w.webhook('Import Webhook', 'e2e-vd-import'), importer);
	return w.json();
}

/** n8n's AI Agent with the LLM Memory Manager as two tools on the example workflow's versioned data. */
const AGENT = { id: 'e2eVersionsAgnt1', webhookId: 'e2e0c0de-0000-4000-8000-00000000d003' };
function agentWorkflow() {
	const w = new WorkflowBuilder(AGENT.id, 'AI Agent asks the LLM Memory Manager about versions');
	const agent = w.agent('Agent', 'versions agent');
	w.main(w.chatTrigger(AGENT.webhookId), agent);
	const common = {
		resource: 'versionedData',
		workflowId: EXAMPLE.id,
		conversationIdType: 'customKey',
		conversationId: "={{ $('When chat message received').item.json.sessionId }}",
		descriptionType: 'manual',
	};
	const history = w.llmMemoryManager(
		'Version History',
		{
			...common,
			operation: 'history',
			returnAll: true,
			options: {
				groupEntries: true,
				createdAfter:
					"={{ $fromAI('createdAfter', 'Only versions saved after this ISO 8601 date and time', 'string') }}",
			},
			toolDescription: 'Lists the versions of the record, newest first: number, summary, when',
		},
		{ asTool: true },
	);
	const diff = w.llmMemoryManager(
		'Version Diff',
		{
			...common,
			operation: 'diff',
			fromVersion: "={{ $fromAI('fromVersion', 'The older version number', 'number') }}",
			toVersion: "={{ $fromAI('toVersion', 'The newer version number', 'number') }}",
			toolDescription: 'What changed between two versions of the record',
		},
		{ asTool: true },
	);
	w.sub(history, 'ai_tool', agent);
	w.sub(diff, 'ai_tool', agent);
	return w.json();
}

/** Versioned data with a Chat Trigger that streams: the answer after a change streams through stream(). */
const STREAMED = { id: 'e2eVersionsStrm1', webhookId: 'e2e0c0de-0000-4000-8000-00000000d004' };
function streamedWorkflow() {
	const w = new WorkflowBuilder(STREAMED.id, 'versioned data, streamed to the chat');
	const editor = w.llmWithMemory('Editor', 'e2e-vd-streamed', {
		systemMessage: 'streamed editor',
		memoryMode: 'node',
		versionedData: true,
		initialData: JSON.stringify(RECORD),
	});
	w.main(w.chatTrigger(STREAMED.webhookId, { responseMode: 'streaming' }), editor);
	return w.json();
}

// --- helpers ---------------------------------------------------------------------------------------

const chat = async (webhookId: string, sessionId: string, chatInput: string) =>
	await sendChat(n8n!.chatUrl(webhookId), { sessionId, chatInput });

async function turn(webhookId: string, sessionId: string, chatInput: string) {
	const r = await chat(webhookId, sessionId, chatInput);
	assert.equal(r.status, 200, r.body);
	return r;
}

async function webhook(pathName: string, body: unknown): Promise<Json> {
	const res = await fetch(`${n8n!.baseUrl}/webhook/${pathName}`, {
		method: 'POST',
		headers: { 'Content-Type': 'application/json' },
		body: JSON.stringify(body),
	});
	const text = await res.text();
	assert.equal(res.status, 200, text);
	return JSON.parse(text);
}

/** The model requests whose system message starts with `tag`. */
const requestsOf = (tag: string): LoggedRequest[] =>
	llm!.completions().filter((r) => contentText(r.body?.messages?.[0]?.content).startsWith(tag));
const rolesOf = (r: LoggedRequest) => (r.body.messages as Json[]).map((m) => m.role).join(',');
const systemOf = (r: LoggedRequest) => contentText(r.body.messages[0].content);
const REPLY = (text: string, r: LoggedRequest, tools = '') =>
	`FAKE-LLM reply to "${text}"${tools} (saw ${r.body.messages.length} messages: ${rolesOf(r)})`;

/** Where the nodes keep memory on Local Disk: this file's folder on the shared n8n (n8n.memoryRoot). */
const disk = () => new LocalDiskStorage({ root: n8n!.memoryRoot });
const versionsOf = (
	appId: string,
	session: string,
	storage: MemoryStorage = disk(),
	keyPrefix?: string,
) => new VersionedData({ storage, appId, conversationId: session, keyPrefix });

/** The data_version of each assistant message of a conversation's chat memory. */
async function turnVersions(
	appId: string,
	session: string,
	storage: MemoryStorage = disk(),
	keyPrefix?: string,
) {
	const messages = await new ConversationMemory(appId, session, { storage, keyPrefix }).messages();
	return messages.filter((m) => m.role === 'assistant').map((m) => m.data_version ?? null);
}

// --- tests -----------------------------------------------------------------------------------------

describe('versioned data on a real n8n', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 }); // first, so after() closes it even when packing fails
		const fake = llm;
		const [tarball, storage] = await Promise.all([packPackage(), rgwStorage()]);
		s3 = storage;
		n8n = await joinSharedN8n({
			tarball,
			credentials: [
				openAiCredential(fake.url),
				// The example's own credential, pointed at the fake server.
				{ ...openAiCredential(fake.url), id: 'llmMemoryModel01', name: 'Chat model endpoint' },
				s3Credential(s3.endpoint!, s3.bucket, RGW_CREDENTIALS),
			],
			workflows: [
				EXAMPLE_FILE,
				s3Workflow(),
				importWorkflow(),
				agentWorkflow(),
				streamedWorkflow(),
			],
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
		(await ensureRgw()).stop();
	});

	it('examples/edit-json-by-chat.json: the seed’s three requests through the Chat Trigger', async () => {
		const tag = 'You keep one cosmetic-ingredient record';
		// 1. Set up: the Initial Data is version 1.
		const t1 = await turn(EXAMPLE_CHAT, 'seed-1', 'Set up data for WATER');
		const [r1] = requestsOf(tag);
		assert.equal(t1.shown, REPLY('Set up data for WATER', r1));
		assert.deepEqual([t1.json.version, t1.json.changed, t1.json.data], [1, false, RECORD]);
		assert.match(systemOf(r1), /^## Working data \(version 1, branch "main"\)$/m);
		assert.deepEqual(
			r1.body.tools.map((t: Json) => t.function.name),
			['update_data'],
			'LangChain’s bindTools offered the tool',
		);
		// 2. "Change category to FRAGRANCE": the model calls update_data, then answers from its result.
		const t2 = await turn(EXAMPLE_CHAT, 'seed-1', TO_FRAGRANCE);
		const [call, answer] = requestsOf(tag).slice(-2);
		assert.equal(rolesOf(call), 'system,user,assistant,user');
		assert.equal(rolesOf(answer), 'system,user,assistant,user,assistant,tool');
		assert.equal(contentText(answer.body.messages.at(-1).content), FRAGRANCE_RESULT);
		assert.equal(t2.shown, REPLY(TO_FRAGRANCE, answer, ` with tool results [${FRAGRANCE_RESULT}]`));
		assert.deepEqual(
			[t2.json.version, t2.json.changed, t2.json.data],
			[2, true, { ...RECORD, category: 'FRAGRANCE' }],
		);
		// 3. "What did I just change?": answered from the version records; no version saved.
		const t3 = await turn(EXAMPLE_CHAT, 'seed-1', 'What did I just change?');
		const r3 = requestsOf(tag).at(-1)!;
		assert.equal(t3.shown, REPLY('What did I just change?', r3));
		assert.deepEqual([t3.json.version, t3.json.changed], [2, false]);
		assert.match(
			systemOf(r3),
			/^## Recent changes \(newest first\)\n- Version 2 \(.+\): Changed category to FRAGRANCE\n {2}- replaced \/category: "OTHERS" → "FRAGRANCE"\n- Version 1 \(.+\): Initial data$/m,
		);

		const dir = path.join(n8n!.memoryRoot, 'versioned_data', EXAMPLE.id, 'seed-1');
		assert.deepEqual(readdirSync(path.join(dir, 'versions')), [
			'0000000001.json',
			'0000000002.json',
		]);
		const v2 = await versionsOf(EXAMPLE.id, 'seed-1').getVersion(2);
		assert.equal(v2.message_id, t2.json.messageId, 'the version names the turn that made it');
		assert.deepEqual(await turnVersions(EXAMPLE.id, 'seed-1'), [
			{ version: 1, branch: 'main', changed: false },
			{ version: 2, branch: 'main', changed: true },
			{ version: 2, branch: 'main', changed: false },
		]);
	});

	it('the example’s History and Rollback webhooks (LLM Memory Manager); the chat then sees the rolled-back data', async () => {
		const history = await webhook('edit-json-history', { sessionId: 'seed-1' });
		assert.deepEqual(
			history.entries.map((e: Json) => [e.version, e.summary]),
			[
				[2, 'Changed category to FRAGRANCE'],
				[1, 'Initial data'],
			],
		);
		const rolled = await webhook('edit-json-rollback', { sessionId: 'seed-1', version: 1 });
		assert.deepEqual(
			[rolled.version, rolled.parent, rolled.summary, rolled.data],
			[3, 2, 'Rolled back to v1', RECORD],
		);
		const t4 = await turn(EXAMPLE_CHAT, 'seed-1', 'What is the category now?');
		assert.deepEqual([t4.json.version, t4.json.data.category], [3, 'OTHERS']);
		const system = systemOf(requestsOf('You keep one').at(-1)!);
		assert.match(system, /^## Working data \(version 3, branch "main"\)$/m);
		assert.match(
			system,
			/^- Version 3 \(.+\): Rolled back to v1\n {2}- replaced \/category: "FRAGRANCE" → "OTHERS"$/m,
		);
	});

	it('a patch that breaks the example’s JSON Schema saves nothing and fails the chat turn, naming the field', async () => {
		await turn(EXAMPLE_CHAT, 'schema-1', 'Set up data for WATER');
		const bad = patchMessage(
			'Set category to 7',
			[{ op: 'replace', path: '/category', value: 7 }],
			'x',
		);
		const r = await chat(EXAMPLE_CHAT, 'schema-1', bad);
		assert.equal(r.status, 500, r.body);
		const failed = await waitFor(() =>
			n8n!
				.events()
				.find(
					(e) =>
						e.eventName === 'n8n.workflow.failed' &&
						e.payload?.workflowId === EXAMPLE.id &&
						String(e.payload?.errorMessage).includes('JSON Schema'),
				),
		);
		assert.equal(
			failed.payload.errorMessage,
			'Data does not match the JSON Schema: /category: must be string',
		);
		assert.equal((await versionsOf(EXAMPLE.id, 'schema-1').getCurrent())?.version, 1);
		assert.deepEqual(await turnVersions(EXAMPLE.id, 'schema-1'), [
			{ version: 1, branch: 'main', changed: false },
		]);
	});

	it('offline: the demo model answers plain change instructions with update_data; the example saves each as a version', async () => {
		const tag = 'You keep one cosmetic-ingredient record';
		await turn(EXAMPLE_CHAT, 'offline-1', 'Set up data for WATER');
		// No [[fake:…]] marker: the demo model reads the instruction and the working data itself.
		const t2 = await turn(EXAMPLE_CHAT, 'offline-1', 'Change category to FRAGRANCE');
		const [call, answer] = requestsOf(tag).slice(-2);
		assert.equal(rolesOf(call), 'system,user,assistant,user');
		assert.equal(contentText(answer.body.messages.at(-1).content), FRAGRANCE_RESULT);
		assert.deepEqual(
			[t2.json.version, t2.json.changed, t2.json.data],
			[2, true, { ...RECORD, category: 'FRAGRANCE' }],
		);
		const t3 = await turn(
			EXAMPLE_CHAT,
			'offline-1',
			'please set the notes to "keep away from light".',
		);
		assert.deepEqual(
			[t3.json.version, t3.json.changed, t3.json.data.notes],
			[3, true, 'keep away from light'],
		);
		const t4 = await turn(EXAMPLE_CHAT, 'offline-1', 'What did I just change?');
		assert.deepEqual([t4.json.version, t4.json.changed], [3, false]);
		const { entries } = await versionsOf(EXAMPLE.id, 'offline-1').history({ limit: 10 });
		assert.deepEqual(
			entries.map((e) => [e.version, e.summary]),
			[
				[3, 'Changed notes to keep away from light'],
				[2, 'Changed category to FRAGRANCE'],
				[1, 'Initial data'],
			],
		);
	});

	it('S3 (radosgw): versions and chat memory on S3; a patch that does not apply saves nothing', async () => {
		await turn(ON_S3.webhookId, 's3-1', 'Set up data for WATER');
		const t2 = await turn(ON_S3.webhookId, 's3-1', TO_FRAGRANCE);
		assert.deepEqual([t2.json.version, t2.json.changed], [2, true]);
		const before = requestsOf('s3 editor').length;
		const bad = patchMessage(
			'Set the colour',
			[{ op: 'replace', path: '/colour', value: 'blue' }],
			'Colour',
		);
		const r = await chat(ON_S3.webhookId, 's3-1', bad);
		assert.equal(r.status, 500, r.body);
		assert.deepEqual(r.json, { message: 'Error in workflow' });
		assert.equal(
			requestsOf('s3 editor').length,
			before + 1,
			'no answer call after the failed change',
		);
		const failed = await waitFor(() =>
			n8n!
				.events()
				.find((e) => e.eventName === 'n8n.workflow.failed' && e.payload?.workflowId === ON_S3.id),
		);
		assert.equal(
			failed.payload.errorMessage,
			'JSON Patch operation 0 (replace "/colour") failed: "/colour" does not exist',
		);
		const keys = (await s3.list(`n8n/versioned_data/${ON_S3.id}/s3-1/`)).map((o) => o.key).sort();
		assert.deepEqual(keys, [
			`n8n/versioned_data/${ON_S3.id}/s3-1/branches/main.json`,
			`n8n/versioned_data/${ON_S3.id}/s3-1/counter.json`,
			`n8n/versioned_data/${ON_S3.id}/s3-1/versions/0000000001.json`,
			`n8n/versioned_data/${ON_S3.id}/s3-1/versions/0000000002.json`,
		]);
		assert.deepEqual(await turnVersions(ON_S3.id, 's3-1', s3, 'n8n'), [
			{ version: 1, branch: 'main', changed: false },
			{ version: 2, branch: 'main', changed: true },
		]);
	});

	it('Export from one workflow (S3) and Import into another (local disk): the chat continues there at version 2', async () => {
		const exported = await webhook('e2e-vd-export', { sessionId: 's3-1' });
		assert.equal(exported.format, 'n8n-nodes-llm-memory/conversation');
		assert.deepEqual(
			exported.versionedData.versions.map((v: Json) => v.summary),
			['Initial data', 'Changed category to FRAGRANCE'],
		);
		const imported = await webhook('e2e-vd-import', exported);
		assert.deepEqual(
			[imported.workflowId, imported.conversationId, imported.versions, imported.branches],
			[IMPORTED.id, 's3-1', 2, 1],
		);
		assert.equal(imported.memory.messages, 4);
		const t = await turn(IMPORTED.webhookId, 's3-1', 'What did I just change?');
		assert.deepEqual(
			[t.json.version, t.json.changed, t.json.data.category],
			[2, false, 'FRAGRANCE'],
		);
		const r = requestsOf('imported editor').at(-1)!;
		assert.match(systemOf(r), /- Version 2 \(.+\): Changed category to FRAGRANCE\n {2}- replaced/);
		assert.equal(
			rolesOf(r),
			'system,user,assistant,user,assistant,user',
			'the chat memory came too',
		);
		assert.equal(
			(await versionsOf(IMPORTED.id, 's3-1').getVersion(2)).message_id,
			(await versionsOf(ON_S3.id, 's3-1', s3, 'n8n').getVersion(2)).message_id,
		);
	});

	it('the LLM Memory Manager as an AI Agent tool: "what did I change since yesterday?" calls History and Diff', async () => {
		const yesterday = new Date(Date.now() - 86_400_000).toISOString();
		const question =
			`what did I change since yesterday? [[fake:tool=Version History:${JSON.stringify({ createdAfter: yesterday })}]]` +
			` [[fake:tool=Version Diff:${JSON.stringify({ fromVersion: 1, toVersion: 2 })}]]`;
		const r = await turn(AGENT.webhookId, 'seed-1', question);
		const [call, answer] = requestsOf('versions agent').slice(-2);
		assert.deepEqual(call.body.tools.map((t: Json) => t.function.name).sort(), [
			'Version_Diff',
			'Version_History',
		]);
		const results = (answer.body.messages as Json[])
			.filter((m) => m.role === 'tool')
			.map((m) => JSON.parse(contentText(m.content)));
		const [history, diff] = results.map((x) => (Array.isArray(x) ? x[0] : x));
		assert.deepEqual(
			history.entries.map((e: Json) => [e.version, e.summary]),
			[
				[3, 'Rolled back to v1'],
				[2, 'Changed category to FRAGRANCE'],
				[1, 'Initial data'],
			],
		);
		assert.deepEqual([diff.from, diff.to, diff.changes], [1, 2, [FRAGRANCE_LINE]]);
		assert.match(
			r.shown ?? '',
			/^FAKE-LLM reply to "what did I change since yesterday\? .*" with tool results \[/,
		);
		// n8n's agent sends the two calls' results back one after another; the answer quotes the last (Diff).
		assert.ok(r.shown?.includes(JSON.stringify([FRAGRANCE_LINE])), r.shown);
	});

	it('streaming: a question streams as one piece, the answer after a change streams piece by piece; the change is saved', async () => {
		const url = n8n!.chatUrl(STREAMED.webhookId);
		const q = await sendChatStream(url, { sessionId: 'st-1', chatInput: 'What is the INCI?' });
		const first = requestsOf('streamed editor').at(-1)!;
		assert.equal(q.text, REPLY('What is the INCI?', first));
		assert.deepEqual(
			q.chunks.map((c) => c.type),
			['begin', 'item', 'end'],
		);
		const t = await sendChatStream(url, { sessionId: 'st-1', chatInput: TO_FRAGRANCE });
		const [call, answer] = requestsOf('streamed editor').slice(-2);
		assert.deepEqual([call.body.stream ?? false, answer.body.stream], [false, true]);
		assert.equal(t.text, REPLY(TO_FRAGRANCE, answer, ` with tool results [${FRAGRANCE_RESULT}]`));
		const types = t.chunks.map((c) => c.type);
		assert.deepEqual([types[0], types.at(-1)], ['begin', 'end']);
		assert.ok(types.filter((x) => x === 'item').length > 1, JSON.stringify(t.chunks));
		const current = await versionsOf(STREAMED.id, 'st-1').getCurrent();
		assert.deepEqual([current?.version, current?.summary], [2, 'Changed category to FRAGRANCE']);
	});

	it('the n8n log shows no unknown node types and no leaked secret', () => {
		const log = n8n!.log();
		assert.doesNotMatch(log, /Unrecognized node type/);
		assert.ok(!log.includes(RGW_CREDENTIALS.secretAccessKey));
	});
});
