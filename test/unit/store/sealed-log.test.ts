// Issue 8 part 4: constant-cost turns. A head document keeps the newest messages; older ones are sealed
// into write-once segments and indexes that reads load only when they need them.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	clearDocumentCache,
	CorruptDocumentError,
	decodeDocument,
	DuplicateMessageIdError,
	encodeDocument,
	exportDocument,
	extractThread,
	importDocument,
	InvalidOptionError,
	sealedPrefix,
	TokenBufferMemory,
	UnknownParentMessageError,
} from '../../../src/internal';
import type {
	MemoryOptions,
	MemoryStorage,
	PromptMessage,
	StoredMessage,
} from '../../../src/internal';
import { linearTurns } from '../../support/messages';
import { idsOf, KEY, rawHead, setup, SMALL } from './support';

const text = (messages: PromptMessage[]) => messages.map((m) => `${m.role}:${m.content}`);

function memory(storage: MemoryStorage, extra: Partial<MemoryOptions> = {}) {
	return new TokenBufferMemory('wf', 'conv', {
		storage,
		model: 'gpt-4o-mini',
		log: SMALL,
		...extra,
	});
}

/** n turns t0…t{n-1}, one flush each, as n executions would. */
async function turns(
	storage: MemoryStorage,
	n: number,
	from = 0,
	extra: Partial<MemoryOptions> = {},
) {
	for (let i = from; i < from + n; i++) {
		const m = memory(storage, extra);
		await m.addMessages({ messageId: `t${i}`, userContent: `q${i}`, assistantContent: `a${i}` });
		await m.flush();
	}
}

const expectedIds = (n: number) =>
	Array.from({ length: n }, (_, i) => [`t${i}:user`, `t${i}`]).flat();

describe('sealing', () => {
	it('the head keeps at most tailMessages; older messages move to write-once segments, written create-only before the head that references them', async () => {
		const { storage, recording } = setup();
		await turns(storage, 20);
		const head = await rawHead(storage);
		assert.equal(head.version, 3);
		assert.ok(
			head.messages.length <= 6 && head.messages.length >= 2,
			`head holds ${head.messages.length}`,
		);
		assert.equal(head.sealed_count + head.messages.length, 40);
		// Every object a head references was created (create-only) before that head was written.
		const created = new Set<string>();
		for (const p of recording.puts) {
			if (p.key === KEY) {
				const refs = JSON.parse(Buffer.from(p.body).toString()).sealed ?? [];
				for (const r of refs)
					assert.ok(created.has(r.key), `${r.key} existed before the head referenced it`);
			} else {
				assert.equal(p.ifVersion, null, `${p.key} is written create-only`);
				assert.ok(p.key.startsWith(sealedPrefix(KEY)));
				assert.ok(!created.has(p.key), 'a sealed key is never written twice');
				created.add(p.key);
			}
		}
		const doc = await exportDocument(storage, KEY);
		assert.deepEqual(idsOf(doc!.messages), expectedIds(20));
		assert.equal(extractThread(KEY, doc!.messages).length, 40, 'one thread, in order');
		assert.deepEqual(idsOf(await memory(storage).messages()), expectedIds(20));
	});

	it('segments are cut at turn boundaries: the head starts with a user message', async () => {
		const { storage } = setup();
		await turns(storage, 15);
		const head = await rawHead(storage);
		assert.equal(head.messages[0].role, 'user');
		for (const r of head.sealed)
			assert.equal(r.linear, true, 'each sealed run is one linear thread');
	});

	it('cascades: fanOut references of one level fold into an index, so the head stays small at any length', async () => {
		const { storage } = setup();
		await turns(storage, 60);
		const head = await rawHead(storage);
		const levels: number[] = head.sealed.map((r: { level: number }) => r.level);
		// fanOut 2: a binary counter, at most one reference per level, highest first.
		assert.deepEqual(
			levels,
			[...levels].sort((a, b) => b - a),
		);
		assert.equal(new Set(levels).size, levels.length);
		assert.ok(Math.max(...levels) >= 3, `levels ${levels}`);
		const total = head.sealed.reduce((n: number, r: { count: number }) => n + r.count, 0);
		assert.equal(total, head.sealed_count);
		assert.deepEqual(idsOf((await exportDocument(storage, KEY))!.messages), expectedIds(60));
	});

	it('bytes written per turn stay under 64 KB at any length with the default limits', async () => {
		const { storage, recording } = setup();
		const big = linearTurns(5000).map((m, i) => ({
			...m,
			content: `${m.content} `.padEnd(120 + (i % 7) * 20, 'lorem ipsum '),
		}));
		await importDocument(storage, KEY, { version: 1, messages: big });
		const before = recording.puts.length;
		for (let i = 0; i < 120; i++) {
			const start = recording.puts.length;
			const m = new TokenBufferMemory('wf', 'conv', { storage, model: 'gpt-4o-mini' });
			await m.getHistoryPromptMessages();
			await m.addMessages({
				userContent: `question ${i} `.padEnd(150, 'x'),
				assistantContent: `answer ${i} `.padEnd(300, 'y'),
			});
			await m.flush();
			const bytes = recording.puts.slice(start).reduce((n, p) => n + p.bytes, 0);
			assert.ok(bytes < 64 * 1024, `turn ${i} wrote ${bytes} bytes`);
		}
		assert.ok(
			recording.puts.slice(before).some((p) => p.key !== KEY),
			'some of those turns sealed',
		);
		assert.equal((await exportDocument(storage, KEY))!.messages.length, 10_000 + 240);
	});

	it('refuses limits that make no sense, naming the option', () => {
		const { storage } = setup();
		assert.throws(
			() => memory(storage, { log: { tailMessages: 4, keepMessages: 4 } }),
			InvalidOptionError,
		);
		assert.throws(() => memory(storage, { log: { fanOut: 1 } }), /log\.fanOut/);
		assert.throws(
			() => memory(storage, { log: { tailMessages: Number.NaN } }),
			/log\.tailMessages/,
		);
	});
});

describe('reading loads sealed segments only when needed', () => {
	async function built() {
		const s = setup();
		await turns(s.storage, 40);
		clearDocumentCache();
		s.storage.calls.get = 0;
		return s;
	}

	it('a history that fits in the head reads only the head; droppedTurns is still exact, from the references', async () => {
		const { storage } = await built();
		const h = await memory(storage).getHistoryPromptMessages({ messageLimit: 1 });
		assert.deepEqual(text(h.messages), ['user:q39', 'assistant:a39']);
		assert.equal(h.droppedTurns, 39);
		assert.equal(storage.calls.get, 1, 'one read: the head');
	});

	it('a longer history loads the newest segments, once per process (they never change)', async () => {
		const { storage, recording } = await built();
		const head = await rawHead(storage);
		storage.calls.get = 0;
		const inHead = head.messages.length / 2;
		const h = await memory(storage).getHistoryPromptMessages({ messageLimit: inHead + 1 });
		assert.equal(h.turns, inHead + 1);
		assert.equal(h.droppedTurns, 40 - inHead - 1);
		const firstReads = storage.calls.get;
		assert.ok(
			firstReads >= 2 && firstReads <= 1 + 6,
			`${firstReads} reads: the head and one path down to the newest segment`,
		);
		const sealedReads = recording.gets.filter((k) => k !== KEY).length;
		storage.calls.get = 0;
		await memory(storage).getHistoryPromptMessages({ messageLimit: inHead + 1 });
		assert.equal(storage.calls.get, 1, 'the second time only the head is asked (conditionally)');
		assert.equal(recording.gets.filter((k) => k !== KEY).length, sealedReads);
	});

	it('the whole thread when the budget asks for it, identical to the single-document result', async () => {
		const { storage } = await built();
		const all = await memory(storage).getHistoryPromptMessages({ maxTokenLimit: 1_000_000 });
		assert.equal(all.turns, 40);
		assert.equal(all.droppedTurns, 0);
		assert.deepEqual(text(all.messages).slice(0, 4), [
			'user:q0',
			'assistant:a0',
			'user:q1',
			'assistant:a1',
		]);
		const budget = await memory(storage).getHistoryPromptMessages({
			maxTokenLimit: all.tokens / 2,
		});
		assert.equal(budget.turns + budget.droppedTurns, 40);
	});
});

describe('bounded reads for other callers (the agent memory)', () => {
	it('thread({ maxMessages }) reads only as far back as it returns; without a bound it is the whole thread', async () => {
		const { storage } = setup();
		await turns(storage, 40);
		const all = (await exportDocument(storage, KEY))!.messages;
		clearDocumentCache();
		storage.calls.get = 0;
		const m = memory(storage);
		assert.deepEqual(idsOf(await m.thread({ maxMessages: 4 })), idsOf(all.slice(-4)));
		assert.equal(storage.calls.get, 1, 'the head holds them');
		assert.deepEqual(idsOf(await m.thread({ maxMessages: 12 })), idsOf(all.slice(-12)));
		assert.deepEqual(idsOf(await m.thread()), idsOf(extractThread(KEY, all)));
		assert.deepEqual(idsOf(await m.thread({ parentMessageId: 't1' })), [
			't0:user',
			't0',
			't1:user',
			't1',
		]);
		await m.addMessages({ messageId: 'p', userContent: 'pending', assistantContent: 'turn' });
		assert.deepEqual(idsOf(await m.thread({ maxMessages: 2 })), ['p:user', 'p']);
	});

	it('takenIds() finds IDs stored anywhere or pending, without reading every segment', async () => {
		const { storage } = setup();
		await turns(storage, 40);
		clearDocumentCache();
		storage.calls.get = 0;
		const m = memory(storage);
		await m.addMessages({ messageId: 'p', userContent: 'pending', assistantContent: 'turn' });
		const taken = await m.takenIds(['t0', 't0:user', 't39', 'p', 'p:user', 'free', 'also-free']);
		assert.deepEqual([...taken].sort(), ['p', 'p:user', 't0', 't0:user', 't39'].sort());
		const objects = (await storage.list(sealedPrefix(KEY))).length;
		assert.ok(
			storage.calls.get < objects / 2,
			`${storage.calls.get} reads of ${objects} sealed objects`,
		);
	});
});

describe('explicit parents in sealed history', () => {
	it('a history from an old parent reads that parent’s thread; a turn can branch from it', async () => {
		const { storage } = setup();
		await turns(storage, 30);
		clearDocumentCache();
		storage.calls.get = 0;
		const m = memory(storage);
		const h = await m.getHistoryPromptMessages({ parentMessageId: 't2' });
		assert.deepEqual(text(h.messages), [
			'user:q0',
			'assistant:a0',
			'user:q1',
			'assistant:a1',
			'user:q2',
			'assistant:a2',
		]);
		assert.equal(h.parentMessageId, 't2');
		const objects = (await storage.list(sealedPrefix(KEY))).length;
		assert.ok(
			storage.calls.get - 1 < objects / 2,
			`read ${storage.calls.get - 1} of ${objects} sealed objects: only those its filters point to`,
		);
		const branch = await m.addMessages({
			messageId: 'b',
			parentMessageId: 't2',
			userContent: 'q2 again',
			assistantContent: 'a2 better',
		});
		assert.equal(branch.parentMessageId, 't2');
		await m.flush();
		const now = await memory(storage).getHistoryPromptMessages();
		assert.deepEqual(text(now.messages).slice(-4), [
			'user:q2',
			'assistant:a2',
			'user:q2 again',
			'assistant:a2 better',
		]);
		assert.equal(now.turns, 4);
		// The live thread from t29 is intact.
		assert.equal(
			(
				await memory(storage).getHistoryPromptMessages({
					parentMessageId: 't29',
					maxTokenLimit: 1e6,
				})
			).turns,
			30,
		);
	});

	it('an unknown parent is an error, after searching sealed history too', async () => {
		const { storage } = setup();
		await turns(storage, 12);
		await assert.rejects(
			memory(storage).getHistoryPromptMessages({ parentMessageId: 'nope' }),
			UnknownParentMessageError,
		);
		await assert.rejects(
			memory(storage).checkTurn({ parentMessageId: 'nope' }),
			UnknownParentMessageError,
		);
		await memory(storage).checkTurn({ parentMessageId: 't0' });
	});
});

describe('duplicate message IDs deep in history', () => {
	it('a caller’s ID that is sealed is refused before the model is called', async () => {
		const { storage } = setup();
		await turns(storage, 20);
		const head = await rawHead(storage);
		assert.ok(!head.messages.some((x: StoredMessage) => x.message_id === 't1'), 't1 is sealed');
		const m = memory(storage);
		await assert.rejects(m.checkTurn({ messageId: 't1' }), DuplicateMessageIdError);
		await assert.rejects(m.getHistoryPromptMessages({ messageId: 't1' }), DuplicateMessageIdError);
		await assert.rejects(
			m.addMessages({ messageId: 't1', userContent: 'q', assistantContent: 'a' }),
			DuplicateMessageIdError,
		);
		await m.checkTurn({ messageId: 'fresh' });
	});

	it('another writer storing and sealing the same ID before this flush: refused (other content) or kept once (same)', async () => {
		const { storage } = setup();
		await turns(storage, 4);
		const mine = memory(storage);
		await mine.addMessages({ messageId: 'x', userContent: 'q', assistantContent: 'mine' });
		const same = memory(storage);
		await same.addMessages({ messageId: 'y', userContent: 'qy', assistantContent: 'ay' });
		const other = memory(storage);
		await other.addMessages({ messageId: 'x', userContent: 'q', assistantContent: 'theirs' });
		await other.flush();
		const other2 = memory(storage);
		await other2.addMessages({ messageId: 'y', userContent: 'qy', assistantContent: 'ay' });
		await other2.flush();
		await turns(storage, 10, 100); // x and y are sealed now
		assert.ok(
			!(await rawHead(storage)).messages.some((x: StoredMessage) =>
				['x', 'y'].includes(x.message_id),
			),
		);
		const before = await rawHead(storage);
		await mine.getHistoryPromptMessages(); // its snapshot is current: the first attempt must catch it
		await assert.rejects(mine.flush(), DuplicateMessageIdError);
		assert.deepEqual(await rawHead(storage), before, 'nothing written');
		assert.equal(
			(await same.flush()).written,
			false,
			'the same turn, already stored: nothing to write',
		);
		const ids = idsOf((await exportDocument(storage, KEY))!.messages);
		assert.equal(ids.filter((i) => i === 'x').length, 1);
		assert.equal(ids.filter((i) => i === 'y').length, 1);
	});

	it('a write whose response was lost, sealed by others before the retry, is not stored twice', async () => {
		const { storage, recording } = setup();
		await turns(storage, 3);
		const m = new TokenBufferMemory('wf', 'conv', { storage, log: SMALL, maxFlushAttempts: 1 });
		const added = await m.addMessages({ userContent: 'lost?', assistantContent: 'no' }); // an engine-drawn UUID
		recording.loseResponse = { pattern: /conv\.json$/, times: 1 };
		await assert.rejects(m.flush(), /simulated lost response/);
		await turns(storage, 10, 50); // seals it
		assert.ok(
			!(await rawHead(storage)).messages.some(
				(x: StoredMessage) => x.message_id === added.messageId,
			),
		);
		assert.deepEqual(await m.flush(), { written: false, attempts: 1 });
		const ids = idsOf((await exportDocument(storage, KEY))!.messages);
		assert.equal(ids.filter((i) => i === added.messageId).length, 1);
	});
});

describe('version-1 documents', () => {
	it('stay version 1 below the limits, are read as before and convert on the first write past them', async () => {
		const { storage, disk } = setup();
		const seed = {
			version: 1,
			from_the_future: { kept: true },
			messages: linearTurns(25).map((m, i) => (i === 3 ? { ...m, future_field: 'x' } : m)),
		};
		await disk.put(KEY, Buffer.from(JSON.stringify(seed)));
		const m = memory(storage);
		const h = await m.getHistoryPromptMessages({ messageLimit: 2 });
		assert.deepEqual(text(h.messages), [
			'user:question 24',
			'assistant:answer 24',
			'user:question 25',
			'assistant:answer 25',
		]);
		await m.addMessages({ messageId: 'n', userContent: 'new', assistantContent: 'turn' });
		await m.flush();
		const head = await rawHead(storage);
		assert.equal(head.version, 3, 'converted');
		assert.deepEqual(head.from_the_future, { kept: true }, 'unknown head fields kept');
		assert.ok(head.messages.length <= 6);
		const out = await exportDocument(storage, KEY);
		assert.deepEqual(idsOf(out!.messages), [...idsOf(seed.messages), 'n:user', 'n']);
		assert.equal((out as Record<string, unknown>).from_the_future !== undefined, true);
		assert.equal(
			(out!.messages[3] as Record<string, unknown>).future_field,
			'x',
			'unknown message fields kept through sealing',
		);
		assert.deepEqual(
			decodeDocument(KEY, encodeDocument(out!)),
			out,
			'export is a valid version-1 document',
		);

		const small = setup();
		await small.disk.put(KEY, encodeDocument({ version: 1, messages: linearTurns(1) }));
		await turns(small.storage, 1, 0);
		assert.equal((await rawHead(small.storage)).version, 1, 'within the limits it stays version 1');
	});

	it('export → import → export is the identity, and both read the same history', async () => {
		const { storage } = setup();
		await turns(storage, 25);
		const out = await exportDocument(storage, KEY);
		const KEY2 = 'conversation_memory/wf/copy.json';
		await importDocument(storage, KEY2, out!, { log: SMALL });
		assert.deepEqual(await exportDocument(storage, KEY2), out);
		assert.equal((await rawHead(storage, KEY2)).version, 3);
		const a = await memory(storage).getHistoryPromptMessages({ messageLimit: 7 });
		const b = await new TokenBufferMemory('wf', 'copy', {
			storage,
			log: SMALL,
		}).getHistoryPromptMessages({ messageLimit: 7 });
		assert.deepEqual(b.messages, a.messages);
		assert.equal(b.droppedTurns, a.droppedTurns);
		await assert.rejects(
			importDocument(storage, KEY2, out!),
			/already exists|changed/,
			'import never overwrites',
		);
		assert.equal(await exportDocument(storage, 'conversation_memory/wf/none.json'), null);
	});
});

describe('unreadable sealed objects are errors, never empty, never overwritten', () => {
	it('a corrupt segment is an error naming its key; the head keeps referencing it', async () => {
		const { storage, disk } = setup();
		await turns(storage, 20);
		const head = await rawHead(storage);
		const oldest = head.sealed[0].key as string;
		const segments = (await disk.list(sealedPrefix(KEY)))
			.map((o) => o.key)
			.filter((k) => k.split('/').pop()!.startsWith('0-0000000000-'));
		const file = path.join(disk.root, ...segments[0].split('/'));
		writeFileSync(file, '{"version":3,"kind":"segment","messages":[');
		const damaged = readFileSync(file);
		clearDocumentCache();
		const isCorrupt = (e: unknown) =>
			e instanceof CorruptDocumentError && e.key === segments[0] && e.message.includes(segments[0]);
		await assert.rejects(
			memory(storage).getHistoryPromptMessages({ maxTokenLimit: 1e6 }),
			isCorrupt,
		);
		await assert.rejects(exportDocument(storage, KEY), isCorrupt);
		await assert.rejects(memory(storage).messages(), isCorrupt);
		await assert.rejects(
			memory(storage).getHistoryPromptMessages({ parentMessageId: 't0' }),
			isCorrupt,
		);
		// History that does not reach it still works, and writes never touch it.
		await turns(storage, 6, 100);
		assert.deepEqual(readFileSync(file), damaged);
		const after = await rawHead(storage);
		assert.ok(
			JSON.stringify(after.sealed).includes(oldest.slice(0, -5)) ||
				after.sealed[0].level > head.sealed[0].level,
			'still referenced',
		);
		await assert.rejects(exportDocument(storage, KEY), isCorrupt);
	});

	it('a missing segment, or one that is not what its reference says, is an error naming it', async () => {
		const { storage, disk } = setup();
		await turns(storage, 10);
		const head = await rawHead(storage);
		const seg =
			head.sealed.find((r: { level: number }) => r.level === 0) ??
			head.sealed[head.sealed.length - 1];
		const keys = (await disk.list(sealedPrefix(KEY))).map((o) => o.key);
		const target =
			seg.level === 0 ? seg.key : keys.find((k) => k.split('/').pop()!.startsWith('0-'))!;
		const file = path.join(disk.root, ...target.split('/'));
		const body = JSON.parse(readFileSync(file, 'utf8'));
		writeFileSync(file, JSON.stringify({ ...body, messages: body.messages.slice(1) }));
		clearDocumentCache();
		await assert.rejects(
			exportDocument(storage, KEY),
			(e: unknown) =>
				e instanceof CorruptDocumentError &&
				e.key === target &&
				/holds \d+ messages/.test(e.message),
		);
		await disk.delete(target);
		clearDocumentCache();
		await assert.rejects(
			exportDocument(storage, KEY),
			(e: unknown) =>
				e instanceof CorruptDocumentError && e.key === target && /does not exist/.test(e.message),
		);
	});

	it('a head whose reference points outside its own folder is refused', async () => {
		const { storage, disk } = setup();
		await turns(storage, 10);
		const head = await rawHead(storage);
		head.sealed[0].key = 'conversation_memory/wf/other.log/0-0000000000-0123456789abcdef.json';
		await disk.put(KEY, Buffer.from(JSON.stringify(head)));
		await assert.rejects(
			memory(storage).getHistoryPromptMessages(),
			(e: unknown) =>
				e instanceof CorruptDocumentError &&
				e.key === KEY &&
				/not a sealed object of this document/.test(e.message),
		);
		const bytes = (await disk.get(KEY))!.body;
		await assert.rejects(turns(storage, 1, 200), CorruptDocumentError);
		assert.deepEqual((await disk.get(KEY))!.body, bytes, 'never overwritten');
	});

	it('decodeDocument (the version-1 reader) says what a version-3 head is', async () => {
		const { storage } = setup();
		await turns(storage, 10);
		const got = await storage.get(KEY);
		assert.throws(() => decodeDocument(KEY, got!.body), /version 3 is a head .* exportDocument/);
	});

	it('a version-2 document is still refused by name', async () => {
		const { storage, disk } = setup();
		await disk.put(
			KEY,
			Buffer.from(JSON.stringify({ version: 2, messages: [], sealed: [], sealed_count: 0 })),
		);
		await assert.rejects(
			memory(storage).getHistoryPromptMessages(),
			/unknown document version 2 \(this package reads versions 1 and 3\)/,
		);
	});
});
