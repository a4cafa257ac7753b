// Issue 7: each defect found by the acceptance review, reproduced at engine level. Every test here
// failed before its fix.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { Tiktoken } from 'js-tiktoken/lite';

import {
	decodeDocument,
	deleteConversationMemory,
	DuplicateMessageIdError,
	FlushConflictError,
	InvalidIdError,
	pruneMemory,
	selectHistory,
	sweepLeftovers,
	TiktokenCounter,
	TokenBufferMemory,
} from '../../../src/internal';
import type { MemoryOptions, StoredMessage } from '../../../src/internal';
import { memorySetup, promptText } from '../../support/storages';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const text = promptText;
const setup = memorySetup;

async function storedMessages(options: MemoryOptions, key: string): Promise<StoredMessage[]> {
	const got = await options.storage.get(key);
	return got ? decodeDocument(key, got.body).messages : [];
}

describe('issue 7 #2: duplicate IDs can never reach storage', () => {
	it('two concurrent addMessages with one ID on one object: exactly one is refused, the document stays readable', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		const results = await Promise.allSettled([
			m.addMessages({
				messageId: 'same',
				userContent: 'q1',
				assistantContent: 'a1',
				userFiles: [
					{ transferMethod: 'local_file', data: PNG, mimeType: 'image/png', name: 'a.png' },
				],
			}),
			m.addMessages({ messageId: 'same', userContent: 'q2', assistantContent: 'a2' }),
		]);
		assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
		const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
		assert.ok(rejected.reason instanceof DuplicateMessageIdError, String(rejected.reason));
		await m.flush();
		// Another process (a fresh object with an empty cache would do the same) reads it without error.
		const stored = await storedMessages(options, m.key);
		assert.deepEqual(
			stored.map((s) => s.message_id),
			['same:user', 'same'],
		);
	});

	it('a duplicate of a pending turn is refused, not only of a stored one', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await m.addMessages({ messageId: 't', userContent: 'q', assistantContent: 'a' });
		await assert.rejects(
			m.addMessages({ messageId: 't', userContent: 'q', assistantContent: 'a' }),
			DuplicateMessageIdError,
		);
		// "t:user" as a turn ID would collide with turn t's user message.
		await assert.rejects(
			m.addMessages({ messageId: 't:user', userContent: 'q', assistantContent: 'a' }),
			DuplicateMessageIdError,
		);
	});
});

describe('issue 7 #3: a turn added while a flush is in flight', () => {
	it('is kept pending and stored by the next flush', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await m.addMessages({ messageId: 't1', userContent: 'q1', assistantContent: 'a1' });
		const first = m.flush();
		const added = m.addMessages({ messageId: 't2', userContent: 'q2', assistantContent: 'a2' });
		await Promise.all([first, added]);
		await m.flush();
		const ids = (await storedMessages(options, m.key)).map((s) => s.message_id);
		assert.deepEqual(ids, ['t1:user', 't1', 't2:user', 't2']);
	});

	it('concurrent flushes of one object store every turn once', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		const work: Promise<unknown>[] = [];
		for (let i = 0; i < 10; i++) {
			work.push(
				m
					.addMessages({ messageId: `t${i}`, userContent: `q${i}`, assistantContent: `a${i}` })
					.then(() => m.flush()),
			);
		}
		await Promise.all(work);
		await m.flush();
		const ids = (await storedMessages(options, m.key))
			.filter((s) => s.role === 'assistant')
			.map((s) => s.message_id);
		assert.deepEqual(ids.sort(), Array.from({ length: 10 }, (_, i) => `t${i}`).sort());
	});
});

describe('issue 7 #4: deletion and housekeeping leave no copy of a conversation', () => {
	it('deleteConversationMemory removes temporary files left by a killed writer', async () => {
		const { disk, options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await m.addMessages({ userContent: 'my secret is 1234', assistantContent: 'noted' });
		await m.flush();
		const dir = path.join(disk.root, 'conversation_memory', 'wf');
		const leftover = path.join(dir, '.conv.json.4242.deadbeef0000.tmp');
		writeFileSync(leftover, readFileSync(path.join(dir, 'conv.json')));
		await deleteConversationMemory(disk, 'wf', 'conv');
		assert.equal(existsSync(leftover), false, 'the temporary copy is gone');
		const remaining = readdirSync(dir);
		assert.deepEqual(remaining, []);
	});

	it('housekeeping removes orphaned temporary files older than a safe age, and keeps fresh ones', async () => {
		const { disk, options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await m.addMessages({ userContent: 'q', assistantContent: 'a' });
		await m.flush();
		const dir = path.join(disk.root, 'conversation_memory', 'wf');
		const old = path.join(dir, '.conv.json.1.aaaaaaaaaaaa.tmp');
		const fresh = path.join(dir, '.conv.json.2.bbbbbbbbbbbb.tmp');
		writeFileSync(old, 'copy');
		writeFileSync(fresh, 'copy');
		const hourAgo = new Date(Date.now() - 3_600_000);
		utimesSync(old, hourAgo, hourAgo);
		const swept = await sweepLeftovers(disk);
		assert.equal(swept.length, 1);
		assert.equal(existsSync(old), false);
		assert.equal(existsSync(fresh), true, 'a write in progress is never disturbed');
		// pruneMemory sweeps too.
		utimesSync(fresh, hourAgo, hourAgo);
		await pruneMemory(disk, { olderThanDays: 30 });
		assert.equal(existsSync(fresh), false);
		assert.equal(existsSync(path.join(dir, 'conv.json')), true);
	});
});

describe('issue 7 #5: an empty app ID filter is an error', () => {
	it('pruneMemory({ appId: "" }) refuses instead of pruning every app', async () => {
		const { disk, options } = setup();
		for (const app of ['a', 'b']) {
			const m = new TokenBufferMemory(app, 'conv', options);
			await m.addMessages({ userContent: 'q', assistantContent: 'a' });
			await m.flush();
		}
		await assert.rejects(
			pruneMemory(disk, { olderThanDays: 0, appId: '', now: new Date(Date.now() + 86_400_000) }),
			InvalidIdError,
		);
		assert.equal((await disk.list('conversation_memory/')).length, 2);
	});
});

describe('issue 7 #6: a failed flush leaves the object able to succeed', () => {
	it('after FlushConflictError the next flush succeeds with no other writer', async () => {
		const { options } = setup({ maxFlushAttempts: 1, retryBaseMs: 1 });
		const m = new TokenBufferMemory('wf', 'conv', options);
		await m.getHistoryPromptMessages();
		const other = new TokenBufferMemory('wf', 'conv', options);
		await other.addMessages({ messageId: 'other', userContent: 'q0', assistantContent: 'a0' });
		await other.flush();
		await m.addMessages({ messageId: 'mine', userContent: 'q1', assistantContent: 'a1' });
		await assert.rejects(m.flush(), FlushConflictError);
		assert.deepEqual(await m.flush(), { written: true, attempts: 1 });
		const ids = (await storedMessages(options, m.key)).map((s) => s.message_id);
		assert.deepEqual(ids, ['other:user', 'other', 'mine:user', 'mine']);
	});
});

describe('issue 7 #7: the documented ID limit holds for the IDs users give', () => {
	it('a 200-byte message ID is accepted; 201 bytes is refused by name', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		const id = 'x'.repeat(200);
		await m.addMessages({ messageId: id, userContent: 'q', assistantContent: 'a' });
		await m.flush();
		assert.deepEqual(
			(await storedMessages(options, m.key)).map((s) => s.message_id),
			[`${id}:user`, id],
		);
		await assert.rejects(
			m.addMessages({ messageId: 'y'.repeat(201), userContent: 'q', assistantContent: 'a' }),
			/message_id: must be at most 200 bytes, got 201/,
		);
	});

	it('checkTurn() validates every ID a turn will use, before any model call', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		await m.addMessages({ messageId: 't1', userContent: 'q', assistantContent: 'a' });
		await m.flush();
		await m.checkTurn({ messageId: 'x'.repeat(196) });
		await assert.rejects(m.checkTurn({ messageId: 'a/b' }), InvalidIdError);
		await assert.rejects(m.checkTurn({ messageId: 't1' }), DuplicateMessageIdError);
		await assert.rejects(
			m.checkTurn({ parentMessageId: 'nope' }),
			/Parent message ID "nope" was not found/,
		);
		await assert.rejects(
			m.checkTurn({ parentMessageId: 'x'.repeat(201) }),
			/parent_message_id: must be at most 200 bytes/,
		);
	});
});

describe('issue 7 #8: prune never deletes a file a fresh turn re-used', () => {
	it('re-storing an existing file refreshes it, and prune re-checks before deleting', async () => {
		const { disk, storage, options } = setup();
		const image = [
			{ transferMethod: 'local_file' as const, data: PNG, mimeType: 'image/png', name: 'shot.png' },
		];
		const m = new TokenBufferMemory('wf', 'conv', options);
		await m.addMessages({ userContent: 'look', userFiles: image, assistantContent: 'seen' });
		await m.flush();
		// Everything is 40 days old.
		const old = new Date(Date.now() - 40 * 86_400_000);
		for (const o of await disk.list(''))
			utimesSync(path.join(disk.root, ...o.key.split('/')), old, old);
		// Just after prune deleted the old document, a new turn stores the same image again.
		let raced = false;
		const original = storage.delete.bind(storage);
		storage.delete = async (key, opts) => {
			await original(key, opts);
			if (!raced && key.endsWith('conv.json')) {
				raced = true;
				const fresh = new TokenBufferMemory('wf', 'conv', options);
				await fresh.addMessages({
					userContent: 'look again',
					userFiles: image,
					assistantContent: 'seen again',
				});
				await fresh.flush();
			}
		};
		const result = await pruneMemory(storage, { olderThanDays: 30 });
		assert.ok(raced);
		assert.ok(result.deleted.some((k) => k.endsWith('conv.json')));
		const h = await new TokenBufferMemory('wf', 'conv', options).getHistoryPromptMessages();
		assert.deepEqual(h.skippedFiles, [], 'the new turn’s image is still there');
		assert.deepEqual(text(h.messages), ['user:[parts]', 'assistant:seen again']);
	});
});

describe('issue 7 #9: the first turn can be regenerated', () => {
	it('parentMessageId: null starts at the root: no history, and the new turn is a second root', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'conv', options);
		const t1 = await m.addMessages({ userContent: 'q1', assistantContent: 'a1' });
		await m.addMessages({ userContent: 'q2', assistantContent: 'a2' });
		await m.flush();
		const h = await m.getHistoryPromptMessages({ parentMessageId: null });
		assert.deepEqual(h.messages, []);
		assert.equal(h.parentMessageId, null);
		const regen = await m.addMessages({
			userContent: 'q1',
			assistantContent: 'a1 better',
			parentMessageId: null,
		});
		assert.equal(regen.parentMessageId, null);
		await m.flush();
		const stored = await storedMessages(options, m.key);
		assert.equal(stored.find((s) => s.message_id === regen.userMessageId)?.parent_message_id, null);
		// The regenerated root is now the newest thread; the old one is still reachable from t1.
		assert.deepEqual(text((await m.getHistoryPromptMessages()).messages), [
			'user:q1',
			'assistant:a1 better',
		]);
		assert.deepEqual(
			text((await m.getHistoryPromptMessages({ parentMessageId: t1.messageId })).messages),
			['user:q1', 'assistant:a1'],
		);
	});
});

describe('issue 7 #10: long CJK prose is counted like js-tiktoken', () => {
	const zh =
		'我们今天讨论的是记忆系统的设计与实现，包括会话级别和节点级别的历史记录。这个系统需要在任何对话长度下都保持快速，并且不会丢失或泄露任何一轮对话。';
	const ja =
		'これは日本語の文章です。記憶システムは会話の長さに関係なく速くなければなりません。東京の天気は晴れです。';
	const repeat = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
	/* eslint-disable @typescript-eslint/no-require-imports */
	const reference = new Tiktoken(require('js-tiktoken/ranks/o200k_base'));

	for (const [name, sample, chars] of [
		['Chinese', zh, 17_500],
		['Chinese', zh, 27_000],
		['Japanese', ja, 27_000],
	] as const) {
		it(
			`${name}, ${chars.toLocaleString('en')} characters: within 2% of js-tiktoken`,
			{ timeout: 60_000 },
			() => {
				const textToCount = repeat(sample, chars);
				const exact = reference.encode(textToCount, [], []).length;
				const ours = new TiktokenCounter('o200k_base').count(textToCount);
				assert.ok(Math.abs(ours - exact) / exact <= 0.02, `ours ${ours}, js-tiktoken ${exact}`);
			},
		);
	}

	it('CJK without any punctuation is still counted closely', { timeout: 60_000 }, () => {
		const t = repeat(zh.replace(/[，。]/g, ''), 3000);
		const exact = reference.encode(t, [], []).length;
		const ours = new TiktokenCounter('o200k_base').count(t);
		assert.ok(Math.abs(ours - exact) / exact <= 0.03, `ours ${ours}, js-tiktoken ${exact}`);
	});
});

describe('issue 7 #11: limits are never silently unbounded', () => {
	const thread: StoredMessage[] = [];
	for (let i = 0; i < 4; i++) {
		const at = '2026-01-01T00:00:00.000Z';
		thread.push({
			message_id: `u${i}`,
			parent_message_id: i ? `a${i - 1}` : null,
			role: 'user',
			content: 'q',
			files: [],
			token_count: 10,
			created_at: at,
		});
		thread.push({
			message_id: `a${i}`,
			parent_message_id: `u${i}`,
			role: 'assistant',
			content: 'a',
			files: [],
			token_count: 10,
			created_at: at,
		});
	}
	const newestFirst = () => [...thread].reverse();

	for (const bad of [Number.NaN, -1, Number.POSITIVE_INFINITY, '100' as unknown as number]) {
		it(`maxTokenLimit ${String(bad)} is an error naming the option`, async () => {
			assert.throws(() => selectHistory(newestFirst(), { maxTokenLimit: bad }), /maxTokenLimit/);
			const { options } = setup();
			await assert.rejects(
				new TokenBufferMemory('wf', 'c', options).getHistoryPromptMessages({ maxTokenLimit: bad }),
				/maxTokenLimit/,
			);
		});
	}

	it('messageLimit NaN is an error naming the option', () => {
		assert.throws(() => selectHistory(newestFirst(), { messageLimit: Number.NaN }), /messageLimit/);
	});
});

describe('issue 7 #12: a long-lived memory object never serves a stale document', () => {
	it('a second read on the same object sees turns another writer flushed meanwhile', async () => {
		const { options } = setup();
		const longLived = new TokenBufferMemory('wf', 'conv', options);
		assert.deepEqual((await longLived.getHistoryPromptMessages()).messages, []);
		const other = new TokenBufferMemory('wf', 'conv', options);
		await other.addMessages({ userContent: 'from other', assistantContent: 'r' });
		await other.flush();
		assert.deepEqual(text((await longLived.getHistoryPromptMessages()).messages), [
			'user:from other',
			'assistant:r',
		]);
		assert.equal((await longLived.messages()).length, 2);
		// Its own pending turn stays visible on top of the fresh document.
		await longLived.addMessages({ userContent: 'mine', assistantContent: 'r2' });
		await other.addMessages({ userContent: 'other again', assistantContent: 'r3' });
		await other.flush();
		const contents = (await longLived.messages()).map((m) => m.content);
		assert.deepEqual(contents, ['from other', 'r', 'other again', 'r3', 'mine', 'r2']);
	});
});

describe('issue 7 #10: the byte-pair counter gives js-tiktoken’s exact counts', () => {
	/* eslint-disable @typescript-eslint/no-require-imports */
	const references = {
		cl100k_base: new Tiktoken(require('js-tiktoken/ranks/cl100k_base')),
		o200k_base: new Tiktoken(require('js-tiktoken/ranks/o200k_base')),
	};
	/* eslint-enable @typescript-eslint/no-require-imports */
	// A small deterministic generator, so a failure names a reproducible input.
	let seed = 7;
	const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
	const alphabet = [
		'a',
		'e',
		'th',
		'ing',
		' ',
		'  ',
		'\n',
		'.',
		',',
		'!',
		'1',
		'23',
		'É',
		'ß',
		'中',
		'文',
		'。',
		'の',
		'ア',
		'한',
		'Я',
		'😀',
		'👍🏽',
		'\t',
		'<|endoftext|>',
		'x',
		'xx',
		'+/',
	];
	const sample = (n: number) =>
		Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');

	for (const encoding of ['cl100k_base', 'o200k_base'] as const) {
		it(`${encoding}: 300 random mixed-script texts count exactly as encode().length`, () => {
			const ours = new TiktokenCounter(encoding);
			for (let i = 0; i < 300; i++) {
				const t = sample(1 + Math.floor(random() * 200));
				assert.equal(
					ours.count(t),
					references[encoding].encode(t, [], []).length,
					JSON.stringify(t),
				);
			}
		});
	}
});
