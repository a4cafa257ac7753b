// Retention on both backends (local disk and Ceph radosgw), with the engine's clock: Prune Expired
// sweeps every kind (plain and encrypted) and leaves no object or byte of the expired conversation;
// readers delete what they find expired; Keep Last N Versions deletes old versions; and a write that
// lands after the sweep listed or judged a memory is never deleted (on S3 the re-check is a HEAD right
// before the DELETE). The data planted is the unit test's (test/support/retention-plant.ts).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';

import {
	conversationMemoryKey,
	EncryptedStorage,
	LocalDiskStorage,
	parseEncryptionKey,
	pruneExpired,
	UnknownVersionError,
} from '../../src/internal';
import type { MemoryStorage } from '../../src/internal';
import { storageHolds } from '../support/forget-plant';
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
} from '../support/retention-plant';
import { rgwStorage } from '../support/rgw';
import { tempDir } from '../support/storages';

const backends: Array<[string, () => Promise<MemoryStorage>]> = [
	['local disk', async () => new LocalDiskStorage({ root: tempDir('retention-st') })],
	['radosgw', () => rgwStorage()],
];
const keys = async (s: MemoryStorage, prefix = '') =>
	(await s.list(prefix)).map((o) => o.key).sort();

for (const [backend, make] of backends)
	describe(`retention on ${backend}`, () => {
		for (const encrypted of [false, true])
			it(`Prune Expired deletes every kind of the expired conversation, and only it${encrypted ? ' (encrypted)' : ''}`, async () => {
				const raw = await make();
				const key = parseEncryptionKey(randomBytes(32).toString('base64'));
				const storage = encrypted ? new EncryptedStorage(raw, { current: key }) : raw;
				await plant(storage);
				assert.equal(await storageHolds(raw, OLD), !encrypted);
				const r = await pruneExpired(storage, { now: at(2) });
				assert.deepEqual(
					[r.chatMemory.ids, r.versionedData.ids, r.captures.ids, r.skipped],
					[['wf/old', 'wf/old/n1'], ['wf/old'], ['wf/old'], []],
				);
				await oldGone(storage, raw);
				await liveIntact(storage, at(2));
				assert.equal(await storageHolds(raw, LIVE), !encrypted);
				assert.deepEqual((await pruneExpired(storage, { now: at(2) })).deleted, []);
			});

		it('readers delete what they find expired: chat with its segments, versioned data whole, captures', async () => {
			const storage = await make();
			await plant(storage);
			assert.deepEqual(await history(chat(storage, 'old', at(2))), []);
			assert.deepEqual(await keys(storage, 'conversation_memory/wf/old'), []);
			assert.equal(await data(storage, 'old', at(2)).getCurrent(), null);
			assert.deepEqual(await keys(storage, 'versioned_data/wf/old/'), []);
			const later = base(storage, at(2));
			assert.deepEqual(await later.search('paint', { sessionId: 'old' }), []);
			await liveIntact(storage, at(2));
			await later.capture({ sessionId: 'old', runId: 'again', texts: ['fresh start'] });
			assert.equal(await storageHolds(storage, `paint ${OLD}`), false);
			assert.deepEqual(
				(await later.search('paint', { sessionId: 'old', k: 10 })).map((h) => h.text),
				['fresh start'],
			);
		});

		it('Keep Last N Versions deletes older versions; history and reads say where it was cut', async () => {
			const storage = await make();
			const vd = data(storage, 'c', T0);
			for (let i = 1; i <= 5; i++)
				await vd.saveVersion({ data: { i }, summary: `s${i}`, keepLastVersions: 2 });
			assert.deepEqual(await keys(storage, 'versioned_data/wf/c/versions/'), [
				'versioned_data/wf/c/versions/0000000004.json',
				'versioned_data/wf/c/versions/0000000005.json',
			]);
			const page = await vd.history();
			assert.deepEqual([page.entries.map((e) => e.version), page.truncatedBefore], [[5, 4], 4]);
			await assert.rejects(vd.getVersion(3), /Keep Last N Versions deleted the versions before 4/);
		});

		it('a write between judging and deleting wins over the sweep, for every kind', async () => {
			const inner = await make();
			await plant(inner);
			const storage = new Interleaved(inner);
			storage.onBeforeDelete(
				(k) => k === conversationMemoryKey('wf', 'old'),
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
			assert.deepEqual(
				[r.chatMemory.ids, r.versionedData.ids, r.captures.ids],
				[['wf/old/n1'], [], []],
			);
			assert.equal(storage.refused.length, 3, storage.refused.join());
			assert.match((await history(chat(inner, 'old', at(0.5)))).join(), /late turn/);
			assert.equal((await data(inner, 'old', at(0.5)).getCurrent())?.data, 'late');
			const log = await base(inner, at(0.5)).exportSession('old');
			assert.ok(log?.some((m) => m.text === 'late'));
		});

		it('a conversation written after the sweep listed it is judged as written, and stays', async () => {
			const inner = await make();
			await plant(inner);
			const storage = new Interleaved(inner);
			storage.onAfterList(
				(p) => p.startsWith('conversation_memory/'),
				() => say(chat(inner, 'old', at(2)), 'back again'),
			);
			const r = await pruneExpired(storage, { now: at(2) });
			assert.deepEqual(r.chatMemory.ids, ['wf/old/n1']);
			assert.deepEqual(await history(chat(inner, 'old', at(2))), ['back again (0)', 'noted 0']);
		});

		it('an expired memory that cannot be read is kept and reported, never deleted', async () => {
			const raw = await make();
			const storage = new EncryptedStorage(raw, {
				current: parseEncryptionKey(randomBytes(32).toString('base64')),
			});
			await plant(storage);
			const all = await keys(raw);
			const withoutKey = new EncryptedStorage(raw, {});
			const r = await pruneExpired(withoutKey, { now: at(2) });
			assert.equal(r.deleted.length, 0);
			assert.ok(
				r.skipped.some((s) => s.id === 'wf/old' && /key/.test(s.reason)),
				JSON.stringify(r.skipped),
			);
			assert.deepEqual(await keys(raw), all);
			await assert.rejects(data(withoutKey, 'old', at(2)).getVersion(1), (e: Error) => {
				assert.ok(!(e instanceof UnknownVersionError), 'an unreadable head is not "no data"');
				return true;
			});
		});
	});
