// Trust on both backends (local disk and radosgw): Forget User leaves no object holding a user's
// secret, read raw as the folder or bucket owner would, plain or encrypted; with encryption every
// object is sealed, a wrong key is refused by key ID, and a flipped byte is corrupt and left untouched.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';

import {
	ConversationMemory,
	CorruptDocumentError,
	EncryptedStorage,
	EncryptionKeyError,
	forgetUser,
	isSealed,
	LocalDiskStorage,
	parseEncryptionKey,
} from '../../src/internal';
import type { MemoryStorage } from '../../src/internal';
import { ALICE, BOB, bobIntact, plant, storageHolds } from '../support/forget-plant';
import { rgwStorage } from '../support/rgw';
import { tempDir } from '../support/storages';

const backends: Array<[string, () => Promise<MemoryStorage>]> = [
	['local disk', async () => new LocalDiskStorage({ root: tempDir('trust') })],
	['radosgw', () => rgwStorage()],
];
const newKey = () => parseEncryptionKey(randomBytes(32).toString('base64'));

for (const [backend, make] of backends)
	describe(`trust on ${backend}`, () => {
		for (const encrypted of [false, true])
			it(`Forget User leaves no stored byte of the user${encrypted ? ' (encrypted)' : ''}`, async () => {
				const raw = await make();
				const storage = encrypted ? new EncryptedStorage(raw, { current: newKey() }) : raw;
				await plant(storage);
				assert.equal(await storageHolds(raw, ALICE), !encrypted);
				const r = await forgetUser(storage, { userId: 'alice' });
				assert.deepEqual(r.conversationIds, ['a1', 'a2']);
				assert.equal(await storageHolds(raw, ALICE), false);
				assert.equal(await storageHolds(raw, BOB), !encrypted);
				await bobIntact(storage);
				assert.deepEqual((await forgetUser(storage, { userId: 'alice' })).deleted, []);
			});

		it('encrypted: every object sealed; a wrong key and a flipped byte refused, nothing overwritten', async () => {
			const raw = await make();
			const key = newKey();
			const storage = new EncryptedStorage(raw, { current: key });
			await plant(storage);
			for (const o of await raw.list('')) assert.ok(isSealed((await raw.get(o.key))!.body), o.key);
			const docKey = 'conversation_memory/wfA/b1.json';
			const read = (s: MemoryStorage) =>
				new ConversationMemory('wfA', 'b1', { storage: s }).getHistoryPromptMessages({});
			await assert.rejects(read(new EncryptedStorage(raw, { current: newKey() })), (e: unknown) => {
				assert.ok(e instanceof EncryptionKeyError && e.keyId === key.id);
				return true;
			});
			const body = Buffer.from((await raw.get(docKey))!.body);
			body[body.length - 1] ^= 0x80;
			await raw.put(docKey, body);
			await assert.rejects(read(storage), CorruptDocumentError);
			const write = async () => {
				const m = new ConversationMemory('wfA', 'b1', { storage });
				await m.addMessages({ userContent: 'x', assistantContent: 'y' });
				await m.flush();
			};
			await assert.rejects(write(), CorruptDocumentError);
			assert.deepEqual(Buffer.from((await raw.get(docKey))!.body), body);
		});
	});
