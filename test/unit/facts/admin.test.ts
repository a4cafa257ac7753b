// Facts under the rules every memory follows: Expire After and Prune Expired, Keep Last N Versions,
// export and import (their own, and with the whole conversation), Delete Conversation, Re-Encrypt.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';

import {
	deleteConversationMemory,
	EncryptedStorage,
	exportConversation,
	exportFacts,
	Facts,
	FactsExistError,
	factsPrefix,
	importConversation,
	importFacts,
	isSealed,
	LocalDiskStorage,
	parseEncryptionKey,
	pruneExpired,
	reencrypt,
} from '../../../src/internal';
import { tempDir } from '../../support/storages';

const disk = () => new LocalDiskStorage({ root: tempDir('facts-admin') });

describe('facts and the rules of every memory', () => {
	it('Expire After: past it the facts read as empty, and Prune Expired deletes them as judged', async () => {
		const storage = disk();
		let now = new Date('2026-01-01T00:00:00Z');
		const facts = new Facts({
			storage,
			space: 'wf',
			subject: { userId: 'u' },
			expireAfterDays: 1,
			now: () => now,
		});
		await facts.add({ text: 'Likes jazz', by: 'x' });
		const dry = await pruneExpired(storage, {
			now: new Date('2026-01-03T00:00:00Z'),
			dryRun: true,
		});
		assert.deepEqual(dry.facts.ids, ['wf/user:u']);
		const r = await pruneExpired(storage, { now: new Date('2026-01-03T00:00:00Z') });
		assert.deepEqual(r.facts, { count: 1, ids: ['wf/user:u'] });
		assert.deepEqual(await storage.list(factsPrefix('wf', { kind: 'user', id: 'u' })), []);
		await facts.add({ text: 'Likes tea', by: 'x' });
		now = new Date('2026-01-05T00:00:00Z');
		assert.deepEqual((await facts.get()).facts, [], 'an expired document reads as empty');
	});

	it('Keep Last N Versions: older versions of the facts are deleted; history says where it stops', async () => {
		const storage = disk();
		const facts = new Facts({
			storage,
			space: 'wf',
			subject: { userId: 'u' },
			keepLastVersions: 3,
		});
		for (let i = 0; i < 6; i++) await facts.add({ text: `Fact ${i}`, by: 'x' });
		const page = await facts.history();
		assert.deepEqual(
			page.entries.map((e) => e.version),
			[6, 5, 4],
		);
		assert.equal(page.truncatedBefore, 4);
		const stored = await storage.list(`${factsPrefix('wf', { kind: 'user', id: 'u' })}versions/`);
		assert.equal(stored.length, 3);
		assert.equal((await facts.get()).facts.length, 6, 'the current document keeps every fact');
	});

	it("a user's facts export and import on their own; an import never overwrites unasked", async () => {
		const storage = disk();
		const facts = new Facts({ storage, space: 'wf', subject: { userId: 'u' } });
		await facts.add({ text: 'Likes jazz', by: 'x' });
		await facts.add({ text: 'Has a cat', by: 'x' });
		const exported = JSON.parse(
			JSON.stringify(await exportFacts({ storage, space: 'wf', subject: { userId: 'u' } })),
		);
		await assert.rejects(importFacts(storage, exported), FactsExistError);
		const r = await importFacts(storage, exported, { space: 'other', subject: { userId: 'v' } });
		assert.equal(r.versions, 2);
		const copy = new Facts({ storage, space: 'other', subject: { userId: 'v' } });
		assert.deepEqual(
			(await copy.get()).facts.map((f) => f.text),
			['Likes jazz', 'Has a cat'],
		);
		assert.deepEqual((await copy.history()).entries.length, 2);
		await assert.rejects(importFacts(storage, { ...exported, format: 'x' }), /not a facts export/);
		const broken = structuredClone(exported);
		broken.versionedData.versions[0].data.facts = 'nope';
		await assert.rejects(importFacts(storage, broken, { overwrite: true }), /versions\[0\]\.data/);
	});

	it("a conversation's own facts go with the whole-conversation export, and with Delete Conversation", async () => {
		const storage = disk();
		const own = new Facts({ storage, space: 'wf', subject: { conversationId: 'c1' } });
		await own.add({ text: 'Wants a quote by Friday', by: 'x' });
		const exported = JSON.parse(JSON.stringify(await exportConversation(storage, 'wf', 'c1')));
		assert.equal(exported.facts[0].space, 'wf');
		const r = await importConversation(storage, 'wf', exported, { conversationId: 'c2' });
		assert.equal(r.factVersions, 1);
		const copy = new Facts({ storage, space: 'wf', subject: { conversationId: 'c2' } });
		assert.deepEqual(
			(await copy.get()).facts.map((f) => f.text),
			['Wants a quote by Friday'],
		);
		await assert.rejects(
			importConversation(storage, 'wf', exported, { conversationId: 'c2' }),
			/already holds/,
		);
		const deleted = await deleteConversationMemory(storage, 'wf', 'c1');
		assert.ok(deleted.some((k) => k.includes('/conversations/c1/')));
		assert.equal((await own.get()).version, null);
	});

	it('Re-Encrypt rewrites the facts of a workflow space under the current key', async () => {
		const root = tempDir('facts-admin');
		const plain = new LocalDiskStorage({ root });
		const own = new Facts({ storage: plain, space: 'wf', subject: { conversationId: 'c1' } });
		await own.add({ text: 'Plain fact', by: 'x' });
		const storage = new EncryptedStorage(plain, {
			current: parseEncryptionKey(randomBytes(32).toString('hex')),
		});
		const r = await reencrypt(storage, { appId: 'wf', conversationId: 'c1' });
		assert.equal(r.rewritten, 3);
		for (const o of await plain.list(factsPrefix('wf', { kind: 'conversation', id: 'c1' })))
			assert.ok(isSealed((await plain.get(o.key))!.body), o.key);
		const again = new Facts({ storage, space: 'wf', subject: { conversationId: 'c1' } });
		assert.deepEqual(
			(await again.get()).facts.map((f) => f.text),
			['Plain fact'],
		);
	});
});
