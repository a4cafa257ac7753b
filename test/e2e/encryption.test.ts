/**
 * Encryption at rest on a real n8n (N8N_VERSION; scripts/test.sh runs 2.8.4 and 2.40.7): a chat with
 * LLM with Memory, Encryption on with key A, leaves no plaintext on disk; another workflow on the same
 * n8n that knows the workflow and session IDs reads nothing without the key credential (an error naming
 * the key ID, without the secret), nothing with another key, and everything with key A. The model is
 * the local fake OpenAI server (the only stand-in).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi } from '../../demo/model-server';
import { parseEncryptionKey } from '../../src/internal';
import { WorkflowBuilder } from '../support/agent-workflows';
import { sendChat } from '../support/chat';
import { packPackage } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import { openAiCredential } from '../support/workflows';
import { expanded } from '../support/stored-segments';

type Json = Record<string, any>;

const SECRET = 'Encrypted-Secret-6081';
const KEY_A = randomBytes(32).toString('base64');
const KEY_B = randomBytes(32).toString('base64');
const keyCredential = (id: string, name: string, key: string): Json => ({
	id,
	name,
	type: 'llmMemoryEncryptionKeyApi',
	data: { key, olderKeys: '' },
});
const CRED_A = { id: 'e2eMemoryKeyA001', name: 'Memory key A' };
const CRED_B = { id: 'e2eMemoryKeyB001', name: 'Memory key B' };

const CHAT = { id: 'e2eEncryptChat01', webhookId: 'e2e0c0de-0000-4000-8000-0000000en001' };
function chatWorkflow(): Json {
	const w = new WorkflowBuilder(CHAT.id, 'encryption: chat');
	const node = w.llmWithMemory(
		'LLM',
		'encrypt-llm',
		{ systemMessage: 'encrypted bot', encryption: 'key' },
		{ llmMemoryEncryptionKeyApi: CRED_A },
	);
	w.main(w.chatTrigger(CHAT.webhookId), node);
	return w.json();
}

/** Three readers of the chat's memory: no key, key B, key A (another workflow, same IDs). */
const READER = { id: 'e2eEncryptRead01' };
function readerWorkflow(): Json {
	const w = new WorkflowBuilder(READER.id, 'encryption: readers');
	const read = {
		resource: 'conversationMemory',
		operation: 'getMessages',
		returnAll: true,
		workflowId: CHAT.id,
		conversationIdType: 'customKey',
		conversationId: '={{ $json.body.sessionId }}',
		memoryMode: 'conversation',
	};
	const readers: Array<[string, Json, Json | undefined]> = [
		['no-key', {}, undefined],
		['key-b', { encryption: 'key' }, { llmMemoryEncryptionKeyApi: CRED_B }],
		['key-a', { encryption: 'key' }, { llmMemoryEncryptionKeyApi: CRED_A }],
	];
	for (const [path, extra, credentials] of readers) {
		const name = `Read ${path}`;
		w.add({
			name,
			type: 'n8n-nodes-llm-memory.llmMemoryManager',
			typeVersion: 1.1,
			parameters: { ...read, ...extra, options: { groupMessages: true } },
			...(credentials ? { credentials } : {}),
		});
		w.main(w.webhook(`${name} Webhook`, `e2e-encrypt-${path}`), name);
	}
	const json = w.json();
	// An error becomes the item (On Error → Continue), so the webhook answers with it.
	for (const n of json.nodes as Json[])
		if (n.type === 'n8n-nodes-llm-memory.llmMemoryManager') n.onError = 'continueRegularOutput';
	return json;
}

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;

async function read(path: string): Promise<Json> {
	const res = await fetch(`${n8n!.baseUrl}/webhook/e2e-encrypt-${path}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ sessionId: 's1' }),
	});
	const text = await res.text();
	assert.equal(res.status, 200, text);
	return JSON.parse(text);
}

function memoryFiles(): Buffer[] {
	const root = n8n!.memoryRoot;
	return readdirSync(root, { recursive: true, encoding: 'utf8' })
		.map((f) => path.join(root, f))
		.filter((f) => statSync(f).isFile())
		.map((f) => expanded(readFileSync(f)));
}

describe('Encryption at rest on a real n8n', () => {
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 });
		n8n = await joinSharedN8n({
			tarball: await packPackage(),
			credentials: [
				openAiCredential(llm.url),
				keyCredential(CRED_A.id, CRED_A.name, KEY_A),
				keyCredential(CRED_B.id, CRED_B.name, KEY_B),
			],
			workflows: [chatWorkflow(), readerWorkflow()],
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
	});

	it('the chat works, and no stored byte holds the secret', async () => {
		for (const text of [`my code is ${SECRET}`, 'what is my code?']) {
			const r = await sendChat(n8n!.chatUrl(CHAT.webhookId), { sessionId: 's1', chatInput: text });
			assert.equal(r.status, 200, r.body);
		}
		const last = llm!.completions().at(-1)!;
		assert.match(
			JSON.stringify(last.body.messages),
			new RegExp(SECRET),
			'history reached the model',
		);
		const files = memoryFiles();
		assert.ok(files.length > 0);
		for (const bytes of files) assert.ok(!bytes.includes(SECRET), 'plaintext on disk');
	});

	it('a workflow without the key credential, or with another key, reads nothing; with it, everything', async () => {
		const keyA = parseEncryptionKey(KEY_A).id;
		for (const path of ['no-key', 'key-b']) {
			const out = await read(path);
			const error = JSON.stringify(out);
			assert.match(error, new RegExp(`encrypted with key ${keyA}`), error);
			assert.ok(!error.includes(SECRET), 'the error holds no plaintext');
			assert.equal(out.messages, undefined);
		}
		const ok = await read('key-a');
		assert.equal(ok.total, 4);
		assert.match(JSON.stringify(ok.messages), new RegExp(SECRET));
	});
});
