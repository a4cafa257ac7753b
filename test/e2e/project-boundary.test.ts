/**
 * The encryption key credential is the line between n8n projects, on a real n8n (N8N_VERSION;
 * scripts/test.sh runs 2.8.4 and 2.40.7). Two users, each with the personal project n8n 2.x gives every
 * user (team projects need a licence; personal projects do not): the owner, and a member invited and
 * signed up through n8n's REST API (no SMTP: n8n answers the invitation with its link).
 *
 * - The owner's chat workflow (LLM with Memory, Encryption = Encrypt with a Key, local disk, the default
 *   folder) writes a conversation holding a secret; the key credential lives in the owner's project.
 * - The member cannot see the credential, list it or find it among those a workflow may use.
 * - The member's own workflows, created and published through the REST API as the member, read the same
 *   storage with the same workflow and conversation IDs (LLM Memory Manager, Workflow ID set to the
 *   owner's): without a key, and with the member's own key credential, each run fails with the error
 *   naming the key ID (never empty, no plaintext); a workflow naming the owner's credential by its ID is
 *   stopped by n8n before any node runs, because the member's project may not use it. (Without a sharing
 *   licence n8n does not check credentials when a workflow is saved or published, only before each run:
 *   so the member can save that workflow, and the refused run is what the test asserts.)
 * - Not one stored byte changes, none holds the secret, and the owner still reads the whole history.
 *
 * Outcomes are read from n8n's executions API as the member. The model is the local fake OpenAI server
 * (the only stand-in).
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi } from '../../demo/model-server';
import { parseEncryptionKey } from '../../src/internal';
import { WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import { unflatten, waitFor } from '../support/n8n-executions';
import { packPackage, runScript, startN8n } from '../support/n8n-harness';
import type { N8nInstance } from '../support/n8n-harness';
import { RestSession } from '../support/n8n-users';
import { openAiCredential } from '../support/workflows';
import { expanded } from '../support/stored-segments';

type Json = Record<string, any>;

const SECRET = 'Project-Secret-4127';
const SESSION = 'p1';
const OWNER_KEY = randomBytes(32).toString('base64');
const MEMBER_KEY = randomBytes(32).toString('base64');
const KEY_TYPE = 'llmMemoryEncryptionKeyApi';
const OWNER_CRED = { id: 'e2eProjKeyOwner1', name: 'Owner memory key' };

const CHAT = { id: 'e2eProjectChat01', webhookId: 'e2e0c0de-0000-4000-8000-00000proj001' };
function chatWorkflow(): Json {
	const w = new WorkflowBuilder(CHAT.id, 'projects: owner chat');
	const node = w.llmWithMemory(
		'LLM',
		'project-llm',
		{ systemMessage: 'project bot', encryption: 'key' },
		{ [KEY_TYPE]: OWNER_CRED },
	);
	w.main(w.chatTrigger(CHAT.webhookId), node);
	return w.json();
}

/** A reader of the owner's conversation: the same storage and IDs, its own encryption setting. */
interface Reader {
	path: string;
	encryption: 'none' | 'key';
	credential?: { id: string; name: string };
}

/** Webhook → LLM Memory Manager (Get Messages) per reader; a failing read fails the run. */
function readerWorkflow(id: string, name: string, readers: Reader[]): Json {
	const w = new WorkflowBuilder(id, name);
	for (const r of readers) {
		const node = w.llmMemoryManager(
			`Read ${r.path}`,
			{
				resource: 'conversationMemory',
				operation: 'getMessages',
				returnAll: true,
				workflowId: CHAT.id,
				conversationIdType: 'customKey',
				conversationId: SESSION,
				memoryMode: 'conversation',
				storage: 'localDisk',
				localFolder: '',
				encryption: r.encryption,
				options: { groupMessages: true },
			},
			{ typeVersion: 1.1, credentials: r.credential ? { [KEY_TYPE]: r.credential } : undefined },
		);
		w.main(w.webhook(`${node} Webhook`, r.path), node);
	}
	return w.json();
}

const OWNER_READER = { id: 'e2eProjOwnerRd01', path: 'e2e-project-owner-read' };

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;
let owner: RestSession;
let member: RestSession;
let ownerProject: Json;
let memberProject: Json;
let memberCred: { id: string; name: string };
/** The member's workflow that reads without the key and with its own key. */
let memberReaders: string;

function memoryFiles(): Map<string, Buffer> {
	const root = path.join(n8n!.userFolder, '.n8n/llm-memory');
	const files = new Map<string, Buffer>();
	for (const f of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
		const file = path.join(root, f);
		if (statSync(file).isFile()) files.set(f, expanded(readFileSync(file)));
	}
	return files;
}

/** Path → SHA-256 of every stored file: what "nothing changed" is compared on. */
function fingerprint(): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [f, bytes] of memoryFiles()) out[f] = createHash('sha256').update(bytes).digest('hex');
	return out;
}

async function ownerReads(): Promise<Json> {
	const res = await fetch(`${n8n!.baseUrl}/webhook/${OWNER_READER.path}`, { method: 'POST' });
	const text = await res.text();
	assert.equal(res.status, 200, text);
	return JSON.parse(text);
}

/** Creates and publishes a workflow as the member (it lands in the member's personal project). */
async function memberWorkflow(json: Json): Promise<Json> {
	const body = { ...json };
	delete body.id; // n8n gives the member's workflow its ID
	const created = await member.call('POST', '/rest/workflows', body);
	await member.call('POST', `/rest/workflows/${created.id}/activate`, {
		versionId: created.versionId,
	});
	// n8n 2.40.7 registers the webhooks a moment after it answers.
	for (const node of body.nodes as Json[])
		if (node.type === 'n8n-nodes-base.webhook')
			await runScript(
				['wait-webhook', `${n8n!.baseUrl}/webhook/${node.parameters.path}`, n8n!.userFolder],
				{ timeoutMs: 150_000 },
			);
	return created;
}

/**
 * Calls a member workflow's webhook and returns the execution it made, as the member reads it from the
 * executions API (summary fields plus its run data), with the webhook's answer.
 */
async function runAsMember(workflowId: string, webhookPath: string): Promise<Json> {
	const list = async () =>
		(await member.call(
			'GET',
			`/rest/executions?filter=${encodeURIComponent(JSON.stringify({ workflowId }))}`,
		)) as { results: Json[] };
	const before = new Set((await list()).results.map((e) => String(e.id)));
	const res = await fetch(`${n8n!.baseUrl}/webhook/${webhookPath}`, { method: 'POST' });
	const answer = { status: res.status, text: await res.text() };
	const summary = await waitFor(async () =>
		(await list()).results.find(
			(e) => !before.has(String(e.id)) && !['new', 'running'].includes(e.status),
		),
	);
	const execution = await member.call('GET', `/rest/executions/${summary.id}`);
	return { ...summary, runData: await unflatten(execution.data), answer };
}

describe('The key credential is the boundary between n8n projects', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 });
		n8n = await startN8n({
			tarball: await packPackage(),
			credentials: [
				openAiCredential(llm.url),
				{ ...OWNER_CRED, type: KEY_TYPE, data: { key: OWNER_KEY, olderKeys: '' } },
			],
			workflows: [
				chatWorkflow(),
				readerWorkflow(OWNER_READER.id, 'projects: owner reader', [
					{ path: OWNER_READER.path, encryption: 'key', credential: OWNER_CRED },
				]),
			],
		});
		owner = await RestSession.owner(n8n.baseUrl);
		member = await owner.addMember();
		ownerProject = await owner.call('GET', '/rest/projects/personal');
		memberProject = await member.call('GET', '/rest/projects/personal');
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
	});

	it('the key credential belongs to the owner’s personal project; the member cannot see or list it', async () => {
		assert.deepEqual([ownerProject.type, memberProject.type], ['personal', 'personal']);
		assert.notEqual(ownerProject.id, memberProject.id);

		const ownerCreds = (await owner.call('GET', '/rest/credentials')) as Json[];
		const key = ownerCreds.find((c) => c.id === OWNER_CRED.id);
		assert.ok(key, 'the owner lists the key credential');
		assert.equal(key.homeProject?.id, ownerProject.id);

		const listed = (await member.call('GET', '/rest/credentials')) as Json[];
		assert.ok(!listed.some((c) => c.id === OWNER_CRED.id), 'the member lists it');
		const usable = (await member.call(
			'GET',
			`/rest/credentials/for-workflow?projectId=${memberProject.id}`,
		)) as Json[];
		assert.ok(!usable.some((c) => c.id === OWNER_CRED.id), 'offered to the member’s workflows');
		const direct = await member.request(
			'GET',
			`/rest/credentials/${OWNER_CRED.id}?includeData=true`,
		);
		assert.ok([403, 404].includes(direct.status), `${direct.status} ${direct.text}`);
		assert.ok(!direct.text.includes(OWNER_KEY));
		const chat = await member.request('GET', `/rest/workflows/${CHAT.id}`);
		assert.ok(
			[403, 404].includes(chat.status),
			`the member opens the owner’s workflow: ${chat.text}`,
		);

		const created = await member.call('POST', '/rest/credentials', {
			name: 'Member memory key',
			type: KEY_TYPE,
			data: { key: MEMBER_KEY, olderKeys: '' },
		});
		memberCred = { id: String(created.id), name: String(created.name) };
		const own = ((await member.call('GET', '/rest/credentials')) as Json[]).find(
			(c) => c.id === memberCred.id,
		);
		assert.equal(own?.homeProject?.id, memberProject.id);
	});

	it('the owner’s chat stores its history encrypted, and the owner reads it', async () => {
		for (const text of [`my code is ${SECRET}`, 'what is my code?']) {
			const r = await sendChat(n8n!.chatUrl(CHAT.webhookId), {
				sessionId: SESSION,
				chatInput: text,
			});
			assert.equal(r.status, 200, r.body);
		}
		const files = memoryFiles();
		assert.ok(files.size > 0);
		for (const [f, bytes] of files) assert.ok(!bytes.includes(SECRET), `plaintext in ${f}`);
		const read = await ownerReads();
		assert.equal(read.total, 4);
		assert.match(JSON.stringify(read.messages), new RegExp(SECRET));
	});

	it('a member workflow with the same IDs, without the key or with its own key, fails naming the key; nothing changes', async () => {
		const stored = fingerprint();
		const wf = await memberWorkflow(
			readerWorkflow('member-readers', 'projects: member readers', [
				{ path: 'e2e-project-member-nokey', encryption: 'none' },
				{ path: 'e2e-project-member-ownkey', encryption: 'key', credential: memberCred },
			]),
		);
		assert.equal(wf.homeProject?.id, memberProject.id);
		memberReaders = wf.id;
		const keyId = parseEncryptionKey(OWNER_KEY).id;
		assert.notEqual(parseEncryptionKey(MEMBER_KEY).id, keyId);
		for (const [webhook, node] of [
			['e2e-project-member-nokey', 'Read e2e-project-member-nokey'],
			['e2e-project-member-ownkey', 'Read e2e-project-member-ownkey'],
		]) {
			const run = await runAsMember(wf.id, webhook);
			assert.equal(run.status, 'error', JSON.stringify(run));
			assert.equal(run.answer.status, 500, run.answer.text);
			const error = run.runData.resultData?.error;
			assert.equal(error?.node?.name, node);
			assert.match(String(error?.message), new RegExp(`encrypted with key ${keyId}`));
			assert.match(String(error?.message), /left untouched/);
			const all = JSON.stringify(run.runData);
			for (const secret of [SECRET, OWNER_KEY, MEMBER_KEY])
				assert.ok(!all.includes(secret), 'the execution holds no plaintext and no key');
			assert.deepEqual(fingerprint(), stored, 'stored bytes changed');
		}
	});

	it('a member workflow naming the owner’s key credential is stopped by n8n: the member’s project may not use it', async () => {
		const stored = fingerprint();
		const json = readerWorkflow('member-borrower', 'projects: member borrows the key', [
			{ path: 'e2e-project-member-borrow', encryption: 'key', credential: OWNER_CRED },
		]);
		const wf = await memberWorkflow(json);
		// The execution tells; the webhook's answer does not (n8n 2.8.4 answers 200, "no data was returned").
		const run = await runAsMember(wf.id, 'e2e-project-member-borrow');
		assert.equal(run.status, 'error', JSON.stringify(run));
		assert.ok(!run.answer.text.includes(SECRET));
		const error = run.runData.resultData?.error;
		assert.match(
			String(error?.message),
			/Node "Read e2e-project-member-borrow" does not have access to the credential/,
		);
		// Refused before any node ran, not even the trigger: n8n records the refusal on the node it names
		// (no output), and its event log has no node start for this workflow.
		const runs = run.runData.resultData?.runData ?? {};
		assert.deepEqual(Object.keys(runs), ['Read e2e-project-member-borrow']);
		assert.deepEqual(
			runs['Read e2e-project-member-borrow'].map((r: Json) => [r.executionTime, r.data]),
			[[0, undefined]],
		);
		const started = (workflowId: string) =>
			n8n!
				.events()
				.filter((e) => e.eventName === 'n8n.node.started' && e.payload?.workflowId === workflowId);
		assert.ok(started(memberReaders).length > 0, 'the event log names the nodes a run starts');
		assert.deepEqual(started(wf.id), []);
		assert.ok(!JSON.stringify(run.runData).includes(SECRET));
		assert.deepEqual(fingerprint(), stored, 'stored bytes changed');
	});

	it('afterwards no stored byte holds the secret, and the owner still reads the whole history', async () => {
		for (const [f, bytes] of memoryFiles()) assert.ok(!bytes.includes(SECRET), `plaintext in ${f}`);
		const read = await ownerReads();
		assert.equal(read.total, 4);
		assert.match(JSON.stringify(read.messages), new RegExp(SECRET));
		const r = await sendChat(n8n!.chatUrl(CHAT.webhookId), {
			sessionId: SESSION,
			chatInput: 'remind me of my code',
		});
		assert.equal(r.status, 200, r.body);
		const last = llm!.completions().at(-1)!;
		assert.match(
			JSON.stringify(last.body.messages),
			new RegExp(SECRET),
			'history reached the model',
		);
	});
});
