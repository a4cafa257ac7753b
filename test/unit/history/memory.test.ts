import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	ASSISTANT_FILES_LEAD,
	clearDocumentCache,
	CorruptDocumentError,
	DuplicateMessageIdError,
	encodeDocument,
	FlushConflictError,
	IMAGE_TOKEN_ESTIMATE,
	InvalidIdError,
	LocalDiskStorage,
	MESSAGE_FRAMING_TOKENS,
	NodeTokenBufferMemory,
	StorageError,
	TiktokenCounter,
	TokenBufferMemory,
	tokenizerStats,
	UnknownParentMessageError,
} from '../../../src/internal';
import type { StoredMessage } from '../../../src/internal';
import { memorySetup, promptText } from '../../support/storages';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const text = promptText;
const setup = memorySetup;

async function turn(
	m: TokenBufferMemory | NodeTokenBufferMemory,
	q: string,
	a: string,
	extra: object = {},
) {
	const added = await m.addMessages({ userContent: q, assistantContent: a, ...extra });
	await m.flush();
	return added;
}

async function stored(disk: LocalDiskStorage, key: string): Promise<StoredMessage[]> {
	const got = await disk.get(key);
	return got
		? (JSON.parse(Buffer.from(got.body).toString()) as { messages: StoredMessage[] }).messages
		: [];
}

describe('memory: scopes and isolation', () => {
	it('node memory: two nodes in one conversation keep separate histories', async () => {
		const { options } = setup();
		const a = new NodeTokenBufferMemory('wf', 'conv', 'nodeA', options);
		const b = new NodeTokenBufferMemory('wf', 'conv', 'nodeB', options);
		await turn(a, 'colour?', 'red');
		await turn(b, 'number?', '7');
		await turn(a, 'another colour?', 'blue');
		assert.deepEqual(
			text(
				(await new NodeTokenBufferMemory('wf', 'conv', 'nodeA', options).getHistoryPromptMessages())
					.messages,
			),
			['user:colour?', 'assistant:red', 'user:another colour?', 'assistant:blue'],
		);
		assert.deepEqual(
			text(
				(await new NodeTokenBufferMemory('wf', 'conv', 'nodeB', options).getHistoryPromptMessages())
					.messages,
			),
			['user:number?', 'assistant:7'],
		);
		assert.equal(a.key, 'node_memory/wf/conv/nodeA.json');
	});

	it('node memory: conversations and apps are isolated too', async () => {
		const { options } = setup();
		await turn(new NodeTokenBufferMemory('wf', 'c1', 'n', options), 'in c1', 'ok');
		assert.equal(
			(await new NodeTokenBufferMemory('wf', 'c2', 'n', options).getHistoryPromptMessages()).turns,
			0,
		);
		assert.equal(
			(await new NodeTokenBufferMemory('wf2', 'c1', 'n', options).getHistoryPromptMessages()).turns,
			0,
		);
	});

	it('conversation memory: nodes share one history and each appends its own turn', async () => {
		const { options } = setup();
		await turn(new TokenBufferMemory('wf', 'conv', options), 'to node 1', 'from node 1');
		await turn(new TokenBufferMemory('wf', 'conv', options), 'to node 2', 'from node 2');
		const h = await new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages();
		assert.deepEqual(text(h.messages), [
			'user:to node 1',
			'assistant:from node 1',
			'user:to node 2',
			'assistant:from node 2',
		]);
	});

	it('a node that did not run in a turn keeps its older history (nothing lost, nothing borrowed)', async () => {
		const { options } = setup();
		const mem = (node: string) => new NodeTokenBufferMemory('wf', 'conv', node, options);
		await turn(mem('A'), 't1 to A', 'A1');
		await turn(mem('B'), 't1 to B', 'B1');
		await turn(mem('A'), 't2 to A', 'A2'); // B skipped by an IF branch in turn 2
		await turn(mem('A'), 't3 to A', 'A3');
		const b = await mem('B').getHistoryPromptMessages();
		assert.deepEqual(text(b.messages), ['user:t1 to B', 'assistant:B1']);
		await turn(mem('B'), 't3 to B', 'B3');
		assert.deepEqual(text((await mem('B').getHistoryPromptMessages()).messages), [
			'user:t1 to B',
			'assistant:B1',
			'user:t3 to B',
			'assistant:B3',
		]);
	});

	it('loops: the same node running several times in one run sees its earlier iterations', async () => {
		const { disk, options } = setup();
		const m = new NodeTokenBufferMemory('wf', 'conv', 'loopNode', options);
		const seen: number[] = [];
		for (let i = 1; i <= 3; i++) {
			seen.push((await m.getHistoryPromptMessages()).turns);
			await turn(m, `iteration ${i}`, `done ${i}`);
		}
		assert.deepEqual(seen, [0, 1, 2]);
		assert.equal((await stored(disk, m.key)).length, 6); // every iteration kept (Dify kept only the last)
	});

	it('loops without a flush in between still see pending turns, then flush them all at once', async () => {
		const { disk, storage, options } = setup();
		const m = new NodeTokenBufferMemory('wf', 'conv', 'batch', options);
		for (let i = 1; i <= 3; i++)
			await m.addMessages({ userContent: `item ${i}`, assistantContent: `ok ${i}` });
		assert.equal((await m.getHistoryPromptMessages()).turns, 3);
		const puts = storage.calls.put;
		assert.deepEqual(await m.flush(), { written: true, attempts: 1 });
		assert.equal(storage.calls.put - puts, 1);
		const ids = (await stored(disk, m.key)).map((x) => x.parent_message_id);
		assert.equal(ids[0], null);
		assert.equal(ids[2], (await stored(disk, m.key))[1].message_id, 'turn 2 follows turn 1');
	});
});

describe('memory: threads and regeneration', () => {
	it('regenerating from an older parent reads that parent’s thread and branches from it', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		const t1 = await turn(m, 'q1', 'a1');
		await turn(m, 'q2', 'a2');
		const h = await m.getHistoryPromptMessages({ parentMessageId: t1.messageId });
		assert.deepEqual(text(h.messages), ['user:q1', 'assistant:a1']);
		assert.equal(h.parentMessageId, t1.messageId);
		const regen = await turn(m, 'q2 again', 'a2 better', { parentMessageId: t1.messageId });
		assert.equal(regen.parentMessageId, t1.messageId);
		const now = await new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages();
		assert.deepEqual(text(now.messages), [
			'user:q1',
			'assistant:a1',
			'user:q2 again',
			'assistant:a2 better',
		]);
	});

	it('Dify #39031 at memory level: a regenerated first message does not cut the live thread', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		const t1 = await turn(m, 'q1', 'a1');
		await turn(m, 'q2', 'a2');
		// Regenerate the very first turn (an explicit null parent is the root: issue 7 #9), then continue
		// the ORIGINAL thread from t1.
		const root = await m.addMessages({
			userContent: 'q1 alt',
			assistantContent: 'a1 alt',
			parentMessageId: null,
		});
		assert.equal(root.parentMessageId, null, 'null parent means "the root" in the API');
		await m.flush();
		await turn(m, 'q3', 'a3', { parentMessageId: t1.messageId });
		const h = await m.getHistoryPromptMessages();
		assert.deepEqual(text(h.messages), ['user:q1', 'assistant:a1', 'user:q3', 'assistant:a3']);
	});

	it('window applies in node mode', async () => {
		const { options } = setup();
		const m = new NodeTokenBufferMemory('wf', 'conv', 'n', options);
		for (let i = 1; i <= 5; i++) await turn(m, `q${i}`, `a${i}`);
		const h = await m.getHistoryPromptMessages({ messageLimit: 2 });
		assert.deepEqual(text(h.messages), ['user:q4', 'assistant:a4', 'user:q5', 'assistant:a5']);
		assert.equal(h.droppedTurns, 3);
	});

	it('token budget applies in node mode, pairwise', async () => {
		const { options } = setup();
		const m = new NodeTokenBufferMemory('wf', 'conv', 'n', options);
		for (let i = 1; i <= 4; i++) await turn(m, `question number ${i}`, `answer number ${i}`);
		const all = await m.getHistoryPromptMessages({ maxTokenLimit: 10_000 });
		const perTurn = all.tokens / 4;
		const h = await m.getHistoryPromptMessages({ maxTokenLimit: perTurn * 2 + 1 });
		assert.equal(h.turns, 2);
		assert.equal(h.tokens, perTurn * 2);
		assert.deepEqual(
			text(h.messages).map((s) => s.split(':')[0]),
			['user', 'assistant', 'user', 'assistant'],
		);
	});

	it('an unknown parent is a clear error before anything is written', async () => {
		const { options, storage } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'q', 'a');
		await assert.rejects(
			m.getHistoryPromptMessages({ parentMessageId: 'missing' }),
			UnknownParentMessageError,
		);
		const puts = storage.calls.put;
		await assert.rejects(
			m.addMessages({ userContent: 'x', assistantContent: 'y', parentMessageId: 'missing' }),
			UnknownParentMessageError,
		);
		await m.flush();
		assert.equal(storage.calls.put, puts);
	});
});

describe('memory: Dify token-buffer scenarios', () => {
	it('no messages gives empty history and empty text', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		assert.deepEqual((await m.getHistoryPromptMessages()).messages, []);
		assert.equal(await m.getHistoryPromptText(), '');
	});

	it('plain user and assistant messages; a turn with an answer is kept', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'Hello', 'World');
		assert.deepEqual((await m.getHistoryPromptMessages()).messages, [
			{ role: 'user', content: 'Hello' },
			{ role: 'assistant', content: 'World' },
		]);
	});

	it('a turn whose answer is empty is skipped (no two user messages in a row)', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'q1', 'a1');
		await turn(m, 'q2', '');
		assert.deepEqual(text((await m.getHistoryPromptMessages()).messages), [
			'user:q1',
			'assistant:a1',
		]);
	});

	it('history text: default and custom prefixes, four lines, limits passed through', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'Hello', 'World');
		assert.equal(await m.getHistoryPromptText(), 'Human: Hello\nAssistant: World');
		assert.equal(
			await m.getHistoryPromptText({ humanPrefix: 'H', aiPrefix: 'A' }),
			'H: Hello\nA: World',
		);
		await turn(m, 'Again', 'Sure');
		assert.equal((await m.getHistoryPromptText()).split('\n').length, 4);
		assert.equal(
			await m.getHistoryPromptText({ messageLimit: 1, humanPrefix: 'U', aiPrefix: 'B' }),
			'U: Again\nB: Sure',
		);
		assert.equal(await m.getHistoryPromptText({ maxTokenLimit: 0 }), '');
	});

	it('history text shows images as [image], text only and image only', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		const img = {
			transferMethod: 'local_file' as const,
			data: PNG,
			mimeType: 'image/png',
			name: 'a.png',
		};
		await turn(m, 'look', 'a picture', { userFiles: [img] });
		await turn(m, '', 'an image back', { userFiles: [img], assistantFiles: [img] });
		assert.equal(
			await m.getHistoryPromptText({ maxTokenLimit: 5000 }),
			'Human: [image]\nlook\nAssistant: a picture\nHuman: [image]\n' +
				"Assistant: an image back\n[file: a.png (image/png)]\nHuman: [files of the assistant's answer above]\n[image]",
		);
	});
});

describe('memory: files', () => {
	it('copies local file bytes once, content-addressed, and rebuilds images as data URLs (files first)', async () => {
		const { disk, options } = setup();
		const a = new NodeTokenBufferMemory('wf', 'conv', 'A', options);
		const b = new NodeTokenBufferMemory('wf', 'conv', 'B', options);
		const img = {
			transferMethod: 'local_file' as const,
			data: PNG,
			mimeType: 'image/png',
			name: 'photo.png',
		};
		await turn(a, 'what is this?', 'a chart', { userFiles: [img] });
		await turn(b, 'same picture', 'yes', { userFiles: [img] });
		const files = await disk.list('memory_files/wf/conv/');
		assert.equal(files.length, 1, 'one copy for the conversation');
		assert.match(files[0].key, /^memory_files\/wf\/conv\/[0-9a-f]{64}$/);
		const ref = (await stored(disk, a.key))[0].files[0];
		assert.deepEqual(
			{ ...ref },
			{
				type: 'image',
				mime_type: 'image/png',
				name: 'photo.png',
				belongs_to: 'user',
				transfer_method: 'local_file',
				key: files[0].key,
				size: PNG.length,
			},
		);
		const h = await a.getHistoryPromptMessages({ imageDetail: 'low' });
		assert.deepEqual(h.messages[0], {
			role: 'user',
			content: [
				{
					type: 'image_url',
					image_url: { url: `data:image/png;base64,${PNG.toString('base64')}`, detail: 'low' },
				},
				{ type: 'text', text: 'what is this?' },
			],
		});
		assert.deepEqual(h.skippedFiles, []);
	});

	it('counts an image at a fixed estimate, once, at append', async () => {
		const { disk, options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'hi', 'ok', {
			userFiles: [
				{ transferMethod: 'local_file', data: PNG, mimeType: 'image/png', name: 'p.png' },
			],
		});
		const [user] = await stored(disk, m.key);
		assert.equal(
			user.token_count,
			new TiktokenCounter('o200k_base').count('hi') + IMAGE_TOKEN_ESTIMATE,
		);
	});

	it('remote images pass their URL; a corrupt PDF is a note saying so; assistant files follow the answer', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'compare', 'done', {
			userFiles: [
				{
					transferMethod: 'remote_url',
					url: 'https://example.com/x.jpg',
					mimeType: 'image/jpeg',
					name: 'x.jpg',
				},
				{
					transferMethod: 'local_file',
					data: Buffer.from('%PDF-1.4'),
					mimeType: 'application/pdf',
					name: 'report.pdf',
				},
			],
			assistantFiles: [
				{
					transferMethod: 'tool_file',
					data: Buffer.from('a,b\n1,2'),
					mimeType: 'text/csv',
					name: 'out.csv',
				},
			],
		});
		const h = await m.getHistoryPromptMessages();
		assert.deepEqual(h.messages[0].content, [
			{ type: 'image_url', image_url: { url: 'https://example.com/x.jpg' } },
			{
				type: 'text',
				text: '[file: report.pdf (application/pdf): text could not be extracted: it is not a valid PDF (damaged or incomplete)]',
			},
			{ type: 'text', text: 'compare' },
		]);
		// Providers take files from the user only: the answer names them, a user message carries them.
		assert.deepEqual(h.messages.slice(1), [
			{ role: 'assistant', content: 'done\n[file: out.csv (text/csv)]' },
			{
				role: 'user',
				content: [
					{ type: 'text', text: ASSISTANT_FILES_LEAD },
					{ type: 'text', text: '[file: out.csv (text/csv)]\na,b\n1,2' },
				],
			},
		]);
		assert.deepEqual(h.messageIds.slice(1), [h.messageIds[1], h.messageIds[1]]);
		await assert.rejects(
			m.addMessages({
				userContent: 'x',
				assistantContent: 'y',
				userFiles: [
					{
						transferMethod: 'remote_url',
						url: 'file:///etc/passwd',
						mimeType: 'image/png',
						name: 'p',
					},
				],
			}),
			/must be http\(s\)/,
		);
	});

	it('a file that cannot be rebuilt is skipped and reported; the read never fails', async () => {
		const { disk, storage, options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		const img = (name: string, byte: number) => ({
			transferMethod: 'local_file' as const,
			data: Buffer.from([byte, 1, 2]),
			mimeType: 'image/png',
			name,
		});
		const t = await turn(m, 'two pictures', 'seen', {
			userFiles: [img('gone.png', 1), img('broken.png', 2)],
		});
		const [user] = await stored(disk, m.key);
		await disk.delete(user.files[0].key as string); // pruned behind our back
		storage.failGetFor = new RegExp(user.files[1].key as string); // storage error on this one
		const h = await new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages();
		assert.equal(h.messages[0].content, 'two pictures', 'plain text when no file could be rebuilt');
		assert.deepEqual(
			h.skippedFiles.map((s) => [s.messageId, s.name, s.reason.split(':')[0]]),
			[
				[`${t.messageId}:user`, 'gone.png', 'file is no longer in storage'],
				[`${t.messageId}:user`, 'broken.png', 'could not be read'],
			],
		);
	});
});

describe('memory: tokens', () => {
	it('tokenizes each message once at append; reading history never re-tokenizes', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		const before = tokenizerStats.calls;
		await turn(m, 'first question', 'first answer');
		assert.equal(tokenizerStats.calls - before, 2);
		const mid = tokenizerStats.calls;
		for (let i = 0; i < 3; i++)
			await new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages();
		assert.equal(tokenizerStats.calls, mid);
	});

	it('stores real token counts of the model’s encoding', async () => {
		const { disk } = setup();
		const storage = disk;
		const q = '你好，世界。今天天气很好，我们去公园散步吧。';
		const m4o = new TokenBufferMemory('wf', 'c4o', { storage, model: 'gpt-4o' });
		const m35 = new TokenBufferMemory('wf', 'c35', { storage, model: 'gpt-3.5-turbo' });
		await turn(m4o, q, 'ok');
		await turn(m35, q, 'ok');
		assert.equal(
			(await stored(disk, m4o.key))[0].token_count,
			new TiktokenCounter('o200k_base').count(q),
		);
		assert.equal(
			(await stored(disk, m35.key))[0].token_count,
			new TiktokenCounter('cl100k_base').count(q),
		);
		assert.notEqual(
			(await stored(disk, m4o.key))[0].token_count,
			(await stored(disk, m35.key))[0].token_count,
		);
	});

	it('a token-count failure keeps the turn, uses a byte-length bound and warns', async () => {
		const warnings: string[] = [];
		const { disk, options } = setup({
			tokenCounter: {
				encoding: 'broken',
				count: () => {
					throw new Error('ranks unavailable');
				},
			},
			onWarning: (w) => warnings.push(w),
		});
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'héllo', 'wörld');
		const [u, a] = await stored(disk, m.key);
		assert.equal(u.token_count, 6);
		assert.equal(a.token_count, 6);
		assert.equal(warnings.length, 2);
		assert.match(warnings[0], /Token counting failed \(ranks unavailable\)/);
		const turnTokens = 12 + 2 * MESSAGE_FRAMING_TOKENS;
		assert.equal(
			(await m.getHistoryPromptMessages({ maxTokenLimit: turnTokens - 1 })).turns,
			0,
			'the bound still limits history',
		);
		assert.equal((await m.getHistoryPromptMessages({ maxTokenLimit: turnTokens })).turns, 1);
	});
});

describe('memory: bad input and failures lose nothing', () => {
	it('a corrupt stored document is an error naming the key and is never overwritten', async () => {
		const { disk, options } = setup();
		const m = new NodeTokenBufferMemory('wf', 'conv', 'n', options);
		const file = path.join(disk.root, ...m.key.split('/'));
		await turn(m, 'q', 'a');
		writeFileSync(file, '{"version":1,"messages":[{"broken"');
		const before = readFileSync(file);
		const fresh = new NodeTokenBufferMemory('wf', 'conv', 'n', options);
		await assert.rejects(
			fresh.getHistoryPromptMessages(),
			(e: unknown) => e instanceof CorruptDocumentError && e.message.includes(m.key),
		);
		await assert.rejects(
			fresh.addMessages({ userContent: 'x', assistantContent: 'y' }),
			CorruptDocumentError,
		);
		await fresh.flush();
		assert.deepEqual(readFileSync(file), before);
	});

	it('an unknown document version is refused and left alone, even when a flush reloads it', async () => {
		const { disk, options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'q', 'a');
		await m.addMessages({ userContent: 'q2', assistantContent: 'a2' });
		const file = path.join(disk.root, ...m.key.split('/'));
		writeFileSync(file, JSON.stringify({ version: 2, messages: [], newer: true })); // a newer writer
		await assert.rejects(m.flush(), /unknown document version 2/);
		assert.equal(JSON.parse(readFileSync(file, 'utf8')).version, 2);
	});

	it('a storage outage on read is an error, never an empty history', async () => {
		const { storage, options } = setup();
		await turn(new TokenBufferMemory('wf', 'conv', options), 'q', 'a');
		storage.faults.get.push('outage');
		await assert.rejects(
			new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages(),
			StorageError,
		);
	});

	it('a storage outage on write fails the flush and keeps the turn pending for a retry', async () => {
		const { disk, storage, options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'q1', 'a1');
		await m.addMessages({ userContent: 'q2', assistantContent: 'a2' });
		storage.faults.put.push('outage');
		await assert.rejects(m.flush(), /simulated outage writing/);
		assert.equal((await stored(disk, m.key)).length, 2);
		assert.deepEqual(await m.flush(), { written: true, attempts: 1 });
		assert.equal((await stored(disk, m.key)).length, 4);
	});

	it('a conflict reloads, merges by message ID and re-threads an implicit parent', async () => {
		const { disk, options } = setup();
		const one = new TokenBufferMemory('wf', 'conv', options);
		const two = new TokenBufferMemory('wf', 'conv', options);
		await one.getHistoryPromptMessages();
		await two.getHistoryPromptMessages(); // both read the same (empty) version
		const t1 = await one.addMessages({ userContent: 'from one', assistantContent: 'r1' });
		const t2 = await two.addMessages({ userContent: 'from two', assistantContent: 'r2' });
		await one.flush();
		assert.deepEqual(await two.flush(), { written: true, attempts: 2 });
		const all = await stored(disk, one.key);
		assert.equal(all.length, 4);
		assert.equal(
			all[2].parent_message_id,
			t1.messageId,
			'the later turn now follows the earlier one',
		);
		const h = await new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages();
		assert.deepEqual(text(h.messages), [
			'user:from one',
			'assistant:r1',
			'user:from two',
			'assistant:r2',
		]);
		assert.equal(h.parentMessageId, t2.messageId);
	});

	it('a write whose response was lost is not duplicated on retry', async () => {
		const { disk, storage, options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await m.addMessages({ userContent: 'q', assistantContent: 'a' });
		storage.faults.put.push('write-then-conflict');
		assert.deepEqual(await m.flush(), { written: false, attempts: 2 });
		assert.equal((await stored(disk, m.key)).length, 2);
	});

	it('conflicts until retries run out give a clear error and keep the turn pending', async () => {
		const { storage, options } = setup({ maxFlushAttempts: 3, retryBaseMs: 1 });
		const m = new TokenBufferMemory('wf', 'conv', options);
		await m.addMessages({ userContent: 'q', assistantContent: 'a' });
		storage.faults.put.push('conflict', 'conflict', 'conflict');
		await assert.rejects(m.flush(), (e: unknown) => {
			assert.ok(e instanceof FlushConflictError);
			assert.match(e.message, /3 attempts in a row conflicted.*The turn was not saved/);
			return true;
		});
		assert.deepEqual(await m.flush(), { written: true, attempts: 1 });
	});

	it('bad or duplicate message IDs are refused', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await assert.rejects(
			m.addMessages({ messageId: 'a/b', userContent: 'x', assistantContent: 'y' }),
			InvalidIdError,
		);
		await assert.rejects(
			m.addMessages({ messageId: '', userContent: 'x', assistantContent: 'y' }),
			InvalidIdError,
		);
		await turn(m, 'x', 'y', { messageId: 'turn-1' });
		await assert.rejects(
			m.addMessages({ messageId: 'turn-1', userContent: 'x', assistantContent: 'z' }),
			DuplicateMessageIdError,
		);
	});

	it('another writer storing the same message ID with other content is a duplicate error', async () => {
		const { options } = setup();
		const one = new TokenBufferMemory('wf', 'conv', options);
		const two = new TokenBufferMemory('wf', 'conv', options);
		await one.getHistoryPromptMessages();
		await two.getHistoryPromptMessages();
		await one.addMessages({ messageId: 'same', userContent: 'q', assistantContent: 'one' });
		await two.addMessages({ messageId: 'same', userContent: 'q', assistantContent: 'two' });
		await one.flush();
		await assert.rejects(two.flush(), DuplicateMessageIdError);
	});
});

describe('memory: storage use', () => {
	it('one read and one conditional write per turn', async () => {
		const { storage, options } = setup();
		await turn(new TokenBufferMemory('wf', 'conv', options), 'q0', 'a0');
		const before = { ...storage.calls };
		const m = new TokenBufferMemory('wf', 'conv', options);
		// Every history read asks storage for the current version (issue 7 #12: never stale) ...
		await m.getHistoryPromptMessages();
		assert.equal(storage.calls.get - before.get, 1);
		await m.getHistoryPromptMessages();
		assert.equal(storage.calls.get - before.get, 2);
		// ... and appending and flushing the turn reads nothing more: one conditional write.
		await turn(m, 'q', 'a');
		assert.equal(storage.calls.get - before.get, 2);
		assert.equal(storage.calls.put - before.put, 1);
	});

	it('gzip option stores gzip; both forms read back', async () => {
		const { disk, options } = setup({ gzip: true });
		const m = new TokenBufferMemory('wf', 'conv', options);
		await turn(m, 'q', 'a');
		const raw = (await disk.get(m.key))!.body;
		assert.deepEqual([raw[0], raw[1]], [0x1f, 0x8b]);
		const plain = new TokenBufferMemory('wf', 'conv', { ...options, gzip: false });
		await turn(plain, 'q2', 'a2'); // reads gzip, writes plain
		assert.equal(Buffer.from((await disk.get(m.key))!.body).toString()[0], '{');
		assert.equal(
			(await new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages()).turns,
			2,
		);
	});

	it('clear() deletes the document and pending turns', async () => {
		const { disk, options } = setup();
		const m = new NodeTokenBufferMemory('wf', 'conv', 'n', options);
		await turn(m, 'q', 'a');
		await m.addMessages({ userContent: 'pending', assistantContent: 'x' });
		await m.clear();
		assert.equal(await disk.get(m.key), null);
		assert.equal((await m.getHistoryPromptMessages()).turns, 0);
		assert.deepEqual(await m.flush(), { written: false, attempts: 0 });
	});
});

describe('memory: document cache (decoded once per stored version)', () => {
	it('a later memory object reads an unchanged document without its body', async () => {
		const { storage, options } = setup();
		await turn(new TokenBufferMemory('app', 'c', options), 'q1', 'a1');
		const reads = storage.calls.get;
		const h = await new TokenBufferMemory('app', 'c', options).getHistoryPromptMessages();
		assert.deepEqual(text(h.messages), ['user:q1', 'assistant:a1']);
		assert.equal(
			storage.calls.get,
			reads + 1,
			'still one read per turn: it asks for the current version',
		);
		assert.equal(storage.notModified, 1, 'and that read skipped the body');
	});

	it('a document changed by another writer is read again, never served stale', async () => {
		const { disk, storage, options } = setup();
		const m = new TokenBufferMemory('app', 'c', options);
		await turn(m, 'q1', 'a1');
		// Another process appends a turn: the stored version changes under the cache.
		const messages = [...(await m.messages())];
		messages.push(
			{
				...messages[0],
				message_id: 'other:user',
				parent_message_id: messages[1].message_id,
				content: 'q2',
			},
			{ ...messages[1], message_id: 'other', parent_message_id: 'other:user', content: 'a2' },
		);
		await disk.put(m.key, encodeDocument({ version: 1, messages }));
		const notModifiedBefore = storage.notModified;
		const h = await new TokenBufferMemory('app', 'c', options).getHistoryPromptMessages();
		assert.deepEqual(text(h.messages), ['user:q1', 'assistant:a1', 'user:q2', 'assistant:a2']);
		assert.equal(storage.notModified, notModifiedBefore, 'the changed document was read in full');
	});

	it('a document damaged after it was cached is an error, not the cached copy', async () => {
		const { disk, options } = setup();
		const m = new TokenBufferMemory('app', 'c', options);
		await turn(m, 'q1', 'a1');
		writeFileSync(path.join(disk.root, ...m.key.split('/')), '{"version": 1, "messages": [');
		await assert.rejects(
			new TokenBufferMemory('app', 'c', options).getHistoryPromptMessages(),
			CorruptDocumentError,
		);
	});

	it('after clear() or a cold cache, memory reads the stored document in full', async () => {
		const { storage, options } = setup();
		const m = new TokenBufferMemory('app', 'c', options);
		await turn(m, 'q1', 'a1');
		clearDocumentCache();
		assert.equal((await new TokenBufferMemory('app', 'c', options).messages()).length, 2);
		assert.equal(storage.notModified, 0);
		await m.clear();
		assert.equal((await new TokenBufferMemory('app', 'c', options).messages()).length, 0);
	});

	it('shared documents are frozen, so no memory object can change another’s view', async () => {
		const { options } = setup();
		await turn(new TokenBufferMemory('app', 'c', options), 'q1', 'a1');
		const view = await new TokenBufferMemory('app', 'c', options).messages();
		assert.ok(
			Object.isFrozen(view[0]) && Object.isFrozen(view[0].files) && Object.isFrozen(view[1]),
		);
		assert.throws(() => (view as StoredMessage[]).push(view[0]), TypeError);
	});
});
