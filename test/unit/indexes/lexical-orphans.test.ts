// What a killed writer leaves in a word index (a segment or a tier's bucket written, never listed) is
// swept once nobody wrote it for a while; nothing the manifest lists is touched.
import assert from 'node:assert/strict';
import { utimesSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

import { bucketKeys, LocalDiskStorage, settleTiers, tiersOf } from '../../../src/internal';
import { tempDir } from '../../support/storages';
import { assertExact, docs, indexOn } from '../../support/term-tiers';

describe('unlisted parts of a word index', () => {
	it('a sweep takes an unlisted segment after the given age, an unlisted bucket only after an hour', async () => {
		const root = tempDir('lexical-orphans');
		const index = indexOn(new LocalDiskStorage({ root }));
		await index.addOlder(docs(1600, 4));
		await settleTiers(index);
		const { doc } = await index.readManifest(true);
		assert.ok(tiersOf(doc).usable.length > 0, 'tiers built');
		assert.deepEqual(await index.sweepOrphans(0), [], 'every stored part listed');

		const prefix = index.segmentsPrefix;
		const aged = async (key: string, minutes: number) => {
			await index.storage.put(key, Buffer.from('unlisted'), { ifVersion: null });
			const at = new Date(Date.now() - minutes * 60_000);
			utimesSync(path.join(root, ...key.split('/')), at, at);
		};
		await aged(`${prefix}0123456789abcdef01234567.lex`, 10);
		await aged(`${prefix}0123456789abcdef01234568.lex`, 1);
		await aged(`${prefix}terms-0123456789abcdef01-0.trm`, 10);
		await aged(`${prefix}terms-0123456789abcdef02-0.trm`, 61);
		// Listed parts as old as the oldest orphan stay.
		const listed = [...doc.segments.map((r) => r.key), ...bucketKeys(prefix, doc.terms![0])];
		const old = new Date(Date.now() - 120 * 60_000);
		for (const key of listed) utimesSync(path.join(root, ...key.split('/')), old, old);
		assert.deepEqual((await index.sweepOrphans(5 * 60_000)).sort(), [
			`${prefix}0123456789abcdef01234567.lex`,
			`${prefix}terms-0123456789abcdef02-0.trm`,
		]);
		for (const kept of ['0123456789abcdef01234568.lex', 'terms-0123456789abcdef01-0.trm'])
			assert.ok(await index.storage.get(`${prefix}${kept}`), kept);
		assert.deepEqual(await index.sweepOrphans(5 * 60_000), []);
		await assertExact(index, ['w0x', 'w3x w4x w5x']);
	});

	it('a reset deletes every segment and tier bucket its manifest listed and old unlisted parts, not young ones', async () => {
		const root = tempDir('lexical-reset');
		const storage = new LocalDiskStorage({ root });
		const index = indexOn(storage);
		await index.addOlder(docs(1600, 4));
		await settleTiers(index);
		const { doc } = await index.readManifest(true);
		const prefix = index.segmentsPrefix;
		const buckets = (doc.terms ?? []).flatMap((t) => bucketKeys(prefix, t));
		assert.ok(buckets.length > 1 && doc.segments.length > 1, 'tiers and segments built');
		const at = (key: string, minutes: number) => {
			const when = new Date(Date.now() - minutes * 60_000);
			utimesSync(path.join(root, ...key.split('/')), when, when);
		};
		const young = `${prefix}terms-0123456789abcdef03-0.trm`;
		const old = `${prefix}0123456789abcdef01234569.lex`;
		for (const key of [young, old])
			await storage.put(key, Buffer.from('unlisted'), { ifVersion: null });
		at(old, 20);
		await index.reset();
		assert.deepEqual(
			(await storage.list(prefix)).map((o) => o.key),
			[young],
		);
		const after = (await index.readManifest(true)).doc;
		assert.deepEqual([after.segments.length, after.terms ?? []], [0, []]);
	});
});
