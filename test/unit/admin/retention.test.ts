// Retention in the engine, on local disk with the engine's clock (nothing sleeps): Expire After stored
// with each kind of memory and counted from its last write, expired memory read as gone and deleted as
// judged, Keep Last N Versions with its cut in history, and Prune Expired over every kind, with a write
// landing between the sweep's listing, judging and deleting.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';

import {
	conversationMemoryKey,
	CorruptDocumentError,
	EncryptedStorage,
	exportConversation,
	importConversation,
	InvalidInputError,
	InvalidOptionError,
	LocalDiskStorage,
	parseEncryptionKey,
	pruneExpired,
	REPORT_LISTED,
	UnknownVersionError,
} from '../../../src/internal';
import type { MemoryStorage } from '../../../src/internal';
import { storageHolds } from '../../support/forget-plant';
import {
	at,
	base,
	chat,
	data,
	history,
	Interleaved,
	LIVE,
	liveIntact,
	OLD,
	oldGone,
	plant,
	say,
	T0,
} from '../../support/retention-plant';
import { tempDir } from '../../support/storages';

const disk = () => new LocalDiskStorage({ root: tempDir('retention') });
const KEY = conversationMemoryKey('wf', 'old');

async function stored(storage: MemoryStorage, key: string): Promise<Record<string, unknown>> {
	const got = await storage.get(key);
	assert.ok(got, `${key} is stored`);
	return JSON.parse(Buffer.from(got.body).toString('utf8')) as Record<string, unknown>;
}

const keysUnder = async (storage: MemoryStorage, prefix: string) =>
	(await storage.list(prefix)).map((o) => o.key).sort();

describe('Expire After: chat memory', () => {
	it('is stored with the memory and counted from its last write, by any writer', async () => {
		const storage = disk();
		await say(chat(storage, 'old', T0, { expireAfterDays: 1 }), 'first');
		const doc = await stored(storage, KEY);
		assert.equal(doc.expire_after_days, 1);
		assert.equal(doc.updated_at, T0.toISOString());
		// Another writer without the option keeps the rule and moves the last write.
		await say(chat(storage, 'old', at(0.5)), 'second');
		const again = await stored(storage, KEY);
		assert.deepEqual([again.expire_after_days, again.updated_at], [1, at(0.5).toISOString()]);
		assert.equal((await history(chat(storage, 'old', at(1.4)))).length, 4);
		assert.deepEqual(await history(chat(storage, 'old', at(1.6))), []);
	});

	it('an expired memory reads as empty and is deleted as read, with its sealed segments and summaries', async () => {
		const storage = disk();
		await say(chat(storage, 'old', T0, { expireAfterDays: 1 }), `talk ${OLD}`, 6);
		const before = await keysUnder(storage, 'conversation_memory/wf/');
		assert.ok(
			before.some((k) => k.includes('old.log/')),
			'the memory has sealed segments',
		);
		assert.deepEqual(await history(chat(storage, 'old', at(2))), []);
		assert.deepEqual(await keysUnder(storage, 'conversation_memory/wf/'), []);
		assert.equal(await storageHolds(storage, OLD), false);
		// The next turn starts afresh; the rule went with the memory, a writer with the option sets it.
		const memory = chat(storage, 'old', at(2), { expireAfterDays: 2 });
		await say(memory, 'new start');
		assert.deepEqual(await history(memory), ['new start (0)', 'noted 0']);
		assert.equal((await stored(storage, KEY)).expire_after_days, 2);
	});

	it('0 removes the rule; a value that is not a number of days is refused', async () => {
		const storage = disk();
		await say(chat(storage, 'old', T0, { expireAfterDays: 1 }), 'first');
		await say(chat(storage, 'old', T0, { expireAfterDays: 0 }), 'second');
		const doc = await stored(storage, KEY);
		assert.equal('expire_after_days' in doc || 'updated_at' in doc, false);
		assert.equal((await history(chat(storage, 'old', at(400)))).length, 4);
		for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, 40_000, '3'])
			assert.throws(
				() => chat(storage, 'x', T0, { expireAfterDays: bad as number }),
				InvalidOptionError,
			);
	});

	it('an unreadable memory stays an error, expired or not, and is never deleted', async () => {
		const storage = disk();
		await storage.put(KEY, Buffer.from('{"version":1,"messages":['));
		await assert.rejects(history(chat(storage, 'old', at(2))), CorruptDocumentError);
		const noTime = { version: 1, messages: [], expire_after_days: 1 };
		await storage.put(KEY, Buffer.from(JSON.stringify(noTime)));
		await assert.rejects(history(chat(storage, 'old', at(2))), /needs "updated_at"/);
		const r = await pruneExpired(storage, { now: at(2) });
		assert.deepEqual(r.chatMemory.ids, []);
		assert.match(r.skipped.map((s) => `${s.id}: ${s.reason}`).join(), /wf\/old: .*updated_at/);
		assert.ok(await storage.get(KEY), 'kept');
	});

	it('a write after the memory was judged expired wins: the reader deletes only what it judged', async () => {
		const inner = disk();
		await say(chat(inner, 'old', T0, { expireAfterDays: 1 }), 'old turn');
		const storage = new Interleaved(inner);
		// Right before the reader's conditional delete, a writer whose clock says "not yet" appends.
		storage.onBeforeDelete(
			(k) => k === KEY,
			() => say(chat(inner, 'old', at(0.5)), 'late turn'),
		);
		const reader = chat(storage, 'old', at(1.2));
		assert.deepEqual(await history(reader), [
			'old turn (0)',
			'noted 0',
			'late turn (0)',
			'noted 0',
		]);
		assert.deepEqual(storage.refused, [KEY]);
	});
});

describe('Keep Last N Versions', () => {
	it('deletes versions older than the newest N; history says where it was cut', async () => {
		const storage = disk();
		const vd = data(storage, 'c', T0);
		for (let i = 1; i <= 6; i++)
			await vd.saveVersion({ data: { i }, summary: `s${i}`, keepLastVersions: 3 });
		const versions = (await keysUnder(storage, 'versioned_data/wf/c/versions/')).map((k) =>
			Number(k.slice(-15, -5)),
		);
		assert.deepEqual(versions, [4, 5, 6]);
		const page = await vd.history();
		assert.deepEqual(
			page.entries.map((e) => e.version),
			[6, 5, 4],
		);
		assert.deepEqual([page.truncatedBefore, page.nextBefore], [4, null]);
		const older = await vd.history({ before: 5 });
		assert.deepEqual([older.entries.map((e) => e.version), older.truncatedBefore], [[4], 4]);
		await assert.rejects(vd.getVersion(2), (e: UnknownVersionError) => {
			assert.ok(e instanceof UnknownVersionError);
			assert.equal(e.deletedBefore, 4);
			assert.match(
				e.message,
				/Version 2 does not exist.*Keep Last N Versions deleted the versions before 4/,
			);
			return true;
		});
		await assert.rejects(vd.rollback(2), UnknownVersionError);
		await assert.rejects(vd.diff(1, 6), UnknownVersionError);
		assert.deepEqual((await vd.rollback(4)).data, { i: 4 });
	});

	it('is stored on the branch: later saves without the option apply it; 0 stops it', async () => {
		const storage = disk();
		const vd = data(storage, 'c', T0);
		await vd.saveVersion({ data: 1, summary: 's1', keepLastVersions: 2 });
		await vd.saveVersion({ data: 2, summary: 's2' });
		await vd.saveVersion({ data: 3, summary: 's3' });
		await assert.rejects(vd.getVersion(1), UnknownVersionError);
		await vd.saveVersion({ data: 4, summary: 's4', keepLastVersions: 0 });
		await vd.saveVersion({ data: 5, summary: 's5' });
		assert.deepEqual(
			(await vd.history()).entries.map((e) => e.version),
			[5, 4, 3, 2],
		);
		assert.equal((await vd.history()).truncatedBefore, 2);
		for (const bad of [-1, 1.5, 1001])
			await assert.rejects(
				vd.saveVersion({ data: 0, summary: 'x', keepLastVersions: bad }),
				InvalidInputError,
			);
	});

	it('versions another branch still reaches stay, and its history stays whole', async () => {
		const storage = disk();
		const vd = data(storage, 'c', T0);
		await vd.saveVersion({ data: 1, summary: 's1' });
		await vd.saveVersion({ data: 2, summary: 's2' });
		await vd.branch('exp', 2);
		await vd.saveVersion({ data: 3, summary: 'exp 3', branch: 'exp' });
		// Later (the clock moves on), main keeps its last 2.
		for (let i = 4; i <= 7; i++)
			await data(storage, 'c', at(0.1)).saveVersion({
				data: i,
				summary: `s${i}`,
				keepLastVersions: 2,
			});
		const main = await vd.history();
		assert.deepEqual([main.entries.map((e) => e.version), main.truncatedBefore], [[7, 6], 6]);
		const exp = await vd.history({ branch: 'exp' });
		assert.deepEqual(
			exp.entries.map((e) => e.version),
			[3, 2, 1],
		);
		await assert.rejects(vd.getVersion(4), UnknownVersionError);
		await assert.rejects(vd.getVersion(5), UnknownVersionError);
		// A new branch inherits the rule and where history was cut.
		const head = await vd.branch('late', 6);
		assert.deepEqual([head.keep_last, head.truncated_before], [2, 6]);
	});

	it('a cut history exports and imports', async () => {
		const storage = disk();
		const vd = data(storage, 'c', T0);
		for (let i = 1; i <= 4; i++)
			await vd.saveVersion({ data: i, summary: `s${i}`, keepLastVersions: 2 });
		await importConversation(storage, 'wf', await exportConversation(storage, 'wf', 'c'), {
			conversationId: 'copy',
		});
		const copy = await data(storage, 'copy', T0).history();
		assert.deepEqual([copy.entries.map((e) => e.version), copy.truncatedBefore], [[4, 3], 3]);
	});
});

describe('Expire After: versioned data', () => {
	it('expired as a whole, it reads as gone, is deleted, and a save starts it afresh', async () => {
		const storage = disk();
		for (let i = 1; i <= 3; i++)
			await data(storage, 'c', T0).saveVersion({
				data: { secret: OLD, i },
				summary: `s${i}`,
				expireAfterDays: 1,
			});
		const later = data(storage, 'c', at(2));
		assert.equal(await later.getCurrent(), null);
		assert.deepEqual((await later.history()).entries, []);
		await assert.rejects(later.getVersion(1), UnknownVersionError);
		assert.deepEqual(await keysUnder(storage, 'versioned_data/'), []);
		const saved = await later.saveVersion({ data: { fresh: true }, summary: 'again' });
		assert.deepEqual([saved.version, saved.parent], [1, null]);
		const head = await stored(storage, 'versioned_data/wf/c/branches/main.json');
		assert.equal(head.expire_after_days, undefined, 'the rule went with the data');
	});

	it('a branch still within its rule keeps the data of every branch readable', async () => {
		const storage = disk();
		await data(storage, 'c', T0).saveVersion({ data: 1, summary: 's1', expireAfterDays: 1 });
		await data(storage, 'c', at(0.5)).branch('b', 1);
		assert.deepEqual((await data(storage, 'c', at(1.2)).getCurrent())?.data, 1);
		assert.equal(await data(storage, 'c', at(1.6)).getCurrent(), null);
		assert.deepEqual(await keysUnder(storage, 'versioned_data/'), []);
	});
});

describe('Expire After: Memory Base captures', () => {
	it('search leaves expired conversations out at once; the next capture deletes them with their index entries', async () => {
		const storage = disk();
		await plant(storage);
		const later = base(storage, at(2));
		const found = await later.search('paint', { allUsers: true, k: 10 });
		assert.deepEqual(
			found.map((h) => h.sessionId),
			['live'],
		);
		assert.deepEqual(await later.search('paint', { sessionId: 'old' }), []);
		assert.equal(await storageHolds(storage, `paint ${OLD}`), true, 'not deleted by a search');
		await later.capture({ sessionId: 'old', runId: 'r9', texts: ['paint anew'] });
		assert.equal(await storageHolds(storage, `paint ${OLD}`), false);
		assert.deepEqual(
			(await later.search('paint', { sessionId: 'old', k: 10 })).map((h) => h.text),
			['paint anew'],
		);
		const log = await stored(storage, 'memory_base/wf/sessions/old/log.json');
		// The conversation started afresh: its rule went with its old captures.
		assert.deepEqual([log.expire_after_days, log.next_seq], [undefined, 2]);
	});
});

describe('Expire After: a capture judges the stored log', () => {
	it('a log another process aged is expired by the next capture, though this process kept a fresh copy', async () => {
		const storage = disk();
		const b = base(storage, at(0.5));
		await b.capture({ sessionId: 'old', runId: 'r1', texts: [`paint ${OLD}`], expireAfterDays: 1 });
		// Another writer moves the last capture two days back: this process's copy says "fresh".
		const key = 'memory_base/wf/sessions/old/log.json';
		const aged = { ...(await stored(storage, key)), captured_at: at(-2).toISOString() };
		await storage.put(key, new TextEncoder().encode(JSON.stringify(aged)));
		await b.capture({ sessionId: 'old', runId: 'r2', texts: ['paint anew'] });
		assert.equal(await storageHolds(storage, `paint ${OLD}`), false, 'the expired capture is gone');
		const log = await stored(storage, key);
		assert.deepEqual([log.expire_after_days, log.next_seq], [undefined, 2], 'a fresh log');
		assert.deepEqual(
			(await b.search('paint', { sessionId: 'old', k: 10 })).map((h) => h.text),
			['paint anew'],
		);
	});

	it('a log within its rule is appended to with no read before the write', async () => {
		const storage = disk();
		const b = base(storage, at(0));
		await b.capture({ sessionId: 's', runId: 'r1', texts: ['first'], expireAfterDays: 3 });
		const later = base(storage, at(1));
		await later.capture({ sessionId: 's', runId: 'r2', texts: ['second'] });
		const log = await stored(storage, 'memory_base/wf/sessions/s/log.json');
		assert.deepEqual([log.expire_after_days, log.next_seq], [3, 3], 'kept, rule and all');
	});
});

describe('Prune Expired', () => {
	it('sweeps every kind, reports counts and IDs, and leaves live memory', async () => {
		const storage = disk();
		await plant(storage);
		const all = await keysUnder(storage, '');
		const dry = await pruneExpired(storage, { now: at(2), dryRun: true });
		assert.deepEqual(await keysUnder(storage, ''), all, 'a dry run deletes nothing');
		const r = await pruneExpired(storage, { now: at(2) });
		for (const result of [dry, r]) {
			assert.deepEqual(result.chatMemory, { count: 2, ids: ['wf/old', 'wf/old/n1'] });
			assert.deepEqual(result.versionedData, { count: 1, ids: ['wf/old'] });
			assert.deepEqual(result.captures, { count: 1, ids: ['wf/old'], messages: 1 });
		}
		assert.deepEqual(r.skipped, []);
		// A dry run names the documents; the sweep deletes them and what they used.
		for (const k of dry.deleted) assert.ok(r.deleted.includes(k), k);
		await oldGone(storage);
		await liveIntact(storage, at(2));
		const again = await pruneExpired(storage, { now: at(2) });
		assert.equal(again.deleted.length, 0, 'nothing left to sweep');
	});

	it('of more memories than a result lists, names the first of each list in order and counts them all', async () => {
		const storage = disk();
		const n = REPORT_LISTED + 7;
		const ids = Array.from({ length: n }, (_, i) => `c${(i * 7919) % n}`);
		for (const id of ids) await say(chat(storage, id, T0, { expireAfterDays: 1 }), 'bye');
		const stored = await keysUnder(storage, '');
		for (const dryRun of [true, false]) {
			const r = await pruneExpired(storage, { now: at(2), dryRun });
			const named = ids.map((id) => `wf/${id}`).sort();
			assert.deepEqual(r.chatMemory, { count: n, ids: named.slice(0, REPORT_LISTED) });
			assert.equal(r.deletedCount, stored.length, 'every key counted');
			assert.deepEqual(r.deleted, stored.slice(0, REPORT_LISTED), 'the first keys, in order');
			assert.equal(r.skippedCount, 0);
		}
		assert.deepEqual(await keysUnder(storage, ''), []);
	});

	it('one workflow, or every workflow', async () => {
		const storage = disk();
		await say(chat(storage, 'old', T0, { expireAfterDays: 1 }), 'in wf');
		const other = chat(storage, 'old', T0, { expireAfterDays: 1 });
		await say(other, 'placeholder');
		await storage.put(
			conversationMemoryKey('wf2', 'old'),
			(await storage.get(KEY))?.body as Uint8Array,
		);
		const one = await pruneExpired(storage, { appId: 'wf', now: at(2) });
		assert.deepEqual(one.chatMemory.ids, ['wf/old']);
		assert.ok(await storage.get(conversationMemoryKey('wf2', 'old')));
		const every = await pruneExpired(storage, { now: at(2) });
		assert.deepEqual(every.chatMemory.ids, ['wf2/old']);
		await assert.rejects(pruneExpired(storage, { appId: '' }), /app_id/);
	});

	it('a memory written after the sweep listed it is judged as written, and stays', async () => {
		const inner = disk();
		await plant(inner);
		const storage = new Interleaved(inner);
		// Right after the sweep lists the chat documents, the conversation goes on at the sweep's time.
		storage.onAfterList(
			(p) => p === '' || p.startsWith('conversation_memory/'),
			() => say(chat(inner, 'old', at(2)), 'back again'),
		);
		const r = await pruneExpired(storage, { now: at(2) });
		assert.deepEqual(r.chatMemory.ids, ['wf/old/n1']);
		assert.deepEqual(await history(chat(inner, 'old', at(2))), ['back again (0)', 'noted 0']);
	});

	it('never deletes what was written between judging and deleting: chat, versioned data, captures', async () => {
		const inner = disk();
		await plant(inner);
		const storage = new Interleaved(inner);
		// Writers whose clock says "not yet expired" append right before each conditional delete.
		storage.onBeforeDelete(
			(k) => k === KEY,
			() => say(chat(inner, 'old', at(0.5)), 'late turn'),
		);
		storage.onBeforeDelete(
			(k) => k === 'versioned_data/wf/old/branches/main.json',
			async () => {
				await data(inner, 'old', at(0.5)).saveVersion({ data: 'late', summary: 'late' });
			},
		);
		storage.onBeforeDelete(
			(k) => k === 'memory_base/wf/sessions/old/log.json',
			async () => {
				await base(inner, at(0.5)).capture({ sessionId: 'old', runId: 'late', texts: ['late'] });
			},
		);
		const r = await pruneExpired(storage, { now: at(2) });
		assert.deepEqual(r.chatMemory.ids, ['wf/old/n1']);
		assert.deepEqual(r.versionedData.ids, []);
		assert.deepEqual(r.captures.ids, []);
		assert.deepEqual(
			r.skipped.map((s) => s.id),
			['wf/old', 'wf/old', 'wf/old'],
		);
		assert.deepEqual(storage.refused.sort(), [
			KEY,
			'memory_base/wf/sessions/old/log.json',
			'versioned_data/wf/old/branches/main.json',
		]);
		// Each late write is still there.
		assert.match((await history(chat(inner, 'old', at(0.5)))).join(), /late turn/);
		assert.equal((await data(inner, 'old', at(0.5)).getCurrent())?.data, 'late');
		const exported = await base(inner, at(0.5)).exportSession('old');
		assert.ok(exported?.some((m) => m.text === 'late'));
	});

	it('works through encryption, and without the key deletes nothing', async () => {
		const raw = disk();
		const key = parseEncryptionKey(randomBytes(32).toString('base64'));
		const storage = new EncryptedStorage(raw, { current: key });
		await plant(storage);
		const all = await keysUnder(raw, '');
		const locked = await pruneExpired(new EncryptedStorage(raw, {}), { now: at(2) });
		assert.equal(locked.deleted.length, 0);
		assert.ok(locked.skipped.length >= 3, JSON.stringify(locked.skipped));
		assert.deepEqual(await keysUnder(raw, ''), all);
		const r = await pruneExpired(storage, { now: at(2) });
		assert.deepEqual([r.chatMemory.count, r.versionedData.count, r.captures.count], [2, 1, 1]);
		await oldGone(storage, raw);
		await liveIntact(storage, at(2));
		assert.equal(await storageHolds(raw, LIVE), false, 'still sealed');
	});
});
