// Forget and facts: Forget User deletes a user's facts (found by user, and the conversations they were
// learned in), a forgotten conversation's own facts, and what was learned in a forgotten conversation
// from every other subject's facts, older versions included: a scan of every stored byte, plain and
// encrypted, finds none of it; what was learned elsewhere stays, with its history.
import assert from 'node:assert/strict';
import { createHash, randomBytes as random } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	ConversationMemory,
	EncryptedStorage,
	Facts,
	forgetUser,
	LocalDiskStorage,
	parseEncryptionKey,
	StorageError,
} from '../../../src/internal';
import type { MemoryStorage } from '../../../src/internal';
import { standInExtractor } from '../../support/fact-extractor';
import { MeteredStorage } from '../../support/wide-base';
import { tempDir } from '../../support/storages';
import { expanded } from '../../support/stored-segments';
import { turn } from './support';

const ALICE = 'Alicesecret4417';
const SHARED = 'Sharedsecret7781';
const BOB = 'Bobsecret9902';

function holds(root: string, secret: string): boolean {
	for (const f of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
		const p = path.join(root, f);
		if (!statSync(p).isFile()) continue;
		const b = expanded(readFileSync(p));
		if (b.includes(secret) || b.includes(Buffer.from(secret).toString('base64'))) return true;
	}
	return false;
}

const learnIn = (facts: Facts, conversationId: string, id: string, text: string) =>
	facts.learn({
		extract: standInExtractor().extract,
		source: { workflowId: 'wf', conversationId },
		messages: turn(id, text),
		force: true,
	});

/**
 * Alice's facts (learned in a1, whose chat memory exists), a conversation's own facts (n1, no User
 * ID), and Bob's facts learned in b1 and in x1 (a conversation to forget), one of x1's facts
 * superseding one of b1's, then superseded again in b1.
 */
async function plant(storage: MemoryStorage) {
	const alice = new Facts({ storage, space: 'wf', subject: { userId: 'alice' } });
	const own = new Facts({ storage, space: 'wf', subject: { conversationId: 'n1' } });
	const bob = new Facts({ storage, space: 'other', subject: { userId: 'bob' } });
	const memory = new ConversationMemory('wf', 'a1', { storage });
	await memory.addMessages({ userContent: `I have ${ALICE}`, assistantContent: 'ok' });
	await memory.flush();
	await learnIn(alice, 'a1', 'a1m', `I have a code ${ALICE}.`);
	await learnIn(own, 'n1', 'n1m', `I have a token ${ALICE}.`);
	await learnIn(bob, 'b1', 'b1m', `I have a boat called ${BOB}.`);
	await learnIn(bob, 'b1', 'b1n', 'I live in Lisbon.');
	await learnIn(bob, 'x1', 'x1m', `I moved to ${SHARED} town. I have a pin ${SHARED}.`);
	await learnIn(bob, 'b1', 'b1o', 'I moved to Porto.');
	return { alice, own, bob };
}

/** Every stored object by key with a digest of its bytes (lock files and temporary copies left out). */
function snapshot(root: string): Map<string, string> {
	const out = new Map<string, string>();
	for (const f of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
		const p = path.join(root, f);
		if (!statSync(p).isFile() || /\.lock$|\.tmp-|\.leftover/.test(f)) continue;
		out.set(
			f.split(path.sep).join('/'),
			createHash('sha256').update(readFileSync(p)).digest('hex'),
		);
	}
	return out;
}

describe('Forget and facts', () => {
	it('reports every facts object it deleted or rewrote, checked against the storage before and after', async () => {
		const root = tempDir('facts-forget');
		const storage = new LocalDiskStorage({ root });
		await plant(storage);
		const before = snapshot(root);
		const r = await forgetUser(storage, { conversationId: 'x1' });
		const after = snapshot(root);
		const removed = [...before.keys()].filter((k) => !after.has(k)).sort();
		const changed = [...after.keys()].filter((k) => before.get(k) !== after.get(k)).sort();
		assert.deepEqual([...new Set(r.deleted)].sort(), removed);
		assert.deepEqual([...r.rewritten].sort(), changed);
		assert.ok(changed.length >= 5, changed.join('\n'));
	});

	for (const encrypted of [false, true])
		it(`Forget User deletes a user's facts and finds their conversations through them, ${encrypted ? 'encrypted' : 'plain'}`, async () => {
			const root = tempDir('facts-forget');
			const disk = new LocalDiskStorage({ root });
			const storage = encrypted
				? new EncryptedStorage(disk, {
						current: parseEncryptionKey(random(32).toString('hex')),
					})
				: disk;
			const { alice, bob } = await plant(storage);
			if (!encrypted) assert.ok(holds(root, ALICE));
			const r = await forgetUser(storage, { userId: 'alice' });
			assert.deepEqual(r.conversationIds, ['a1'], 'found through the facts');
			assert.ok(r.counts.facts >= 3 && r.counts.chatMemory >= 1, JSON.stringify(r.counts));
			assert.equal((await alice.get()).version, null);
			// n1's own facts hold the secret too: Forget Conversation takes them.
			await forgetUser(storage, { conversationId: 'n1' });
			assert.ok(!holds(root, ALICE), 'no stored byte holds the secret');
			if (!encrypted) assert.ok(holds(root, BOB));
			assert.equal((await bob.get()).facts.length, 3, "Bob's facts are untouched");
		});

	for (const encrypted of [false, true])
		it(`Forget Conversation takes what was learned in it out of other facts and every older version, ${encrypted ? 'encrypted' : 'plain'}`, async () => {
			const root = tempDir('facts-forget');
			const disk = new LocalDiskStorage({ root });
			const storage = encrypted
				? new EncryptedStorage(disk, {
						current: parseEncryptionKey(random(32).toString('hex')),
					})
				: disk;
			const { bob } = await plant(storage);
			if (!encrypted) assert.ok(holds(root, SHARED));
			const before = (await bob.history()).entries.length;
			const r = await forgetUser(storage, { conversationId: 'x1' });
			assert.ok(
				r.rewritten.some((k) => k.includes('/users/bob/versions/')),
				r.rewritten.join('\n'),
			);
			assert.ok(!holds(root, SHARED), 'no version holds what was learned in x1');
			assert.ok(!holds(root, 'x1m'), 'nor its message IDs');
			if (!encrypted) assert.ok(holds(root, BOB), 'what was learned elsewhere stays');
			const all = await bob.get({ all: true });
			assert.deepEqual(
				all.facts.map((f) => [f.text, f.status, f.superseded?.by]),
				[
					[`Has a boat called ${BOB}`, 'current', undefined],
					['Lives in Lisbon', 'superseded', 'f5'],
					['Lives in Porto', 'current', undefined],
				],
				'Lisbon, once superseded by x1, is superseded by what came after it',
			);
			assert.deepEqual(
				all.cursors.map((c) => c.conversation_id),
				['b1'],
			);
			const history = (await bob.history()).entries;
			assert.equal(
				history.length,
				before + 1,
				'every version stays, one more says what was forgotten',
			);
			for (const e of history) {
				const v = await bob.getVersion(e.version);
				assert.doesNotMatch(JSON.stringify(v), new RegExp(`${SHARED}|x1`));
			}
			assert.deepEqual((await forgetUser(storage, { conversationId: 'x1' })).rewritten, []);
		});

	it('a Forget that stops while rewriting versions is finished by the next run', async () => {
		const root = tempDir('facts-forget');
		const disk = new LocalDiskStorage({ root });
		await plant(disk);
		let versionWrites = 0;
		const failing: MemoryStorage = Object.assign(Object.create(disk), {
			put: async (key: string, body: Uint8Array, options?: object) => {
				if (
					/\/users\/bob\/versions\//.test(key) &&
					options &&
					'ifVersion' in options &&
					typeof (options as { ifVersion: unknown }).ifVersion === 'string' &&
					++versionWrites === 2
				)
					throw new StorageError('simulated crash while rewriting', key);
				return disk.put(key, body, options as never);
			},
		});
		await assert.rejects(forgetUser(failing, { conversationId: 'x1' }), StorageError);
		assert.ok(holds(root, SHARED), 'the crash left an older version holding it');
		await forgetUser(disk, { conversationId: 'x1' });
		assert.ok(!holds(root, SHARED));
	});

	it('a retirement evidenced in a forgotten conversation is undone', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('facts-forget') });
		const bob = new Facts({ storage, space: 'wf', subject: { userId: 'bob' } });
		await learnIn(bob, 'b1', 'b1m', 'I have a red car.');
		await learnIn(bob, 'x1', 'x1m', 'I sold my car.');
		assert.equal((await bob.get()).facts.length, 0);
		await forgetUser(storage, { conversationId: 'x1' });
		const [car] = (await bob.get({ all: true })).facts;
		assert.deepEqual([car.text, car.status], ['Has a red car', 'current']);
	});

	it('Forget User reads facts a folder at a time from a paged listing; a listing that splits a folder is an error', async () => {
		const root = tempDir('facts-pages');
		const metered = new MeteredStorage(new LocalDiskStorage({ root }));
		await plant(metered);
		metered.take();
		await forgetUser(metered, { userId: 'alice' });
		// One conversation's folders are listed whole (a few keys); no root of every conversation's or subject's.
		assert.deepEqual(
			metered.listed.filter((p) => /^[^/]+\/$/.test(p)),
			[],
			'no root listed whole',
		);
		assert.ok(metered.paged.includes('facts/'), metered.paged.join(', '));
		await forgetUser(metered, { conversationId: 'n1' });
		assert.equal(holds(root, ALICE), false);
		// A store whose pages give one of Bob's keys apart from its folder: refused, not half-read.
		const disk = new LocalDiskStorage({ root: tempDir('facts-split') });
		await plant(disk);
		const split: MemoryStorage = Object.assign(Object.create(disk) as MemoryStorage, {
			listPages: async function* (prefix: string) {
				const all = await disk.list(prefix);
				const i = all.findIndex((o) => o.key.includes('/users/bob/'));
				if (i >= 0) all.push(...all.splice(i, 1));
				yield all;
			},
		});
		await assert.rejects(forgetUser(split, { conversationId: 'x1' }), (error: unknown) => {
			assert.ok(error instanceof StorageError);
			assert.match(error.message, /did not give .*users\/bob\/ together/);
			return true;
		});
		await forgetUser(disk, { conversationId: 'x1' });
		assert.equal(holds(disk.root, SHARED), false, 'the next run finishes it');
	});
});
