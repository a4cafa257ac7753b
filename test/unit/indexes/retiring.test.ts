// Parts a swap replaced in an index searched part after part (the base-wide one) are kept a while for
// searches that read the manifest before the swap, then deleted by a later swap; a Forget takes them
// at once; a sweep keeps them; a manifest naming keys outside the index never gets them deleted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	MAX_RETIRED,
	MAX_RETIRED_BYTES,
	retiredKeys,
	retireParts,
	RETIRE_GRACE_MS,
} from '../../../src/indexes/chunks/retiring';
import type { Retiring } from '../../../src/indexes/chunks/retiring';
import {
	clearVectorCache,
	EmbeddedIndex,
	IndexDamagedError,
	LexicalIndex,
	LocalDiskStorage,
	MAX_SEGMENTS,
	streamedRanking,
	vectorIndexPrefix,
} from '../../../src/internal';
import type { IndexedChunk, MemoryStorage, StoredObject } from '../../../src/internal';
import { randomRows, seededRandom } from '../../support/embeddings';
import { tempDir } from '../../support/storages';
import { expanded } from '../../support/stored-segments';
import { vectorChunk } from '../../support/vector-segments';

const PREFIX = 'kb/segments/';
const policy = { prefix: PREFIX, graceMs: RETIRE_GRACE_MS };
const T0 = Date.UTC(2026, 10, 1);
const emptyDoc = (): Retiring & { segments: string[] } => ({ segments: [] });
const parts = (keys: string[], bytes = 1000) => keys.map((key) => ({ key, bytes }));

const chunk = (i: number, session = 's', text = `text ${i}`): IndexedChunk =>
	vectorChunk(i, session, { text, created_at: new Date(T0).toISOString() });

/** Every stored object's bytes as text (gzip opened), to look for what must be gone. */
async function storedText(storage: MemoryStorage, prefix: string): Promise<string> {
	const out: string[] = [];
	for (const o of await storage.list(prefix)) {
		const body = Buffer.from((await storage.get(o.key))!.body);
		out.push(expanded(body).toString('latin1'));
	}
	return out.join('\n');
}

describe('retired parts (the rule)', () => {
	it('kept for the grace, then due; an index without a grace deletes at once', () => {
		const keys = [`${PREFIX}a.vec`, `${PREFIX}b.vec`];
		const first = retireParts(emptyDoc(), parts(keys), policy, { now: T0 });
		assert.deepEqual(first.due, []);
		assert.deepEqual(retiredKeys(first.doc), keys);
		const within = retireParts(first.doc, [], policy, { now: T0 + RETIRE_GRACE_MS - 1 });
		assert.deepEqual(within.due, []);
		const after = retireParts(first.doc, parts([`${PREFIX}c.vec`]), policy, {
			now: T0 + RETIRE_GRACE_MS + 1,
		});
		assert.deepEqual(after.due, keys);
		assert.deepEqual(retiredKeys(after.doc), [`${PREFIX}c.vec`]);
		const now = retireParts(emptyDoc(), parts(keys), { prefix: PREFIX, graceMs: 0 });
		assert.deepEqual(now.due, keys);
		assert.equal('retired' in now.doc, false);
	});

	it('at most MAX_RETIRED listed (the oldest go first); a Forget takes them all', () => {
		const keys = Array.from({ length: MAX_RETIRED + 5 }, (_, i) => `${PREFIX}${i}.vec`);
		const r = retireParts(emptyDoc(), parts(keys), policy, { now: T0 });
		assert.deepEqual(r.due, keys.slice(0, 5));
		assert.equal(retiredKeys(r.doc).length, MAX_RETIRED);
		const all = retireParts(r.doc, [], policy, { now: T0, all: true });
		assert.deepEqual(all.due, keys.slice(5));
		assert.equal(all.doc.retired, undefined);
	});

	it('at most MAX_RETIRED_BYTES kept (the oldest go first; a part larger than all of it goes at once)', () => {
		const third = Math.floor(MAX_RETIRED_BYTES / 3);
		const keys = [0, 1, 2, 3].map((i) => `${PREFIX}${i}.vcl`);
		const r = retireParts(emptyDoc(), parts(keys, third), policy, { now: T0 });
		assert.deepEqual(r.due, keys.slice(0, 1));
		assert.deepEqual(retiredKeys(r.doc), keys.slice(1));
		const huge = retireParts(r.doc, parts([`${PREFIX}big.vcl`], MAX_RETIRED_BYTES + 1), policy, {
			now: T0 + 1,
		});
		assert.deepEqual(huge.due.sort(), [...keys.slice(1), `${PREFIX}big.vcl`].sort());
		assert.deepEqual(retiredKeys(huge.doc), []);
	});

	it('a key outside the index is never due (a tampered manifest cannot delete what is not its own)', () => {
		const doc = {
			retired: [
				{ key: 'kb-other/segments/x.vec', at: new Date(0).toISOString(), bytes: 10 },
				{ key: `${PREFIX}y.vec`, at: new Date(0).toISOString(), bytes: 10 },
			],
		};
		const r = retireParts(doc, [], policy, { now: T0 });
		assert.deepEqual(r.due, [`${PREFIX}y.vec`]);
		assert.deepEqual(retiredKeys(r.doc), []);
		assert.deepEqual(retireParts(doc, [], policy, { now: T0, all: true }).due, [`${PREFIX}y.vec`]);
	});
});

/** A storage that runs `hook` once, before answering the first read of a segment. */
class Gated {
	hook?: () => Promise<void>;
	manifestReads = 0;
	constructor(readonly inner: LocalDiskStorage) {
		return new Proxy(this, {
			get: (t, p) => (p in t ? (t as never)[p] : (inner as never)[p]),
		});
	}
	identity() {
		return `gated ${this.inner.describe()}`;
	}
	async get(key: string, options?: never): Promise<StoredObject | null> {
		if (key.endsWith('manifest.json')) this.manifestReads++;
		if (key.endsWith('.vec') && this.hook) {
			const run = this.hook;
			this.hook = undefined;
			await run();
		}
		return (await this.inner.get(key, options as never)) as StoredObject | null;
	}
}

describe('retired parts of the base-wide vector index', () => {
	const DIMS = 8;
	const rows = randomRows(MAX_SEGMENTS + 4, DIMS, seededRandom(3));

	/** Single-row segments past MAX_SEGMENTS (a writer whose byte cap keeps them from merging). */
	async function manySegments() {
		const root = tempDir('retiring');
		const disk = new LocalDiskStorage({ root });
		const open = (storage: MemoryStorage, segmentBytes?: number) =>
			new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb'), 12, { segmentBytes, tiers: true });
		const writer = open(disk, 1);
		for (let i = 0; i < rows.length; i++)
			await writer.add(
				[chunk(i, i === 2 ? 'secret' : 's', i === 2 ? 'zanzibar' : undefined)],
				[rows[i]],
			);
		return { disk, open, compactor: open(disk) };
	}

	it('a search that read the manifest before a compaction reads the merged segments still: no start over', async () => {
		const { disk, open, compactor } = await manySegments();
		const gated = new Gated(disk) as unknown as Gated & MemoryStorage;
		let merged = false;
		gated.hook = async () => {
			merged = await compactor.compact();
		};
		clearVectorCache();
		const ranking = await streamedRanking(open(gated), rows[5], 3, {});
		assert.ok(merged, 'compacted under the search');
		assert.equal(ranking.matches[0].id, 'c5');
		assert.equal(gated.manifestReads, 1, 'one reading of the manifest');
		const doc = (await compactor.readManifest(true)).doc;
		const retired = retiredKeys(doc);
		assert.ok(retired.length >= 2, `${retired.length} retired`);
		for (const key of retired) assert.ok(await disk.get(key), `${key} kept`);
		assert.deepEqual(await compactor.sweepOrphans(0), [], 'a sweep keeps them');
	});

	it('a segment really lost: the search refuses, naming that segment (not another)', async () => {
		const { disk, compactor } = await manySegments();
		const listed = (await compactor.readManifest(true)).doc.segments.map((r) => r.key);
		const lost = listed[3];
		await disk.delete(lost);
		clearVectorCache();
		await assert.rejects(streamedRanking(compactor, rows[5], 3, {}), (error: unknown) => {
			assert.ok(error instanceof IndexDamagedError, String(error));
			assert.deepEqual(error.missing, [lost]);
			return true;
		});
	});

	it('a later swap deletes those past the grace; a Forget deletes them all at once', async () => {
		const { disk, open, compactor } = await manySegments();
		assert.ok(await compactor.compact());
		const first = retiredKeys((await compactor.readManifest(true)).doc);
		// As if the grace had passed: the retired parts' time set back.
		const old = new Date(Date.now() - 2 * RETIRE_GRACE_MS).toISOString();
		await compactor.updateManifest((cur) => ({
			...cur.doc,
			retired: cur.doc.retired!.map((r) => ({ ...r, at: old })),
		}));
		const writer = open(disk, 1);
		const more = randomRows(MAX_SEGMENTS, DIMS, seededRandom(4));
		for (let i = 0; i < more.length; i++) await writer.add([chunk(100 + i)], [more[i]]);
		assert.ok(await compactor.compact());
		for (const key of first) assert.equal(await disk.get(key), null, `${key} deleted`);
		const second = retiredKeys((await compactor.readManifest(true)).doc);
		assert.ok(second.length >= 2 && second.every((k) => !first.includes(k)));
		assert.match(await storedText(disk, 'knowledge_base/'), /zanzibar/);
		assert.ok((await compactor.forgetSession('secret')) > 0);
		assert.deepEqual(retiredKeys((await compactor.readManifest(true)).doc), []);
		for (const key of second) assert.equal(await disk.get(key), null, `${key} deleted`);
		assert.doesNotMatch(await storedText(disk, 'knowledge_base/'), /zanzibar/);
	});
});

describe('retired parts of the base-wide word index', () => {
	it('segments a merge replaced are kept a while, and go with a Forget', async () => {
		const disk = new LocalDiskStorage({ root: tempDir('retiring-words') });
		const index = new LexicalIndex(disk, 'test', 'kb/lexical/', 12, async () => [], {
			segmentChunks: 10_000,
			tiers: true,
		});
		// Eight adds of a full tail each: eight segments of one level, merged by the eighth add.
		for (let a = 0; a < 8; a++)
			await index.add(
				Array.from({ length: 70 }, (_, i) =>
					chunk(a * 70 + i, a === 0 ? 'secret' : 's', a === 0 ? 'zanzibar word' : 'plain word'),
				),
			);
		const m = await index.readManifest(true);
		const retired = retiredKeys(m.doc);
		// The eighth was merged by the add that wrote it: never listed, so not kept.
		assert.equal(retired.length, 7, `${m.doc.segments.length} segments, ${retired.length} retired`);
		for (const key of retired) assert.ok(await disk.get(key), `${key} kept`);
		assert.equal((await index.search('zanzibar', 5)).length, 5);
		assert.ok((await index.forgetSession('secret')) > 0);
		assert.deepEqual(retiredKeys((await index.readManifest(true)).doc), []);
		for (const key of retired) assert.equal(await disk.get(key), null, `${key} deleted`);
		assert.doesNotMatch(await storedText(disk, 'kb/'), /zanzibar/);
	});
});
