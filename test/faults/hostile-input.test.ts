// Hostile input (issue 7), on local disk and on radosgw.
// IDs: path separators, "..", NUL and other control characters (C0, DEL, C1), over 200 bytes, unpaired
// UTF-16 surrogates (they cannot round-trip through UTF-8, so two of them would share one key), and
// non-strings (objects, arrays, numbers, null): each is an InvalidIdError naming the field, and nothing is
// written anywhere (on disk the whole parent folder is compared before and after). Odd but valid Unicode
// (emoji, ZWJ sequences, an RTL override, CJK, decomposed accents) and exactly 200 bytes are accepted and
// stored under exactly that key: IDs are checked, never rewritten.
// Documents: truncated, not JSON, failing the schema, of an unknown version, gzip garbage: reading is a
// CorruptDocumentError naming the key, appending on top of one fails, and the bad bytes stay byte-identical.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';

import {
	conversationMemoryKey,
	CorruptDocumentError,
	decodeDocument,
	InvalidIdError,
	LocalDiskStorage,
	nodeMemoryKey,
	NodeTokenBufferMemory,
	TokenBufferMemory,
} from '../../src/internal';
import type { MemoryStorage } from '../../src/internal';
import { storedDocument, turnIds, walkTree } from '../support/faults';
import { ensureRgw, rgwStorage } from '../support/rgw';
import { tempDir } from '../support/storages';

/** Strings no ID may be, with why. */
const REFUSED: [string, string][] = [
	['a/b', 'a slash'],
	['/etc', 'a leading slash'],
	['a\\b', 'a backslash'],
	['..', 'dot-dot'],
	['../escape', 'a parent reference'],
	['x/../../y', 'a traversal'],
	['.', 'a lone dot'],
	['', 'empty'],
	['nul\u0000byte', 'NUL'],
	['bell\u0007', 'a C0 control'],
	['tab\there', 'a tab'],
	['line\nbreak', 'a newline'],
	['del\u007f', 'DEL'],
	['next-line\u0085', 'a C1 control (NEL)'],
	['csi\u009b', 'a C1 control (CSI)'],
	['x'.repeat(201), '201 bytes'],
	['é'.repeat(101), '202 bytes in 101 characters'],
	['lone-high\ud800', 'an unpaired high surrogate'],
	['\udc00lone-low', 'an unpaired low surrogate'],
	['swapped\udc00\ud800', 'a low surrogate before a high one'],
];

/** Values of the wrong type: the session ID a webhook passes through unvalidated, for example. */
const NOT_STRINGS: [unknown, string][] = [
	[{ user: 'alice' }, 'an object'],
	[['x', 'y'], 'an array'],
	[42, 'a number'],
	[null, 'null'],
	[undefined, 'undefined'],
	[true, 'a boolean'],
];

/** Odd but valid IDs: accepted, stored under exactly that key. */
const ACCEPTED: [string, string][] = [
	['🙂', 'an emoji'],
	['👩\u200d👩\u200d👧', 'a ZWJ sequence'],
	['zero\u200bwidth', 'a zero-width space'],
	['invoice\u202egpj.exe', 'an RTL override'],
	['会话-123', 'CJK'],
	['caf\u00e9', 'a precomposed accent'],
	['cafe\u0301', 'a decomposed accent (another ID than the precomposed one)'],
	['.hidden', 'a leading dot'],
	['with space and "quotes"', 'spaces and quotes'],
	['x'.repeat(200), 'exactly 200 bytes'],
	['é'.repeat(100), '200 bytes in 100 characters'],
	['😀'.repeat(50), '200 bytes of emoji (surrogate pairs)'],
];

const show = (v: unknown) =>
	typeof v === 'string' ? JSON.stringify(v.length > 24 ? `${v.slice(0, 24)}…` : v) : String(v);

function assertInvalidId(field: string, attempt: () => unknown | Promise<unknown>, what: string) {
	return Promise.resolve()
		.then(attempt)
		.then(
			() => assert.fail(`${field} ${what} was accepted`),
			(e: unknown) => {
				assert.ok(
					e instanceof InvalidIdError,
					`${field} ${what}: an InvalidIdError, got ${String(e)}`,
				);
				assert.equal(e.field, field, `${what}: the error names the field`);
				assert.ok(e.message.includes(field), `${what}: the message names the field: ${e.message}`);
			},
		);
}

interface Backend {
	name: string;
	/** A storage, and a snapshot of everything around it (on disk: the parent folder of the root). */
	make(): Promise<{ storage: MemoryStorage; everything(): Promise<string[]>; root?: string }>;
}

const backends: Backend[] = [
	{
		name: 'local disk',
		make: async () => {
			const parent = tempDir('hostile');
			const root = path.join(parent, 'memory');
			return {
				storage: new LocalDiskStorage({ root }),
				everything: async () => walkTree(parent),
				root,
			};
		},
	},
	{
		name: 'radosgw',
		make: async () => {
			const s3 = await rgwStorage();
			return { storage: s3, everything: async () => (await s3.list('')).map((o) => o.key).sort() };
		},
	},
];

/** Bad stored documents, each made from the good document it replaces. */
const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const firstMessage = (good: Buffer) => JSON.parse(good.toString()).messages[0];
const BAD_DOCUMENTS: [string, (good: Buffer) => Buffer][] = [
	['truncated', (good) => good.subarray(0, Math.floor(good.length / 2))],
	['empty', () => Buffer.alloc(0)],
	['not JSON', () => Buffer.from('hello, I am not a memory')],
	['a JSON array', () => json([])],
	['JSON null', () => json(null)],
	[
		'a message with an unknown role',
		(good) => json({ version: 1, messages: [{ ...firstMessage(good), role: 'robot' }] }),
	],
	[
		'a negative token count',
		(good) => json({ version: 1, messages: [{ ...firstMessage(good), token_count: -1 }] }),
	],
	['messages not a list', () => json({ version: 1, messages: {} })],
	[
		'a duplicate message ID',
		(good) => json({ version: 1, messages: [firstMessage(good), firstMessage(good)] }),
	],
	['unknown version 99', () => json({ version: 99, messages: [] })],
	['without a version', () => json({ messages: [] })],
	[
		'gzip garbage',
		() =>
			Buffer.concat([
				Buffer.from([0x1f, 0x8b, 0x08, 0x00]),
				Buffer.from('definitely not deflate data'),
			]),
	],
	['truncated gzip', (good) => gzipSync(good).subarray(0, 20)],
	['gzipped text that is not JSON', () => gzipSync(Buffer.from('plain text, gzipped'))],
];

for (const backend of backends) {
	describe(`hostile input on ${backend.name}`, () => {
		it('refused IDs: an InvalidIdError naming the field, for every ID field; nothing written anywhere', async () => {
			const { storage, everything } = await backend.make();
			const options = { storage };
			const m = new TokenBufferMemory('wf', 'hostile', options);
			await m.getHistoryPromptMessages();
			const before = await everything();
			const turn = { userContent: 'q', assistantContent: 'a' };
			for (const [bad, why] of [...REFUSED, ...NOT_STRINGS] as [unknown, string][]) {
				const what = `${show(bad)} (${why})`;
				await assertInvalidId(
					'app_id',
					() => new TokenBufferMemory(bad as string, 'c', options),
					what,
				);
				await assertInvalidId(
					'conversation_id',
					() => new TokenBufferMemory('wf', bad as string, options),
					what,
				);
				await assertInvalidId(
					'node_id',
					() => new NodeTokenBufferMemory('wf', 'c', bad as string, options),
					what,
				);
				// Node memory without a conversation ID is a different, documented error (MissingConversationIdError).
				if (!['', null, undefined].includes(bad as string))
					await assertInvalidId(
						'conversation_id',
						() => new NodeTokenBufferMemory('wf', bad as string, 'n', options),
						what,
					);
				// An omitted message ID (undefined, null) means "make one up"; an omitted parent ('' too) means
				// "the newest turn" and null the root: those are not bad IDs.
				if (bad !== undefined && bad !== null)
					await assertInvalidId(
						'message_id',
						() => m.addMessages({ ...turn, messageId: bad as string }),
						what,
					);
				if (bad !== undefined && bad !== null && bad !== '')
					await assertInvalidId(
						'parent_message_id',
						() => m.addMessages({ ...turn, parentMessageId: bad as string }),
						what,
					);
			}
			for (const bad of ['../escape', '/abs', 'a/../b', 'a//b', 'nul\u0000'])
				await assertInvalidId(
					'key prefix',
					() => new TokenBufferMemory('wf', 'c', { ...options, keyPrefix: bad }),
					show(bad),
				);
			assert.deepEqual(
				await m.flush(),
				{ written: false, attempts: 0 },
				'no refused turn is pending',
			);
			assert.deepEqual(await everything(), before, 'nothing was written');
		});

		it('odd but valid IDs are accepted and stored under exactly that key', async () => {
			const { storage, everything, root } = await backend.make();
			for (const [id, why] of ACCEPTED) {
				const conversation = new TokenBufferMemory('wf', id, { storage });
				await conversation.addMessages({
					messageId: id,
					userContent: `question ${why}`,
					assistantContent: `answer ${why}`,
				});
				await conversation.flush();
				const node = new NodeTokenBufferMemory('wf', id, id, { storage });
				await node.addMessages({ messageId: id, userContent: 'q', assistantContent: 'a' });
				await node.flush();
				for (const key of [conversationMemoryKey('wf', id), nodeMemoryKey('wf', id, id)]) {
					const stored = await storedDocument(storage, key);
					assert.ok(stored, `${why}: stored under ${JSON.stringify(key)}`);
					assert.deepEqual(turnIds(stored), [id], `${why}: the message ID round-trips`);
				}
			}
			const keys = ACCEPTED.flatMap(([id]) => [
				conversationMemoryKey('wf', id),
				nodeMemoryKey('wf', id, id),
			]).sort();
			assert.deepEqual(
				(await storage.list('')).map((o) => o.key).sort(),
				keys,
				'exactly these keys, nothing else',
			);
			if (root) {
				// On disk each key is exactly that path under the root, and nothing lies outside it.
				for (const key of keys) readFileSync(path.join(root, ...key.split('/')));
				assert.ok(
					(await everything()).every((f) => f === 'memory' || f.startsWith(`memory${path.sep}`)),
				);
			}
			// Precomposed and decomposed "café" are two conversations: nothing normalises one into the other.
			assert.notEqual(
				conversationMemoryKey('wf', 'caf\u00e9'),
				conversationMemoryKey('wf', 'cafe\u0301'),
			);
		});

		for (const [variant, makeBad] of BAD_DOCUMENTS) {
			it(`a bad stored document (${variant}): CorruptDocumentError naming the key, appending fails, bytes untouched`, async () => {
				const { storage, root } = await backend.make();
				const conversationId = 'corrupt';
				const key = conversationMemoryKey('wf', conversationId);
				// A good document first, and a memory object that read it and has a turn to flush.
				const first = new TokenBufferMemory('wf', conversationId, { storage });
				await first.addMessages({ messageId: 't1', userContent: 'q1', assistantContent: 'a1' });
				await first.flush();
				const late = new TokenBufferMemory('wf', conversationId, { storage });
				await late.getHistoryPromptMessages();
				await late.addMessages({ messageId: 't2', userContent: 'q2', assistantContent: 'a2' });

				// Then the stored document goes bad (a disk error, a foreign writer, a bad restore).
				const bad = makeBad(Buffer.from((await storage.get(key))!.body));
				await storage.put(key, bad);

				const namesKey = (e: unknown) => {
					assert.ok(e instanceof CorruptDocumentError, `a CorruptDocumentError, got ${String(e)}`);
					assert.equal(e.key, key);
					assert.ok(e.message.includes(key), e.message);
					return true;
				};
				assert.throws(() => decodeDocument(key, bad), namesKey);
				await assert.rejects(
					new TokenBufferMemory('wf', conversationId, { storage }).getHistoryPromptMessages(),
					namesKey,
				);
				await assert.rejects(
					new TokenBufferMemory('wf', conversationId, { storage }).addMessages({
						userContent: 'q',
						assistantContent: 'a',
					}),
					namesKey,
				);
				await assert.rejects(late.flush(), namesKey, 'a flush on top of it fails');

				assert.deepEqual(
					Buffer.from((await storage.get(key))!.body),
					bad,
					'the bad document is byte-identical',
				);
				if (root) assert.deepEqual(readFileSync(path.join(root, ...key.split('/'))), bad);
			});
		}
	});
}

after(async () => (await ensureRgw()).stop());
