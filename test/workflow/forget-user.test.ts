// Forget User through n8n (in-process WorkflowExecute): LLM with Memory with Long-Term Memory keeps a
// user's chat and captures it; the LLM Memory Manager's Forget User then leaves no stored byte with
// the user's secret, and another user's memory in place. Plain and with Encryption. The model is the
// scripted stand-in.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';

import type { INodeParameters } from 'n8n-workflow';

import { chat, nodeTypes, workflow } from '../support/manager-workflows';
import { scriptedModelLog } from '../support/scripted-model';
import { tempDir } from '../support/storages';
import { runWorkflow } from '../support/workflow-harness';
import type { WorkflowJson } from '../support/workflow-harness';
import { expanded } from '../support/stored-segments';

type Json = Record<string, any>;

const SECRET = 'Forget-Me-5521';
const OTHER = 'Keep-Me-1208';

const holds = (root: string, secret: string) =>
	readdirSync(root, { recursive: true, encoding: 'utf8' })
		.map((f) => path.join(root, f))
		.filter((f) => statSync(f).isFile())
		.some((f) => expanded(readFileSync(f)).includes(secret));

afterEach(() => scriptedModelLog.clear());

describe('LLM Memory Manager: Forget User', () => {
	for (const encrypted of [false, true])
		it(`leaves no byte of the user's memory${encrypted ? ' (Encryption on)' : ''}`, async () => {
			const folder = tempDir('forget-wf');
			const key = randomBytes(32).toString('base64');
			const credentials = encrypted
				? { credentials: { llmMemoryEncryptionKeyApi: { key, olderKeys: '' } } }
				: {};
			const storage: INodeParameters = encrypted ? { encryption: 'key' } : {};
			const llm = {
				name: 'Bot',
				id: 'bot',
				params: {
					...storage,
					memoryMode: 'conversation',
					longTermMemory: true,
					longTermUserId: '={{ $json.user }}',
				},
			};
			/** With Encryption, our nodes name the key credential, as the editor saves it. */
			const keyed = (wf: WorkflowJson) => {
				if (encrypted)
					for (const n of wf.nodes)
						if (n.type.startsWith('n8n-nodes-llm-memory.'))
							n.credentials = { llmMemoryEncryptionKeyApi: { id: 'key1', name: 'Memory key' } };
				return wf;
			};
			const say = async (text: string, sessionId: string, user: string) => {
				const r = await runWorkflow(keyed(workflow(folder, { id: 'wf-forget', llms: [llm] })), {
					nodeTypes,
					triggerItems: chat(text, sessionId, { user }),
					...credentials,
				});
				assert.equal(r.status, 'success', r.error?.message);
			};
			await say(`my code is ${SECRET}`, 's-alice', 'alice');
			await say(`bob here, my code is ${OTHER}`, 's-bob', 'bob');
			// Plain, the secret is on disk; encrypted, not even before it is forgotten.
			assert.equal(holds(folder, SECRET), !encrypted);
			const r = await runWorkflow(
				keyed(
					workflow(folder, {
						id: 'wf-admin',
						manager: { ...storage, operation: 'forgetUser', forgetUserId: 'alice' },
					}),
				),
				{ nodeTypes, triggerItems: chat('forget'), ...credentials },
			);
			assert.equal(r.status, 'success', r.error?.message);
			const out = r.output('Manager')[0].json as Json;
			assert.deepEqual(out.conversationIds, ['s-alice']);
			assert.ok(out.chatMemory >= 1 && out.memoryBase >= 1, JSON.stringify(out));
			assert.ok(!holds(folder, SECRET), 'no byte holds the secret');
			if (!encrypted) assert.ok(holds(folder, OTHER), 'the other user is kept');
		});

	it('Re-Encrypt moves memory to the new key; the old key can then go', async () => {
		const folder = tempDir('reencrypt-wf');
		const [oldKey, newKey] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
		const run = async (wf: WorkflowJson, key: Json, text = 'hello') => {
			for (const n of wf.nodes)
				if (n.type.startsWith('n8n-nodes-llm-memory.'))
					n.credentials = { llmMemoryEncryptionKeyApi: { id: 'key1', name: 'Memory key' } };
			const r = await runWorkflow(wf, {
				nodeTypes,
				triggerItems: chat(text, 's1'),
				credentials: { llmMemoryEncryptionKeyApi: key },
			});
			assert.equal(r.status, 'success', r.error?.message);
			return r;
		};
		const bot = (extra: INodeParameters = {}) => ({
			name: 'Bot',
			id: 'bot',
			params: { encryption: 'key', memoryMode: 'conversation', ...extra },
		});
		await run(workflow(folder, { id: 'wf-r', llms: [bot()] }), { key: oldKey }, SECRET);
		const manager = (scope: string) =>
			workflow(folder, {
				id: 'wf-r',
				manager: { encryption: 'key', operation: 'reencrypt', reencryptScope: scope },
			});
		const both = { key: newKey, olderKeys: oldKey };
		const r = await run(manager('conversation'), both);
		const out = r.output('Manager')[0].json as Json;
		assert.equal(out.rewritten, 1, JSON.stringify(out));
		assert.equal(out.current, 0);
		const again = (await run(manager('all'), both)).output('Manager')[0].json as Json;
		assert.deepEqual([again.rewritten, again.current], [0, 1]);
		// Only the new key now: the history still reaches the model.
		await run(workflow(folder, { id: 'wf-r', llms: [bot()] }), { key: newKey }, 'and now?');
		const last = scriptedModelLog.calls.at(-1)!;
		assert.match(last.messages.map((m) => m.content).join('\n'), new RegExp(SECRET));
	});
});
