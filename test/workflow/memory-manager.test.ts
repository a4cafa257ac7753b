// "LLM Memory Manager" run in-process through n8n-core's real WorkflowExecute, next to "LLM with Memory"
// (and its scripted model) writing the memory it manages: every operation, both memory modes.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, afterEach, describe, it } from 'node:test';

import type { INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { getMessages, lines, manage, memoryNode, ok, say } from '../support/manager-runs';
import {
	chat,
	connect,
	MANAGER_TYPE,
	MANAGER_VERSION,
	nodeTypes,
	workflow,
} from '../support/manager-workflows';
import { ensureRgw, rgwCredentials, rgwStorage } from '../support/rgw';
import { tempDir } from '../support/storages';
import { binaryData, runWorkflow } from '../support/workflow-harness';
import type { WorkflowJson } from '../support/workflow-harness';
import { scriptedModelLog } from '../support/scripted-model';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');
const DAY = 86_400_000;

type Json = Record<string, any>;

afterEach(() => scriptedModelLog.clear());

describe('LLM Memory Manager: Get Messages', () => {
	it('reads what LLM with Memory wrote in the same workflow, one item per message, paired with its input', async () => {
		const folder = tempDir();
		const wf = workflow(folder, {
			llms: [{ name: 'A', id: 'node-a', params: { memoryMode: 'conversation' } }],
			manager: getMessages({
				memoryMode: 'conversation',
				conversationIdType: 'customKey',
				conversationId: '={{ $json.conversationId }}',
			}),
		});
		const r1 = await runWorkflow(wf, { nodeTypes, triggerItems: chat('hello') });
		const first = ok(r1);
		assert.deepEqual(lines(first), ['user: hello', 'assistant: [echo] hello (1 messages)']);
		const answer = r1.output('A')[0].json;
		assert.deepEqual(first[1], {
			conversationId: 's1',
			nodeId: null,
			position: 1,
			messageId: answer.messageId,
			parentMessageId: `${answer.messageId}:user`,
			role: 'assistant',
			content: '[echo] hello (1 messages)',
			files: [],
			tokenCount: first[1].tokenCount,
			createdAt: first[1].createdAt,
		});
		assert.equal(first[0].messageId, `${answer.messageId}:user`);
		assert.ok(first[1].tokenCount > 0);
		const r2 = await runWorkflow(wf, { nodeTypes, triggerItems: chat('again') });
		assert.equal(ok(r2).length, 4);
		assert.deepEqual(
			r2.output('Manager').map((i) => i.pairedItem),
			[{ item: 0 }, { item: 0 }, { item: 0 }, { item: 0 }],
		);
	});

	it('node mode reads one node’s memory by its stable ID; conversation mode does not see it', async () => {
		const folder = tempDir();
		await say(folder, ['colour?'], {
			llms: [
				{ name: 'A', id: 'node-a', params: { memoryMode: 'node' } },
				{
					name: 'B',
					id: 'node-b',
					params: {
						memoryMode: 'node',
						promptType: 'define',
						text: 'second node',
						conversationIdType: 'customKey',
						conversationId: '={{ $json.conversationId }}',
					},
				},
			],
		});
		const b = ok(
			await manage(folder, getMessages({ memoryMode: 'node', memoryNode: memoryNode('node-b') })),
		);
		assert.deepEqual(lines(b), ['user: second node', 'assistant: [echo] second node (1 messages)']);
		assert.equal(b[0].nodeId, 'node-b');
		const a = ok(
			await manage(folder, getMessages({ memoryMode: 'node', memoryNode: memoryNode('node-a') })),
		);
		assert.deepEqual(lines(a), ['user: colour?', 'assistant: [echo] colour? (1 messages)']);
		const memories = [
			{ memory: 'node', nodeId: 'node-a', messages: 2 },
			{ memory: 'node', nodeId: 'node-b', messages: 2 },
		];
		const note =
			'The conversation "s1" has no shared memory (Conversation mode). Its memories: node node-a, 2 messages; node node-b, 2 messages. Set Memory to "All of This Conversation" to read every memory it has.';
		const conversation = { memoryMode: 'conversation' };
		assert.deepEqual(
			ok(await manage(folder, getMessages(conversation))),
			[
				{
					workflowId: 'wf-a',
					conversationId: 's1',
					memoryMode: 'conversation',
					conversationExists: true,
					memories,
					note,
					messages: 0,
				},
			],
			'no conversation memory: one item says what the conversation has',
		);
		const grouped = ok(
			await manage(folder, getMessages({ ...conversation, options: { groupMessages: true } })),
		);
		assert.deepEqual(grouped, [
			{
				workflowId: 'wf-a',
				conversationId: 's1',
				memoryMode: 'conversation',
				nodeId: null,
				key: 'conversation_memory/wf-a/s1.json',
				exists: false,
				total: 0,
				offset: 0,
				nextOffset: null,
				messages: [],
				conversationExists: true,
				memories,
				note,
			},
		]);
	});

	it('pages: Limit and Offset, Group Messages with nextOffset, Newest First, Return All', async () => {
		const folder = tempDir();
		await say(folder, ['one', 'two', 'three', 'four', 'five']);
		const contents: string[] = [];
		let offset: number | null = 0;
		while (offset !== null) {
			const [page] = ok(
				await manage(folder, {
					operation: 'getMessages',
					limit: 4,
					options: { groupMessages: true, offset },
				}),
			);
			assert.equal(page.total, 10);
			assert.equal(page.offset, offset);
			contents.push(...page.messages.map((m: Json) => m.content));
			offset = page.nextOffset;
		}
		assert.equal(contents.length, 10);
		assert.deepEqual(
			contents.filter((_, i) => i % 2 === 0),
			['one', 'two', 'three', 'four', 'five'],
		);
		const perItem = ok(
			await manage(folder, { operation: 'getMessages', limit: 3, options: { offset: 8 } }),
		);
		assert.deepEqual(
			perItem.map((m) => m.position),
			[8, 9],
		);
		const newest = ok(
			await manage(folder, { operation: 'getMessages', limit: 2, options: { newestFirst: true } }),
		);
		assert.deepEqual(lines(newest), ['assistant: [echo] five (9 messages)', 'user: five']);
		assert.equal(ok(await manage(folder, getMessages())).length, 10, 'Return All');
		assert.equal(ok(await manage(folder, { operation: 'getMessages' })).length, 10, 'limit 50');
	});

	it('Thread Up To Message ID lists that thread only, from its first message', async () => {
		const folder = tempDir();
		const wf = workflow(folder, {
			llms: [
				{
					name: 'A',
					id: 'node-a',
					params: {
						memoryMode: 'conversation',
						options: { parentMessageId: '={{ $json.parent ?? "" }}' },
					},
				},
			],
		});
		const t1 = (await runWorkflow(wf, { nodeTypes, triggerItems: chat('q1') })).output('A')[0].json;
		await runWorkflow(wf, { nodeTypes, triggerItems: chat('q2') });
		const regen = (
			await runWorkflow(wf, {
				nodeTypes,
				triggerItems: chat('q2, differently', 's1', { parent: t1.messageId }),
			})
		).output('A')[0].json;
		const thread = ok(
			await manage(folder, getMessages({ options: { threadMessageId: String(regen.messageId) } })),
		);
		assert.deepEqual(lines(thread), [
			'user: q1',
			'assistant: [echo] q1 (1 messages)',
			'user: q2, differently',
			'assistant: [echo] q2, differently (3 messages)',
		]);
		assert.equal(ok(await manage(folder, getMessages())).length, 6, 'all branches without it');
		const unknown = await manage(folder, getMessages({ options: { threadMessageId: 'nope' } }));
		assert.equal(unknown.status, 'error');
		assert.equal(
			unknown.error?.message,
			'Message ID "nope" was not found in memory "conversation_memory/wf-a/s1.json"',
		);
	});

	it('an unreadable memory document is an error, never an empty list', async () => {
		const folder = tempDir();
		mkdirSync(path.join(folder, 'conversation_memory/wf-a'), { recursive: true });
		writeFileSync(path.join(folder, 'conversation_memory/wf-a/s1.json'), '{"version":1');
		const r = await manage(folder, getMessages());
		assert.equal(r.status, 'error');
		assert.match(String(r.error?.message), /Stored memory document .*s1\.json" is unreadable/);
	});
});

describe('LLM Memory Manager: Clear and Delete Conversation', () => {
	it('Clear in node mode deletes that node’s memory only; in conversation mode the shared memory only', async () => {
		const folder = tempDir();
		await say(folder, ['hi'], {
			llms: [
				{ name: 'A', id: 'node-a', params: { memoryMode: 'node' } },
				{
					name: 'B',
					id: 'node-b',
					params: {
						memoryMode: 'conversation',
						promptType: 'define',
						text: 'shared',
						conversationIdType: 'customKey',
						conversationId: '={{ $json.conversationId }}',
					},
				},
			],
		});
		const clearA = { operation: 'clear', memoryMode: 'node', memoryNode: memoryNode('node-a') };
		const [cleared] = ok(await manage(folder, clearA));
		assert.deepEqual(cleared, {
			workflowId: 'wf-a',
			conversationId: 's1',
			memoryMode: 'node',
			nodeId: 'node-a',
			key: 'node_memory/wf-a/s1/node-a.json',
			cleared: true,
		});
		assert.equal(existsSync(path.join(folder, 'node_memory/wf-a/s1/node-a.json')), false);
		assert.equal(ok(await manage(folder, getMessages())).length, 2, 'shared memory stays');
		const [again] = ok(await manage(folder, clearA));
		assert.equal(again.cleared, false);
		const [shared] = ok(await manage(folder, { operation: 'clear', memoryMode: 'conversation' }));
		assert.equal(shared.key, 'conversation_memory/wf-a/s1.json');
		assert.equal(shared.cleared, true);
		const [none] = ok(await manage(folder, getMessages({ memoryMode: 'conversation' })));
		assert.deepEqual([none.messages, none.conversationExists, none.memories], [0, false, []]);
	});

	it('Delete Conversation removes every node’s memory, the shared memory and the files; others stay', async () => {
		const folder = tempDir();
		const llms = [
			{ name: 'A', id: 'node-a', params: { memoryMode: 'node' } },
			{
				name: 'B',
				id: 'node-b',
				params: {
					memoryMode: 'conversation',
					promptType: 'define',
					text: 'shared',
					conversationIdType: 'customKey',
					conversationId: '={{ $json.conversationId }}',
				},
			},
		];
		await say(folder, ['look'], {
			llms,
			binary: binaryData(PNG, { mimeType: 'image/png', fileName: 'a.png' }),
		});
		await say(folder, ['other'], { llms, session: 's2' });
		const [out] = ok(await manage(folder, { operation: 'deleteConversation' }));
		assert.equal(out.workflowId, 'wf-a');
		assert.equal(out.conversationId, 's1');
		assert.equal(out.deletedCount, 3);
		assert.deepEqual(out.deleted.slice(0, 2).sort(), [
			'conversation_memory/wf-a/s1.json',
			'node_memory/wf-a/s1/node-a.json',
		]);
		assert.match(out.deleted[2], /^memory_files\/wf-a\/s1\/[0-9a-f]{64}$/);
		for (const dir of ['node_memory/wf-a/s1', 'memory_files/wf-a/s1'])
			assert.deepEqual(readdirSync(path.join(folder, dir)), []);
		assert.equal(
			ok(
				await manage(folder, getMessages({ memoryMode: 'conversation' }), [
					{ json: { sessionId: 's2' } },
				]),
			).length,
			2,
			'the other conversation stays',
		);
	});
});

describe('LLM Memory Manager: List Conversations and Prune', () => {
	it('lists the current workflow’s conversations by default, newest first, with node IDs; paged', async () => {
		const folder = tempDir();
		const llms = [
			{ name: 'A', id: 'node-a', params: { memoryMode: 'node' } },
			{
				name: 'B',
				id: 'node-b',
				params: {
					memoryMode: 'conversation',
					promptType: 'define',
					text: 'shared',
					conversationIdType: 'customKey',
					conversationId: '={{ $json.conversationId }}',
				},
			},
		];
		await say(folder, ['first'], { llms, session: 'older' });
		await say(folder, ['second'], { session: 'newer' });
		await say(folder, ['elsewhere'], { id: 'wf-other', session: 'x' });
		const old = new Date(Date.now() - 60_000);
		for (const f of ['conversation_memory/wf-a/older.json', 'node_memory/wf-a/older/node-a.json'])
			utimesSync(path.join(folder, f), old, old);
		const all = ok(await manage(folder, { operation: 'listConversations', returnAll: true }));
		assert.deepEqual(
			all.map((c) => [c.workflowId, c.conversationId, c.conversationMemory, c.nodeIds]),
			[
				['wf-a', 'newer', true, []],
				['wf-a', 'older', true, ['node-a']],
			],
		);
		assert.match(all[0].lastModified, /^\d{4}-\d\d-\d\dT/);
		const page = ok(
			await manage(folder, { operation: 'listConversations', limit: 1, options: { offset: 1 } }),
		);
		assert.deepEqual(
			page.map((c) => c.conversationId),
			['older'],
		);
		const other = ok(
			await manage(folder, { operation: 'listConversations', workflowId: 'wf-other' }),
		);
		assert.deepEqual(
			other.map((c) => c.conversationId),
			['x'],
		);
	});

	it('Prune deletes memory older than N days; Dry Run only reports; All Workflows reaches every workflow', async () => {
		const folder = tempDir();
		await say(folder, ['old'], { session: 'old' });
		await say(folder, ['fresh'], { session: 'fresh' });
		await say(folder, ['elsewhere'], { id: 'wf-other', session: 'old' });
		const old = new Date(Date.now() - 40 * DAY);
		for (const f of ['conversation_memory/wf-a/old.json', 'conversation_memory/wf-other/old.json'])
			utimesSync(path.join(folder, f), old, old);
		const [dry] = ok(await manage(folder, { operation: 'prune', olderThanDays: 30, dryRun: true }));
		assert.deepEqual(dry, {
			workflowId: 'wf-a',
			olderThanDays: 30,
			dryRun: true,
			deletedCount: 1,
			deleted: ['conversation_memory/wf-a/old.json'],
			skipped: [],
		});
		assert.ok(existsSync(path.join(folder, 'conversation_memory/wf-a/old.json')), 'dry run');
		const [real] = ok(await manage(folder, { operation: 'prune', olderThanDays: 30 }));
		assert.deepEqual(real.deleted, ['conversation_memory/wf-a/old.json']);
		assert.equal(existsSync(path.join(folder, 'conversation_memory/wf-a/old.json')), false);
		assert.ok(existsSync(path.join(folder, 'conversation_memory/wf-a/fresh.json')));
		assert.ok(existsSync(path.join(folder, 'conversation_memory/wf-other/old.json')));
		const [everywhere] = ok(
			await manage(folder, { operation: 'prune', pruneScope: 'all', olderThanDays: 30 }),
		);
		assert.equal(everywhere.workflowId, null);
		assert.deepEqual(everywhere.deleted, ['conversation_memory/wf-other/old.json']);
	});
});

describe('LLM Memory Manager: Export and Import', () => {
	it('export → import into another workflow ID round trip is byte-exact, and LLM with Memory continues there', async () => {
		const folder = tempDir();
		await say(folder, ['look at this'], {
			llms: [{ name: 'A', id: 'node-a', params: { memoryMode: 'node' } }],
			binary: binaryData(PNG, { mimeType: 'image/png', fileName: 'a.png' }),
		});
		await say(folder, ['and shared', 'more']);
		const [exported] = ok(await manage(folder, { operation: 'export', asFile: true }));
		const r = await manage(folder, { operation: 'export', asFile: true });
		const item = r.output('Manager')[0];
		const file = item.binary!.data;
		assert.equal(file.mimeType, 'application/json');
		assert.equal(file.fileName, 'memory-s1.json');
		const bytes = Buffer.from(file.data, 'base64');
		assert.deepEqual(
			JSON.parse(bytes.toString('utf8')),
			item.json,
			'the file holds the JSON output',
		);
		assert.deepEqual(exported, item.json, 'deterministic');
		assert.equal((item.json.nodes as Json[])[0].nodeId, 'node-a');
		assert.equal((item.json.files as Json[]).length, 1);

		const imported = ok(
			await manage(folder, { operation: 'import', source: 'binary', workflowId: 'wf-b' }, [
				{ json: {}, binary: { data: file } },
			]),
		);
		assert.deepEqual(imported, [
			{
				workflowId: 'wf-b',
				conversationId: 's1',
				documents: ['conversation_memory/wf-b/s1.json', 'node_memory/wf-b/s1/node-a.json'],
				messages: 6,
				files: 1,
				missingFiles: [],
				replaced: [],
			},
		]);
		const again = (
			await manage(folder, { operation: 'export', asFile: true }, undefined, {
				id: 'wf-b',
			})
		).output('Manager')[0];
		assert.equal(
			Buffer.from(again.binary!.data.data, 'base64').toString('hex'),
			bytes.toString('hex'),
			'byte-exact',
		);

		// The imported memory is the memory LLM with Memory uses in wf-b, image included.
		await say(folder, ['what was it?'], {
			id: 'wf-b',
			llms: [{ name: 'A', id: 'node-a', params: { memoryMode: 'node' } }],
		});
		const call = scriptedModelLog.forNode('A Model').at(-1)!;
		assert.deepEqual(
			call.messages.map((m) => `${m.role}: ${m.content}`),
			['user: look at this', 'assistant: [echo] look at this (1 messages)', 'user: what was it?'],
		);
		assert.deepEqual((call.rawInput as Json[])[0].content[0], {
			type: 'image_url',
			image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` },
		});
	});

	it('Export → Import chained as JSON; a second import is refused without Overwrite, replaced with it', async () => {
		const folder = tempDir();
		await say(folder, ['remember 42']);
		const chainWf = (overwrite: boolean): WorkflowJson => {
			const wf = workflow(folder, { manager: { operation: 'export' } });
			wf.nodes.push({
				id: 'import',
				name: 'Import',
				type: MANAGER_TYPE,
				typeVersion: MANAGER_VERSION,
				position: [1200, 0],
				parameters: {
					localFolder: folder,
					resource: 'conversationMemory',
					operation: 'import',
					workflowId: 'wf-c',
					overwrite,
				},
			});
			wf.connections.Manager = connect('Manager', 'Import');
			return wf;
		};
		const first = await runWorkflow(chainWf(false), {
			nodeTypes,
			triggerItems: [{ json: { sessionId: 's1' } }],
		});
		assert.equal(first.status, 'success', first.error?.message);
		assert.equal(first.output('Import')[0].json.messages, 2);
		assert.deepEqual(first.output('Import')[0].pairedItem, { item: 0 });
		const refused = await runWorkflow(chainWf(false), {
			nodeTypes,
			triggerItems: [{ json: { sessionId: 's1' } }],
		});
		assert.equal(refused.status, 'error');
		assert.match(
			String(refused.error?.message),
			/Conversation "s1" of "wf-c" already holds 1 stored object/,
		);
		assert.match(String(refused.error?.description), /Turn on "Overwrite"/);
		await say(folder, ['changed'], { id: 'wf-c' });
		const replaced = await runWorkflow(chainWf(true), {
			nodeTypes,
			triggerItems: [{ json: { sessionId: 's1' } }],
		});
		assert.equal(replaced.status, 'success', replaced.error?.message);
		assert.deepEqual(replaced.output('Import')[0].json.replaced, [
			'conversation_memory/wf-c/s1.json',
		]);
		const now = ok(await manage(folder, getMessages(), undefined, { id: 'wf-c' }));
		assert.deepEqual(lines(now), [
			'user: remember 42',
			'assistant: [echo] remember 42 (1 messages)',
		]);
	});

	it('Import checks the whole file first: a bad one writes nothing and names what is wrong', async () => {
		const folder = tempDir();
		await say(folder, ['hi']);
		const [good] = ok(await manage(folder, { operation: 'export' }));
		const bad = structuredClone(good);
		bad.conversation.messages[1].role = 'robot';
		const r = await manage(folder, { operation: 'import', workflowId: 'wf-d' }, [{ json: bad }]);
		assert.equal(r.status, 'error');
		assert.match(
			String(r.error?.message),
			/Invalid conversation export at conversation: schema check failed at messages\.1\.role/,
		);
		const notExport = await manage(folder, { operation: 'import', workflowId: 'wf-d' }, [
			{ json: { chatInput: 'hi' } },
		]);
		assert.match(String(notExport.error?.message), /at format: must be/);
		const noFile = await manage(
			folder,
			{ operation: 'import', workflowId: 'wf-d', source: 'binary' },
			[{ json: {} }],
		);
		assert.equal(noFile.status, 'error');
		assert.match(
			String(noFile.error?.message),
			/expects the node's input data to contain a binary file 'data'/,
		);
		for (const dir of ['conversation_memory', 'node_memory', 'memory_files'])
			assert.equal(existsSync(path.join(folder, dir, 'wf-d')), false);
		const [into] = ok(
			await manage(
				folder,
				{ operation: 'import', workflowId: 'wf-d', options: { conversationId: 'other' } },
				[{ json: good }],
			),
		);
		assert.equal(into.conversationId, 'other');
		assert.deepEqual(into.documents, ['conversation_memory/wf-d/other.json']);
	});

	it('Export of a conversation without memory is an error; a file that is gone is left out with a hint', async () => {
		const folder = tempDir();
		const r = await manage(folder, { operation: 'export' });
		assert.equal(r.status, 'error');
		assert.equal(r.error?.message, 'No memory is stored for conversation "s1" of "wf-a"');
		await say(folder, ['look'], {
			binary: binaryData(PNG, { mimeType: 'image/png', fileName: 'a.png' }),
		});
		const files = path.join(folder, 'memory_files/wf-a/s1');
		for (const f of readdirSync(files)) rmSync(path.join(files, f));
		const gone = await manage(folder, { operation: 'export' });
		assert.deepEqual(ok(gone)[0].files, []);
		assert.deepEqual(
			gone.runData.Manager[0].hints?.map((h) => h.message),
			['1 file(s) the memory references were no longer stored and are not in the export'],
		);
	});
});

describe('LLM Memory Manager: bad input, continueOnFail, pairedItem', () => {
	for (const [what, value, got] of [
		['an object', { user: 'alice' }, 'an object'],
		['an array', ['x', 'y'], 'an array'],
		['a boolean', true, 'a boolean (true)'],
	] as const) {
		it(`a conversation ID that is ${what} is refused by name, in every operation`, async () => {
			const folder = tempDir();
			await say(folder, ['keep me']);
			for (const operation of ['getMessages', 'clear', 'deleteConversation', 'export']) {
				const r = await manage(folder, { operation }, [{ json: { sessionId: value } }]);
				assert.equal(r.status, 'error', operation);
				assert.equal(
					r.error?.message,
					`Session ID must be a string or a number, got ${got}`,
					operation,
				);
				assert.match(String(r.error?.description), /IDs must be strings/);
			}
			assert.equal(ok(await manage(folder, getMessages())).length, 2, 'nothing was touched');
		});
	}

	it('Workflow ID, Node ID and Thread message ID are checked the same way; path characters are refused', async () => {
		const folder = tempDir();
		const item = (json: Json) => [{ json: { sessionId: 's1', ...json } }];
		const cases: Array<[INodeParameters, Json, RegExp]> = [
			[
				getMessages({ workflowId: '={{ $json.wf }}' }),
				{ wf: { id: 1 } },
				/^Workflow ID must be a string or a number, got an object$/,
			],
			[
				getMessages({ memoryMode: 'node', memoryNode: memoryNode('={{ $json.node }}') }),
				{ node: ['a'] },
				/^Node ID must be a string or a number, got an array$/,
			],
			[
				getMessages({ memoryMode: 'node', memoryNode: memoryNode('={{ $json.node }}') }),
				{ node: '' },
				/^Node memory needs a node, but none was given$/,
			],
			[
				getMessages({ options: { threadMessageId: '={{ $json.m }}' } }),
				{ m: {} },
				/^Thread Up To Message ID must be a string or a number, got an object$/,
			],
			[getMessages(), { sessionId: '../../etc' }, /^Invalid conversation_id: .*contains "\/"/],
			[
				{ operation: 'clear', memoryMode: 'node', memoryNode: memoryNode('a\\b') },
				{},
				/^Invalid node_id: .*contains "\\"/,
			],
			[
				{ operation: 'listConversations', workflowId: '..' },
				{},
				/^Invalid app_id: .*contains "\.\."/,
			],
			[getMessages(), { sessionId: '' }, /^No session ID found$/],
			[
				getMessages({ limit: 0, returnAll: false }),
				{},
				/^Limit must be a whole number ≥ 1, got 0$/,
			],
			[
				{ operation: 'prune', olderThanDays: '={{ "soon" }}' },
				{},
				/^Older Than \(Days\) must be a whole number ≥ 0, got "soon"$/,
			],
		];
		for (const [params, json, message] of cases) {
			const r = await manage(folder, params, item(json));
			assert.equal(r.status, 'error', JSON.stringify(params));
			assert.match(String(r.error?.message), message);
		}
		assert.equal(existsSync(path.join(folder, 'etc')), false);
	});

	it('continueOnFail: a failing item becomes an error item, the others run; every output is paired', async () => {
		const folder = tempDir();
		await say(folder, ['one']);
		await say(folder, ['two'], { session: 's2' });
		const r = await manage(
			folder,
			getMessages(),
			[
				{ json: { sessionId: 's1' } },
				{ json: { sessionId: { bad: true } } },
				{ json: { sessionId: 's2' } },
			],
			{ onError: 'continueRegularOutput' },
		);
		assert.equal(r.status, 'success');
		const out = r.output('Manager');
		assert.deepEqual(
			out.map((i) => [i.pairedItem, i.json.error ?? i.json.content]),
			[
				[{ item: 0 }, 'one'],
				[{ item: 0 }, '[echo] one (1 messages)'],
				[{ item: 1 }, 'Session ID must be a string or a number, got an object'],
				[{ item: 2 }, 'two'],
				[{ item: 2 }, '[echo] two (1 messages)'],
			],
		);
		const stopped = await manage(folder, getMessages(), [
			{ json: { sessionId: 's1' } },
			{ json: { sessionId: '../x' } },
		]);
		assert.equal(stopped.status, 'error');
		assert.match(String(stopped.error?.message), /Invalid conversation_id/);
	});
});

describe('LLM Memory Manager on S3 through the credential', () => {
	it('manages memory LLM with Memory keeps on radosgw: read, list, export, import, delete', async () => {
		const s3 = await rgwStorage();
		const { credentials, cred } = rgwCredentials(s3);
		const llm = workflow('', {
			llms: [{ name: 'A', id: 'node-a', params: { memoryMode: 'node', storage: 's3' } }],
		});
		llm.nodes[1].credentials = cred;
		const written = await runWorkflow(llm, {
			nodeTypes,
			triggerItems: chat('up there'),
			credentials,
		});
		assert.equal(written.status, 'success', written.error?.message);
		const s3Manage = async (params: INodeParameters, items?: INodeExecutionData[], id?: string) => {
			const wf = workflow('', { id, manager: { storage: 's3', ...params } });
			wf.nodes[1].credentials = cred;
			return await runWorkflow(wf, {
				nodeTypes,
				triggerItems: items ?? [{ json: { sessionId: 's1' } }],
				credentials,
			});
		};
		const messages = ok(
			await s3Manage(getMessages({ memoryMode: 'node', memoryNode: memoryNode('node-a') })),
		);
		assert.deepEqual(lines(messages), [
			'user: up there',
			'assistant: [echo] up there (1 messages)',
		]);
		const listed = ok(await s3Manage({ operation: 'listConversations' }));
		assert.deepEqual(listed[0].nodeIds, ['node-a']);
		const [exported] = ok(await s3Manage({ operation: 'export' }));
		ok(await s3Manage({ operation: 'import', workflowId: 'wf-b' }, [{ json: exported }]));
		const [deleted] = ok(await s3Manage({ operation: 'deleteConversation' }));
		assert.deepEqual(deleted.deleted, ['node_memory/wf-a/s1/node-a.json']);
		assert.deepEqual(
			(await s3.list('')).map((o) => o.key),
			['n8n/node_memory/wf-b/s1/node-a.json'],
		);
	});
});

after(async () => (await ensureRgw()).stop());
