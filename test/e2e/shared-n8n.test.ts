/**
 * One n8n shared by test files (test/support/shared-n8n.ts): each file stays apart. Tenants joined from
 * this file give their credentials the same ID, their chat the same session ID and their nodes the
 * default folder, as separate test files do; each must still reach its own model server, keep memory in
 * its own folder, see only its own executions in events(), and lose its webhooks when it stops. A
 * workflow ID another tenant took, or a credential reference n8n would resolve by name to another
 * tenant's credential, fails the join.
 *
 * In the suite the tenants join the version's shared n8n (E2E_SHARED_N8N); run on its own, the file
 * starts an n8n of its own to share on E2E_N8N_PORT first.
 *
 *   N8N_VERSION=2.40.7 node --import tsx --test test/e2e/shared-n8n.test.ts
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi } from '../../demo/model-server';
import { sendChat } from '../support/chat';
import { joinSharedN8n, startSharedN8n } from '../support/shared-n8n';
import { packPackage } from '../support/n8n-harness';
import type { N8nInstance } from '../support/n8n-harness';
import { waitFor } from '../support/n8n-executions';
import { chatWorkflow, openAiCredential } from '../support/workflows';

const A = { id: 'e2eSharedTenA001', webhookId: 'e2e0c0de-0000-4000-8000-0000shared0a1' };
const B = { id: 'e2eSharedTenB001', webhookId: 'e2e0c0de-0000-4000-8000-0000shared0b1' };
const SESSION = 'shared-s1';

const workflow = (wf: typeof A, tag: string) =>
	chatWorkflow({
		...wf,
		name: `shared n8n: tenant ${tag}`,
		llms: [
			{
				name: 'LLM',
				id: `shared-llm-${tag}`,
				parameters: { memoryMode: 'conversation', systemMessage: `tenant ${tag}` },
			},
		],
	});

let ownN8n: { dir: string; stop: () => Promise<void> } | undefined;
let fakeA: FakeOpenAi | undefined;
let fakeB: FakeOpenAi | undefined;
let a: N8nInstance | undefined;
let b: N8nInstance | undefined;

const conversationFile = (n8n: N8nInstance, wf: typeof A) =>
	path.join(n8n.memoryRoot, 'conversation_memory', wf.id, `${SESSION}.json`);

describe('one n8n shared by test files: each stays apart', () => {
	before(async () => {
		const tarball = await packPackage();
		if (!process.env.E2E_SHARED_N8N) {
			const dir = mkdtempSync(path.join(tmpdir(), 'n8n-shared-'));
			const started = await startSharedN8n({ dir, tarball });
			ownN8n = { dir, stop: started.stop };
			process.env.E2E_SHARED_N8N = dir;
		}
		[fakeA, fakeB] = await Promise.all([
			startFakeOpenAi({ port: 0 }),
			startFakeOpenAi({ port: 0 }),
		]);
		// The same credential ID and name in both, as every test file's openAiCredential() has.
		a = await joinSharedN8n({
			tarball,
			credentials: [openAiCredential(fakeA.url)],
			workflows: [workflow(A, 'A')],
		});
		b = await joinSharedN8n({
			tarball,
			credentials: [{ ...openAiCredential(fakeB.url), name: 'shared n8n tenant B model' }],
			workflows: [workflow(B, 'B')],
		});
	});

	after(async () => {
		await a?.stop();
		await b?.stop();
		await fakeA?.close();
		await fakeB?.close();
		if (ownN8n) {
			delete process.env.E2E_SHARED_N8N;
			await ownN8n.stop();
			if (!process.env.E2E_KEEP) rmSync(ownN8n.dir, { recursive: true, force: true });
		}
	});

	it('one n8n, two folders', () => {
		assert.equal(a!.baseUrl, b!.baseUrl);
		assert.equal(a!.userFolder, b!.userFolder);
		assert.notEqual(a!.memoryRoot, b!.memoryRoot);
		assert.ok(!a!.memoryRoot.startsWith(b!.memoryRoot) && !b!.memoryRoot.startsWith(a!.memoryRoot));
	});

	it('each tenant’s workflow calls its own credential’s model server and keeps memory in its own folder', async () => {
		const ra = await sendChat(a!.chatUrl(A.webhookId), {
			sessionId: SESSION,
			chatInput: 'hello A',
		});
		assert.equal(ra.status, 200, ra.body);
		const rb = await sendChat(b!.chatUrl(B.webhookId), {
			sessionId: SESSION,
			chatInput: 'hello B',
		});
		assert.equal(rb.status, 200, rb.body);
		const systems = (fake: FakeOpenAi) =>
			fake.completions().map((r) => r.body?.messages?.[0]?.content as string);
		assert.deepEqual(systems(fakeA!), ['tenant A']);
		assert.deepEqual(systems(fakeB!), ['tenant B']);

		const stored = (file: string) => JSON.stringify(JSON.parse(readFileSync(file, 'utf8')));
		assert.match(stored(conversationFile(a!, A)), /hello A/);
		assert.match(stored(conversationFile(b!, B)), /hello B/);
		assert.ok(!existsSync(path.join(b!.memoryRoot, 'conversation_memory', A.id)));
		assert.ok(!existsSync(path.join(a!.memoryRoot, 'conversation_memory', B.id)));
		// Nothing in the n8n's own default folder: every node was given its tenant's folder.
		assert.ok(!existsSync(path.join(a!.userFolder, '.n8n/llm-memory/conversation_memory', A.id)));
	});

	it('events() holds only the tenant’s own executions', async () => {
		const finished = (n8n: N8nInstance) =>
			n8n.events().filter((e) => e.eventName === 'n8n.workflow.success');
		await waitFor(() => (finished(a!).length && finished(b!).length ? true : undefined));
		assert.deepEqual([...new Set(a!.events().map((e) => e.payload?.workflowId))], [A.id]);
		assert.deepEqual([...new Set(b!.events().map((e) => e.payload?.workflowId))], [B.id]);
	});

	it('a workflow ID another tenant took fails the join', async () => {
		await assert.rejects(
			joinSharedN8n({
				credentials: [openAiCredential(fakeA!.url)],
				workflows: [{ ...workflow(A, 'C'), name: 'shared n8n: a second A' }],
			}),
			/exists already/,
		);
	});

	it('a credential reference n8n would resolve by name to another tenant’s credential fails the join', async () => {
		const wf = workflow(
			{ id: 'e2eSharedTenD001', webhookId: 'e2e0c0de-0000-4000-8000-0000shared0d1' },
			'D',
		);
		// No credential given: the reference names tenant B's credential, whose name is unique.
		for (const node of wf.nodes)
			if (node.credentials?.openAiApi)
				node.credentials.openAiApi = { id: 'e2eNotGiven00001', name: 'shared n8n tenant B model' };
		await assert.rejects(
			joinSharedN8n({ workflows: [wf] }),
			/resolved a credential reference of workflow e2eSharedTenD001 otherwise than given/,
		);
		assert.equal(fakeB!.completions().length, 1, 'tenant B’s model was not called');
	});

	it('stop() deactivates the tenant’s workflows: its webhook stops answering, the other’s does not', async () => {
		await a!.stop();
		const chatPage = async (n8n: N8nInstance, wf: typeof A) =>
			(await fetch(n8n.chatUrl(wf.webhookId), { signal: AbortSignal.timeout(10_000) })).status;
		assert.equal(await chatPage(b!, B), 200);
		assert.equal(
			await waitFor(async () => ((await chatPage(a!, A)) === 404 ? 404 : undefined)),
			404,
		);
		assert.ok(!existsSync(a!.memoryRoot), 'the tenant’s folder is deleted');
	});
});
