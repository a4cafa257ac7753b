// What a manifest lists, told without a set of every tier part: the same answers as the explicit set
// of keys (versions, other tiers, wrong extensions, parts past the count), and a check of a folder of
// tens of thousands of parts that holds a page of the listing, not the listing or a key per part.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

import { listedPages, LocalDiskStorage } from '../../../src/internal';
import type { ListedObject, ListOptions, MemoryStorage } from '../../../src/internal';
import { ListedKeys, missingFrom } from '../../../src/indexes/chunks/listed';
import type { NamedParts } from '../../../src/indexes/chunks/listed';
import { tierPartKey } from '../../../src/indexes/chunks/tiering';
import { gc } from '../../support/held';
import { tempDir } from '../../support/storages';

const PREFIX = 'memory_base/kb/wide/lexical/segments/';

const keysOf = (t: NamedParts) =>
	Array.from({ length: t.count }, (_, b) => tierPartKey(PREFIX, t.kind, t.tier, b, t.ext));

/** Tiers of both kinds, some parts rewritten (a version in their key). */
function someTiers(): NamedParts[] {
	const hex = (n: number) => randomBytes(n).toString('hex');
	const versioned = { id: hex(9), versions: { '1': hex(6), '7': hex(6) } };
	return [
		{ kind: 'terms', ext: 'trm', tier: { id: hex(9) }, count: 12 },
		{ kind: 'terms', ext: 'trm', tier: versioned, count: 9 },
		{ kind: 'cells', ext: 'vcl', tier: { id: hex(10) }, count: 5 },
	];
}

describe('the keys a manifest lists', () => {
	it('says of every key what the explicit set of keys says', () => {
		const tiers = someTiers();
		const plain = [`${PREFIX}a1b2c3.lex`, `${PREFIX}codebook-0f0f.vcb`];
		const listed = new ListedKeys(PREFIX, plain, tiers);
		const every = new Set([...plain, ...tiers.flatMap(keysOf)]);
		const [first, versioned, cells] = tiers;
		const others = [
			tierPartKey(PREFIX, 'terms', first.tier, 12, 'trm'), // past the count
			tierPartKey(PREFIX, 'terms', first.tier, 3, 'vcl'), // another kind's extension
			tierPartKey(PREFIX, 'cells', first.tier, 3, 'trm'), // another kind
			tierPartKey(PREFIX, 'terms', { id: versioned.tier.id }, 1, 'trm'), // the version before
			tierPartKey(PREFIX, 'terms', { id: versioned.tier.id, versions: { '2': 'abc' } }, 2, 'trm'),
			tierPartKey(PREFIX, 'terms', { id: 'ffff' }, 0, 'trm'), // a tier not listed
			tierPartKey('elsewhere/', 'cells', cells.tier, 0, 'vcl'),
			`${PREFIX}terms-${first.tier.id}-03.trm`, // a part number written otherwise
			`${PREFIX}terms-${first.tier.id}-3-x-y.trm`,
			`${PREFIX}terms-${first.tier.id}-3`,
			`${PREFIX}a1b2c4.lex`,
			`${PREFIX}`,
		];
		for (const key of [...every, ...others])
			assert.equal(listed.has(key), every.has(key), `${key}: ${every.has(key)}`);
		assert.equal(listed.empty, false);
		assert.equal(new ListedKeys(PREFIX, [], []).empty, true);
	});

	it('gives as missing exactly the listed keys not seen, in order', () => {
		const tiers = someTiers();
		const plain = [`${PREFIX}s1.lex`, `${PREFIX}s2.lex`, `${PREFIX}s3.lex`];
		const listed = new ListedKeys(PREFIX, plain, tiers);
		const every = [...plain, ...tiers.flatMap(keysOf)];
		const gone = new Set(every.filter((_, i) => i % 4 === 1));
		for (const key of every) if (!gone.has(key)) listed.see(key);
		listed.see(`${PREFIX}unlisted.lex`);
		assert.deepEqual(listed.missing(), [...gone]);
	});

	it('lists key by key a tier whose ID does not read back from its keys', () => {
		const odd: NamedParts = { kind: 'terms', ext: 'trm', tier: { id: 'a-b' }, count: 3 };
		const listed = new ListedKeys(PREFIX, [], [odd]);
		for (const key of keysOf(odd)) assert.ok(listed.has(key), key);
		assert.equal(listed.has(tierPartKey(PREFIX, 'terms', odd.tier, 3, 'trm')), false);
		listed.see(keysOf(odd)[0]);
		assert.deepEqual(listed.missing(), keysOf(odd).slice(1));
		const version: NamedParts = { ...odd, tier: { id: 'abc', versions: { '1': 'v-2' } } };
		const byKey = new ListedKeys(PREFIX, [], [version]);
		for (const key of keysOf(version)) assert.ok(byKey.has(key), key);
		assert.equal(byKey.has(tierPartKey(PREFIX, 'terms', { id: 'abc' }, 1, 'trm')), false);
	});
});

/** Local disk whose listing notes, page by page, the most heap held since `start` (after a full GC). */
class Sampled extends LocalDiskStorage {
	base = 0;
	most = 0;
	pages = 0;

	async *listPages(prefix: string, options?: ListOptions): AsyncGenerator<ListedObject[]> {
		for await (const page of super.listPages(prefix, options)) yield this.sampled(page);
	}

	async *listKeys(prefix: string): AsyncGenerator<string[]> {
		for await (const page of super.listKeys(prefix)) yield this.sampled(page);
	}

	private sampled<T>(page: T): T {
		this.pages++;
		gc();
		this.most = Math.max(this.most, process.memoryUsage().heapUsed - this.base);
		return page;
	}

	start(): void {
		gc();
		this.base = process.memoryUsage().heapUsed;
		this.most = 0;
	}
}

describe('a folder of tens of thousands of tier parts', () => {
	it('is checked for lost parts holding a page of the listing, not a key per part', async () => {
		const root = tempDir('listed-keys');
		// 12 tiers of 4,096 buckets beside 400 segments: about what the base-wide word index of a base
		// of 100,000 users holds in its one folder.
		const tiers: NamedParts[] = Array.from({ length: 12 }, () => ({
			kind: 'terms',
			ext: 'trm',
			tier: { id: randomBytes(9).toString('hex') },
			count: 4096,
		}));
		const segments = Array.from(
			{ length: 400 },
			() => `${PREFIX}${randomBytes(12).toString('hex')}.lex`,
		);
		const folder = path.join(root, ...PREFIX.split('/'));
		mkdirSync(folder, { recursive: true });
		const every = [...segments, ...tiers.flatMap(keysOf)];
		for (const key of every) writeFileSync(path.join(root, ...key.split('/')), '');
		const lost = [every[7], every[1000], every[every.length - 1]];
		for (const key of lost) rmSync(path.join(root, ...key.split('/')));
		const storage = new Sampled({ root });
		storage.start();
		const missing = await missingFrom(storage, new ListedKeys(PREFIX, segments, tiers));
		assert.deepEqual(missing, lost);
		assert.ok(storage.pages >= 49, `${storage.pages} pages of a thousand`);
		// Measured here: a set of the listed keys and a sorted read of the folder held 18 MiB, the
		// sorted read alone 6.9 MiB; this check 0.4 to 0.5 MiB (a page of a thousand keys), 1.3 to 2.4
		// when it listed each file's metadata too.
		const held = storage.most / 2 ** 20;
		assert.ok(held < 4, `held ${held.toFixed(2)} MiB while listing ${every.length} parts`);
	});

	it('is listed in key order unless any order will do, and in pages either way', async () => {
		const root = tempDir('listed-order');
		const storage: MemoryStorage = new LocalDiskStorage({ root });
		const keys = Array.from(
			{ length: 2500 },
			(_, i) => `f/a/${randomBytes(6).toString('hex')}-${i}`,
		);
		keys.push('f/b/one', 'f/b/two', 'f/c');
		for (const key of keys) await storage.put(key, Buffer.from('x'), { ifVersion: null });
		const read = async (options?: ListOptions) => {
			const pages: string[][] = [];
			for await (const page of listedPages(storage, 'f/', options))
				pages.push(page.map((o) => o.key));
			return pages;
		};
		const sorted = (await read()).flat();
		assert.deepEqual(sorted.slice(0, 2500), [...keys.slice(0, 2500)].sort());
		const streamed = await read({ anyOrder: true });
		assert.ok(streamed.every((p) => p.length <= 1000) && streamed.length >= 3);
		assert.deepEqual([...streamed.flat()].sort(), [...keys].sort());
		// A folder's keys come together.
		const folderOf = (k: string) => k.slice(0, k.lastIndexOf('/'));
		const runs = streamed
			.flat()
			.map(folderOf)
			.filter((f, i, all) => i === 0 || all[i - 1] !== f);
		assert.equal(new Set(runs).size, runs.length, runs.join(' '));
	});
});
