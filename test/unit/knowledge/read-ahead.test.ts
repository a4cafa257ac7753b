// A search reads its manifests and the metadata beside its configuration's conditional read, not after
// it, once the process has read the configuration: a user's search on a remote store waits for two
// round trips instead of three (four with an open conversation). A configuration changed since, even
// by a base deleted and made again by another process, is read as it is now.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { sleep } from '../../../src/common/sleep';
import { clearAllCaches, LocalDiskStorage, MemoryBase } from '../../../src/internal';
import type { MemoryStorage } from '../../../src/internal';
import { TestEmbedder } from '../../support/embeddings';
import { aroundGets, tempDir } from '../../support/storages';

/** `inner` whose configuration is answered once another read was asked for (or after a second). */
function configLast(inner: MemoryStorage) {
	let asked: () => void = () => {};
	let other = new Promise<void>((r) => (asked = r));
	const seen = {
		beside: [] as boolean[],
		keys: [] as string[],
		/** Before a search: what the last one asked for does not count. */
		reset: () => {
			seen.keys.length = 0;
			other = new Promise<void>((r) => (asked = r));
		},
	};
	const storage = aroundGets(inner, async (key, read) => {
		seen.keys.push(key);
		if (!key.endsWith('/config.json')) asked();
		else
			seen.beside.push(await Promise.race([other.then(() => true), sleep(1000).then(() => false)]));
		return read();
	});
	return { storage, seen };
}

async function twoUsers(root: string) {
	const base = new MemoryBase({
		storage: new LocalDiskStorage({ root }),
		baseId: 'kb',
		embedder: new TestEmbedder(8),
	});
	for (const user of ['ann', 'bob'])
		for (let i = 0; i < 3; i++)
			await base.capture({
				sessionId: `chat-${user}`,
				userId: user,
				runId: `r-${user}-${i}`,
				texts: [`${user} keeps ${i + 2} herons by the lantern`],
			});
	await base.sync();
	return base;
}

describe('reads ahead of the configuration', () => {
	it("a user's search asks for its manifests and metadata beside the configuration once the process read it, with the same reads and answers", async () => {
		const root = tempDir('read-ahead');
		await twoUsers(root);
		clearAllCaches();
		const { storage, seen } = configLast(new LocalDiskStorage({ root }));
		const base = new MemoryBase({ storage, baseId: 'kb', embedder: new TestEmbedder(8) });
		const first = await base.search('herons', { userId: 'ann', k: 2 });
		const firstKeys = [...seen.keys].sort();
		assert.deepEqual(
			seen.beside,
			[false],
			'nothing to read ahead before the configuration is known',
		);
		seen.reset();
		seen.beside.length = 0;
		const again = await base.search('herons', { userId: 'ann', k: 2 });
		assert.deepEqual(seen.beside, [true], 'the configuration was read before anything else');
		// The same objects, each once (the segments held in the cache since the first search).
		assert.deepEqual(
			[...seen.keys].sort(),
			firstKeys.filter((k) => !/\.(lex|vec)$/.test(k)),
		);
		assert.deepEqual(again, first);
		seen.reset();
		seen.beside.length = 0;
		// Another user: their own partition's manifests, read ahead too.
		const bob = await base.search('herons', { userId: 'bob', k: 2 });
		assert.deepEqual(seen.beside, [true]);
		assert.ok(bob.length > 0 && bob.every((m) => m.text.startsWith('bob')));
		assert.equal(new Set(seen.keys).size, seen.keys.length, 'each object read once');
		// Every conversation, and a conversation (read after its log: nothing ahead).
		seen.reset();
		seen.beside.length = 0;
		await base.search('herons', { allUsers: true, k: 2 });
		seen.reset();
		await base.search('herons', { sessionId: 'chat-ann', k: 2 });
		assert.deepEqual(seen.beside, [true, false]);
	});

	it('a base deleted and made again by another process since: the search reads the new one', async () => {
		const root = tempDir('read-ahead-again');
		await twoUsers(root);
		clearAllCaches();
		const reader = new MemoryBase({
			storage: new LocalDiskStorage({ root }),
			baseId: 'kb',
			embedder: new TestEmbedder(8),
		});
		assert.ok((await reader.search('herons', { userId: 'ann', k: 1 })).length > 0);
		// Another process (its own caches): the base deleted, then made again with other words.
		const other = new MemoryBase({
			storage: new LocalDiskStorage({ root }),
			baseId: 'kb',
			embedder: new TestEmbedder(8),
		});
		await other.delete();
		await other.capture({
			sessionId: 'chat-ann',
			userId: 'ann',
			runId: 'new-1',
			texts: ['ann now keeps otters by the mill'],
		});
		await other.sync();
		const found = await reader.search('otters herons', { userId: 'ann', k: 3 });
		assert.deepEqual(
			found.map((m) => m.text),
			['ann now keeps otters by the mill'],
		);
	});
});
