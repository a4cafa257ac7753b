/**
 * End to end on a real n8n (N8N_VERSION: 2.8.4 on Node 20 or 2.40.7 on Node 24; scripts/test.sh runs
 * both): the package is installed from its npm pack tarball, workflows and credentials are imported and
 * published with n8n's CLI, and chat turns are POSTed to the Chat Trigger exactly as the chat widget
 * sends them. The model is n8n's own OpenAI Chat Model sub-node talking to a
 * local OpenAI-compatible server that logs every request: the only stand-in, because no real model can
 * be reached from these machines. Storage is real: local disk and Ceph radosgw.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { contentText, startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi, LoggedRequest } from '../../demo/model-server';
import { ensureRgw, RGW_CREDENTIALS, rgwStorage } from '../support/rgw';
import { sendChat } from '../support/chat';
import { waitFor } from '../support/n8n-executions';
import { packPackage } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import {
	chatWorkflow,
	downstreamParameters,
	openAiCredential,
	S3_CREDENTIAL,
	s3Credential,
} from '../support/workflows';
import type { S3Storage } from '../../src/internal';

const NODE_WF = { id: 'e2eNodeMode00001', webhookId: 'e2e0c0de-0000-4000-8000-00000000a001' };
const CONV_WF = { id: 'e2eConvMode00001', webhookId: 'e2e0c0de-0000-4000-8000-00000000a002' };
const S3_WF = { id: 'e2eS3Storage0001', webhookId: 'e2e0c0de-0000-4000-8000-00000000a003' };

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;
let s3: S3Storage;

/** What each model call was sent, as "role: text" lines, for the calls whose system message is `tag`. */
function callsOf(tag: string, requests: LoggedRequest[]): string[][] {
	return requests
		.filter((r) => r.body?.messages?.[0]?.content === tag)
		.map((r) =>
			(r.body.messages as Array<{ role: string; content: unknown }>)
				.slice(1)
				.map((m) => `${m.role}: ${contentText(m.content)}`),
		);
}

const chatOn = (wf: { webhookId: string }, sessionId: string | undefined, chatInput: string) =>
	sendChat(n8n!.chatUrl(wf.webhookId), { sessionId: sessionId as string, chatInput });

describe('LLM with Memory on a real n8n', () => {
	before(async () => {
		const [tarball, fake, storage] = await Promise.all([
			packPackage(),
			startFakeOpenAi({ port: 0 }),
			rgwStorage(),
		]);
		llm = fake;
		s3 = storage;
		n8n = await joinSharedN8n({
			tarball,
			credentials: [
				openAiCredential(fake.url),
				s3Credential(s3.endpoint!, s3.bucket, RGW_CREDENTIALS),
			],
			workflows: [
				chatWorkflow({
					...NODE_WF,
					name: 'node memory: two LLM nodes',
					llms: [
						{
							name: 'LLM A',
							id: 'e2e-node-a',
							parameters: { memoryMode: 'node', systemMessage: 'node A' },
						},
						{
							name: 'LLM B',
							id: 'e2e-node-b',
							parameters: downstreamParameters({ memoryMode: 'node', systemMessage: 'node B' }),
						},
					],
				}),
				chatWorkflow({
					...CONV_WF,
					name: 'conversation memory: two LLM nodes',
					llms: [
						{
							name: 'LLM A',
							id: 'e2e-conv-a',
							parameters: { memoryMode: 'conversation', systemMessage: 'conv A' },
						},
						{
							name: 'LLM B',
							id: 'e2e-conv-b',
							parameters: downstreamParameters({
								memoryMode: 'conversation',
								systemMessage: 'conv B',
							}),
						},
					],
				}),
				chatWorkflow({
					...S3_WF,
					name: 'node memory on S3',
					llms: [
						{
							name: 'LLM S3',
							id: 'e2e-s3-node',
							parameters: { memoryMode: 'node', storage: 's3', systemMessage: 'on s3' },
							credentials: { llmMemoryS3Api: S3_CREDENTIAL },
						},
					],
				}),
			],
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
		(await ensureRgw()).stop();
	});

	it('node mode: turn 2 carries turn 1, and each LLM node sees only its own history', async () => {
		const t1 = await chatOn(NODE_WF, 'node-s1', 'pick a colour');
		assert.equal(t1.status, 200, t1.body);
		assert.equal(t1.shown, 'FAKE-LLM reply to "B: pick a colour" (saw 2 messages: system,user)');
		const t2 = await chatOn(NODE_WF, 'node-s1', 'another one');
		assert.equal(t2.status, 200, t2.body);
		const requests = llm!.completions();
		assert.deepEqual(callsOf('node A', requests).at(-1), [
			'user: pick a colour',
			'assistant: FAKE-LLM reply to "pick a colour" (saw 2 messages: system,user)',
			'user: another one',
		]);
		assert.deepEqual(callsOf('node B', requests).at(-1), [
			'user: B: pick a colour',
			'assistant: FAKE-LLM reply to "B: pick a colour" (saw 2 messages: system,user)',
			'user: B: another one',
		]);
		assert.equal(t2.json.memory.mode, 'node');
		assert.equal(t2.json.memory.historyMessages, 2);
		assert.equal(t2.json.conversationId, 'node-s1');
	});

	it('node mode: another session starts empty', async () => {
		const r = await chatOn(NODE_WF, 'node-s2', 'fresh start');
		assert.equal(r.status, 200);
		assert.deepEqual(callsOf('node A', llm!.completions()).at(-1), ['user: fresh start']);
	});

	it('memory lives on local disk: one JSON file per node and session', () => {
		const file = path.join(
			n8n!.memoryRoot,
			'node_memory',
			NODE_WF.id,
			'node-s1',
			'e2e-node-a.json',
		);
		assert.ok(existsSync(file), file);
		const doc = JSON.parse(readFileSync(file, 'utf8'));
		assert.equal(doc.version, 1);
		assert.deepEqual(
			doc.messages
				.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`)
				.filter((l: string) => l.startsWith('user')),
			['user: pick a colour', 'user: another one'],
		);
		assert.ok(doc.messages.every((m: { token_count: number }) => m.token_count > 0));
	});

	it('conversation mode: the two nodes share one history', async () => {
		assert.equal((await chatOn(CONV_WF, 'conv-s1', 'hello')).status, 200);
		const t2 = await chatOn(CONV_WF, 'conv-s1', 'again');
		assert.equal(t2.status, 200);
		const requests = llm!.completions();
		assert.deepEqual(callsOf('conv A', requests).at(-1), [
			'user: hello',
			'assistant: FAKE-LLM reply to "hello" (saw 2 messages: system,user)',
			'user: B: hello',
			'assistant: FAKE-LLM reply to "B: hello" (saw 4 messages: system,user,assistant,user)',
			'user: again',
		]);
		assert.equal(
			callsOf('conv B', requests).at(-1)!.length,
			7,
			'B sees turn 1 of both nodes and A’s turn 2',
		);
	});

	it('node mode without a session ID returns an error and never calls the model', async () => {
		const before = llm!.completions().length;
		const r = await chatOn(NODE_WF, undefined, 'who am I?');
		assert.equal(r.status, 500);
		assert.deepEqual(r.json, { message: 'Error in workflow' });
		assert.equal(llm!.completions().length, before);
		// The execution failed in our node, with our message (n8n's event log is written as the run ends).
		const failed = await waitFor(() =>
			n8n!
				.events()
				.find((e) => e.eventName === 'n8n.workflow.failed' && e.payload?.workflowId === NODE_WF.id),
		);
		assert.equal(failed.payload.errorNodeType, 'n8n-nodes-llm-memory.llmWithMemory');
		assert.equal(failed.payload.lastNodeExecuted, 'LLM A');
		assert.equal(failed.payload.errorMessage, 'Node memory needs a session ID, but none was found');
	});

	// Issue 7 #0, as the acceptance review found it: through the public chat webhook, the session IDs
	// {"user":"alice"} and {"user":"bob"} both became "[object Object]", and Bob's model call carried
	// Alice's secret. An object or array must fail by name before the model, and share no key.
	it('a session ID that is an object or an array is refused by name, before the model, with no shared key', async () => {
		const before = llm!.completions().length;
		const sent: Array<[unknown, string]> = [
			[{ user: 'alice' }, 'my secret is 1234'],
			[{ user: 'bob' }, 'what is my secret?'],
			[['x', 'y'], 'hello array'],
		];
		for (const [sessionId, chatInput] of sent) {
			const r = await chatOn(CONV_WF, sessionId as string, chatInput);
			assert.equal(r.status, 500, r.body);
			assert.deepEqual(r.json, { message: 'Error in workflow' });
		}
		assert.equal(llm!.completions().length, before, 'the model was never called');
		assert.ok(!JSON.stringify(llm!.completions()).includes('my secret is 1234'));
		const failures = await waitFor(() => {
			const f = n8n!
				.events()
				.filter(
					(e) => e.eventName === 'n8n.workflow.failed' && e.payload?.workflowId === CONV_WF.id,
				);
			return f.length >= sent.length ? f : undefined;
		});
		assert.deepEqual(
			failures.map((f) => [f.payload.errorNodeType, f.payload.errorMessage]).sort(),
			[
				[
					'n8n-nodes-llm-memory.llmWithMemory',
					'Session ID must be a string or a number, got an array',
				],
				[
					'n8n-nodes-llm-memory.llmWithMemory',
					'Session ID must be a string or a number, got an object',
				],
				[
					'n8n-nodes-llm-memory.llmWithMemory',
					'Session ID must be a string or a number, got an object',
				],
			],
		);
		// Nothing was stored under a collapsed key.
		const convDir = path.join(n8n!.memoryRoot, 'conversation_memory', CONV_WF.id);
		const stored = existsSync(convDir) ? readdirSync(convDir) : [];
		assert.ok(
			stored.every((name) => !/object|x,y/.test(name)),
			`stored conversations: ${stored.join(', ')}`,
		);
	});

	it('S3 storage: memory lives on radosgw and turn 2 carries turn 1', async () => {
		assert.equal((await chatOn(S3_WF, 's3-s1', 'remember 42')).status, 200);
		const t2 = await chatOn(S3_WF, 's3-s1', 'what number?');
		assert.equal(t2.status, 200, t2.body);
		assert.deepEqual(callsOf('on s3', llm!.completions()).at(-1), [
			'user: remember 42',
			'assistant: FAKE-LLM reply to "remember 42" (saw 2 messages: system,user)',
			'user: what number?',
		]);
		assert.deepEqual(
			(await s3.list('')).map((o) => o.key),
			[`n8n/node_memory/${S3_WF.id}/s3-s1/e2e-s3-node.json`],
		);
		assert.equal(existsSync(path.join(n8n!.memoryRoot, 'node_memory', S3_WF.id)), false);
	});

	it('the n8n log shows no unknown node types and no leaked secret', () => {
		const log = n8n!.log();
		assert.doesNotMatch(log, /Unrecognized node type/);
		assert.ok(!log.includes(RGW_CREDENTIALS.secretAccessKey));
	});
});
