// Forget User: a user's secret planted in chat memory (two workflows, shared and node memory), a copied
// file, versioned data and two Memory Bases is gone from every stored byte afterwards, plain or
// encrypted; another user's memory stays; a run that stops midway is finished by the next one.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	EncryptedStorage,
	forgetUser,
	InvalidInputError,
	listMemoryBases,
	LocalDiskStorage,
	parseEncryptionKey,
	StorageError,
} from '../../../src/internal';
import type { MemoryStorage } from '../../../src/internal';
import { ALICE, BOB, bobIntact, plant } from '../../support/forget-plant';
import { tempDir } from '../../support/storages';
import { expanded } from '../../support/stored-segments';

function allBytes(root: string): Buffer[] {
	return readdirSync(root, { recursive: true, encoding: 'utf8' })
		.map((f) => path.join(root, f))
		.filter((f) => statSync(f).isFile())
		.map((f) => expanded(readFileSync(f)));
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
const holds = (root: string, secret: string) =>
	allBytes(root).some(
		(b) => b.includes(secret) || b.includes(Buffer.from(secret).toString('base64')),
	);

describe('Forget User', () => {
	for (const encrypted of [false, true])
		it(`deletes every byte of a user's memory, ${encrypted ? 'encrypted' : 'plain'}; others stay; a second run finds nothing`, async () => {
			const root = tempDir('forget');
			const disk = new LocalDiskStorage({ root });
			const storage = encrypted
				? new EncryptedStorage(disk, {
						current: parseEncryptionKey(randomBytes(32).toString('hex')),
					})
				: disk;
			await plant(storage);
			if (!encrypted) assert.ok(holds(root, ALICE), 'the secret was planted in clear');
			const r = await forgetUser(storage, { userId: 'alice' });
			assert.deepEqual(r.conversationIds, ['a1', 'a2']);
			assert.equal(r.workflows, 2);
			assert.ok(r.counts.chatMemory >= 3 && r.counts.files >= 1 && r.counts.versionedData >= 1);
			assert.ok(r.counts.memoryBase >= 2, JSON.stringify(r.counts));
			assert.ok(!holds(root, ALICE), 'no byte holds the secret');
			if (!encrypted) assert.ok(holds(root, BOB));
			await bobIntact(storage);
			const again = await forgetUser(storage, { userId: 'alice' });
			assert.deepEqual([again.conversationIds, again.deleted], [[], []]);
		});

	it('reports every object it deleted or rewrote, checked against the storage before and after', async () => {
		const root = tempDir('forget');
		const storage = new LocalDiskStorage({ root });
		await plant(storage);
		const before = snapshot(root);
		const r = await forgetUser(storage, { userId: 'alice' });
		const after = snapshot(root);
		const removed = [...before.keys()].filter((k) => !after.has(k)).sort();
		const changed = [...after.keys()].filter((k) => before.get(k) !== after.get(k)).sort();
		assert.deepEqual([...new Set(r.deleted)].sort(), removed, 'deleted: exactly what is gone');
		assert.deepEqual([...r.rewritten].sort(), changed, 'rewritten: exactly what was written anew');
		assert.ok(
			r.rewritten.some((k) => k.endsWith('/index/manifest.json')) &&
				r.rewritten.some((k) => k.endsWith('/lexical/manifest.json')),
			'the index manifests are named',
		);
		assert.ok(
			r.deleted.some((k) => k.endsWith('.vec')),
			'so is a vector segment',
		);
	});

	it('by conversation: one conversation in every workflow and base', async () => {
		const root = tempDir('forget');
		const storage = new LocalDiskStorage({ root });
		await plant(storage);
		const r = await forgetUser(storage, { conversationId: 'b1' });
		assert.deepEqual(r.conversationIds, ['b1']);
		assert.ok(!holds(root, BOB));
		assert.ok(holds(root, ALICE));
	});

	it('a run that stops midway is finished by the next run', async () => {
		const root = tempDir('forget');
		const disk = new LocalDiskStorage({ root });
		await plant(disk);
		let deletes = 0;
		const failing: MemoryStorage = Object.assign(Object.create(disk), {
			delete: async (key: string, options?: object) => {
				if (++deletes === 6) throw new StorageError('simulated crash while deleting', key);
				return disk.delete(key, options as never);
			},
		});
		await assert.rejects(forgetUser(failing, { userId: 'alice' }), StorageError);
		assert.ok(holds(root, ALICE), 'the crash left some of it');
		const r = await forgetUser(disk, { userId: 'alice' });
		assert.deepEqual(r.conversationIds, ['a1', 'a2']);
		assert.ok(!holds(root, ALICE));
		assert.deepEqual((await forgetUser(disk, { userId: 'alice' })).deleted, []);
	});

	it('refuses no target, and IDs of the wrong shape, by name', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('forget') });
		await assert.rejects(forgetUser(storage, {}), InvalidInputError);
		await assert.rejects(forgetUser(storage, { userId: '../x' }), /user_id/);
		await assert.rejects(forgetUser(storage, { conversationId: 7 as never }), /conversation_id/);
	});

	it('finds the bases by their folders, never by listing every key under them (a large base holds millions)', async () => {
		const disk = new LocalDiskStorage({ root: tempDir('forget-folders') });
		const lists: string[] = [];
		const folders: string[] = [];
		const recorded = new Proxy(disk, {
			get(target, name) {
				const v = Reflect.get(target, name, target) as unknown;
				if (typeof v !== 'function') return v;
				return (...args: unknown[]) => {
					if (name === 'list') lists.push(String(args[0]));
					if (name === 'listFolders') folders.push(String(args[0]));
					return (v as (...a: unknown[]) => unknown).apply(target, args);
				};
			},
		});
		await plant(recorded);
		lists.length = 0;
		const r = await forgetUser(recorded, { userId: 'alice' });
		assert.deepEqual(r.conversationIds, ['a1', 'a2']);
		assert.ok(folders.includes('memory_base/'), JSON.stringify(folders));
		for (const root of ['memory_base/', 'knowledge_base/'])
			assert.ok(!lists.includes(root), `no listing of every key under ${root}: ${lists}`);
		assert.deepEqual(await listMemoryBases(recorded), await listMemoryBases(disk));
		assert.ok((await listMemoryBases(disk)).length >= 2, 'the planted bases are listed');
		assert.ok(!lists.includes('memory_base/'));
	});
});
