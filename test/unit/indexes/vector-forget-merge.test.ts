// Forgets and searches while syncs merge the newest segments, on one vector index from two processes:
// a sync merges the newest segments as it comes (tailRun) and deletes what it merged (at once in a
// partition), a Forget rewrites the segments holding its conversation, a search reads what the
// manifest listed. Syncs going on all the while must not make a Forget start over until it gives up
// (a merge leaves alone the segments a running Forget rewrites), nor a search call the index damaged.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	clearVectorCache,
	EmbeddedIndex,
	FORGET_MARK_MS,
	forgetting,
	IndexDamagedError,
	LocalDiskStorage,
	vectorIndexPrefix,
	withForgetMark,
} from '../../../src/internal';
import type { GetOptions, MemoryStorage, PutOptions } from '../../../src/internal';
import { randomRows, seededRandom } from '../../support/embeddings';
import { tempDir } from '../../support/storages';
import { vectorChunk } from '../../support/vector-segments';

const DIMS = 16;

const chunk = vectorChunk;

/** An index on `root`, and a process syncing 4 rows at a time into it (each sync merges as it comes). */
function syncing(root: string, seed: number, segmentBytes?: number) {
	const open = (storage: MemoryStorage) =>
		new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb'), 12, { segmentBytes });
	const syncer = open(new LocalDiskStorage({ root }));
	const rows = randomRows(2000, DIMS, seededRandom(seed));
	const synced = { rows: 0 };
	const sync = (session: string) => {
		const from = synced.rows;
		synced.rows += 4;
		return syncer.add(
			rows.slice(from, from + 4).map((_, i) => chunk(from + i, session)),
			rows.slice(from, from + 4),
		);
	};
	return { open, rows, sync, synced };
}

/** Runs `between` before every read of a segment this process makes: another process syncing then. */
class Interleaved extends LocalDiskStorage {
	between?: () => Promise<void>;

	override async get(key: string, options?: GetOptions): Promise<never> {
		const run = this.between;
		if (run && key.endsWith('.vec')) {
			this.between = undefined; // not re-entered by what it runs
			try {
				await run();
			} finally {
				this.between = run;
			}
		}
		return (await super.get(key, options as GetOptions)) as never;
	}
}

/** Refuses every write of a segment (a full disk): a Forget cannot write its rewrites. */
class FailingWrites extends LocalDiskStorage {
	override async put(key: string, body: Uint8Array, options?: PutOptions) {
		if (key.endsWith('.vec')) throw new Error('disk full');
		return super.put(key, body, options);
	}
}

describe('forgets and searches while syncs merge the newest segments', () => {
	it('finishes, though a sync merging the newest segments comes before each segment it reads', async () => {
		const root = tempDir('vector-forget-merge');
		const { open, sync, synced } = syncing(root, 8, 4 * 2 ** 20);
		for (let s = 0; s < 6; s++) await sync(`other-${s}`);
		await sync('forgotten');
		await sync('other-6');
		clearVectorCache(); // the Forget's process reads the segments from storage
		const forgetting = new Interleaved({ root });
		let syncs = 0;
		forgetting.between = async () => {
			syncs++;
			await sync(`late-${syncs}`);
			// Its segments are the other process's: read from storage on every attempt.
			clearVectorCache();
		};
		const removed = await open(forgetting).forgetSession('forgotten');
		assert.equal(removed, 4);
		assert.ok(syncs >= 1, 'a sync ran while the Forget read');
		clearVectorCache();
		const stats = await open(new LocalDiskStorage({ root })).stats();
		assert.equal(stats.vectors, synced.rows - 4);
		assert.equal(stats.bySession.forgotten, undefined);
	});

	it('a Forget takes its mark off when it is done, and when it fails; a mark left by one that died holds merges only until its time', async () => {
		const root = tempDir('vector-forget-merge');
		const index = new EmbeddedIndex(new LocalDiskStorage({ root }), 'kb', vectorIndexPrefix('kb'));
		const rows = randomRows(40, DIMS, seededRandom(9));
		const add = (from: number, session: string) =>
			index.add(
				rows.slice(from, from + 4).map((_, i) => chunk(from + i, session)),
				rows.slice(from, from + 4),
			);
		await add(0, 'a');
		await add(4, 'b');
		assert.equal(await index.forgetSession('a'), 4);
		let doc = (await index.readManifest(true)).doc;
		assert.equal(doc.forgetting, undefined, 'no mark once done');
		// A Forget that died: its mark stays until its time, and merges leave its segments alone.
		await index.updateManifest((cur) => withForgetMark(cur.doc, 'b', true));
		await add(8, 'c');
		doc = (await index.readManifest(true)).doc;
		assert.deepEqual([...forgetting(doc)], ['b']);
		assert.equal(doc.segments.length, 2, 'the segment of "b" was not merged');
		// Past its time the mark holds nothing: the next add merges, and drops the stale mark with the
		// next Forget.
		const later = Date.now() + FORGET_MARK_MS + 1000;
		assert.deepEqual([...forgetting(doc, later)], []);
		await index.updateManifest((cur) => ({
			...cur.doc,
			forgetting: [{ session: 'b', until: new Date(Date.now() - 1000).toISOString() }],
		}));
		await add(12, 'd');
		doc = (await index.readManifest(true)).doc;
		assert.equal(doc.segments.length, 1, 'merged once the mark was stale');
		// A Forget that fails half-way takes its mark off too.
		const failing = new EmbeddedIndex(new FailingWrites({ root }), 'kb', vectorIndexPrefix('kb'));
		clearVectorCache();
		await assert.rejects(failing.forgetSession('c'), /disk full/);
		doc = (await index.readManifest(true)).doc;
		assert.equal(doc.forgetting, undefined, 'no mark after a failed Forget');
		assert.equal((await index.stats()).bySession.c, 4, 'nothing of it removed');
	});

	it('a segment really lost is still an error naming it, and leaves no mark', async () => {
		const root = tempDir('vector-forget-merge');
		const disk = new LocalDiskStorage({ root });
		const index = new EmbeddedIndex(disk, 'kb', vectorIndexPrefix('kb'), 12, { segmentBytes: 1 });
		const rows = randomRows(8, DIMS, seededRandom(10));
		await index.add(
			rows.map((_, i) => chunk(i, 'x')),
			rows,
		);
		const [lost] = (await index.readManifest(true)).doc.segments.map((r) => r.key);
		await disk.delete(lost);
		clearVectorCache();
		await assert.rejects(index.forgetSession('x'), (error: unknown) => {
			assert.ok(error instanceof IndexDamagedError, String(error));
			assert.deepEqual(error.missing, [lost]);
			return true;
		});
		assert.equal((await index.readManifest(true)).doc.forgetting, undefined);
	});

	it('a segment another Forget replaced while this one read it: read again on the new manifest, both conversations gone', async () => {
		const root = tempDir('vector-forget-merge');
		const open = (storage: MemoryStorage) =>
			new EmbeddedIndex(storage, 'kb', vectorIndexPrefix('kb'));
		const writer = open(new LocalDiskStorage({ root }));
		const rows = randomRows(12, DIMS, seededRandom(11));
		// One segment holding both conversations and a third.
		await writer.add(
			rows.map((_, i) => chunk(i, ['x', 'y', 'z'][i % 3])),
			rows,
		);
		clearVectorCache();
		const interleaved = new Interleaved({ root });
		let other = -1;
		interleaved.between = async () => {
			if (other >= 0) return; // once
			other = await open(new LocalDiskStorage({ root })).forgetSession('y');
			clearVectorCache();
		};
		assert.equal(await open(interleaved).forgetSession('x'), 4);
		assert.equal(other, 4, 'the other Forget ran in between');
		const stats = await open(new LocalDiskStorage({ root })).stats();
		assert.deepEqual(stats.bySession, { z: 4 });
		assert.equal((await writer.readManifest(true)).doc.forgetting, undefined);
	});

	it('a search of a partition while syncs merge its newest segments before each segment it reads: answered, not called damaged', async () => {
		const root = tempDir('vector-forget-merge');
		const { open, rows, sync: syncOf } = syncing(root, 12);
		const sync = () => syncOf('user-chat');
		for (let s = 0; s < 5; s++) await sync();
		clearVectorCache();
		const reader = new Interleaved({ root });
		let syncs = 0;
		reader.between = async () => {
			if (syncs >= 5) return; // five syncs, each merging what the search was about to read
			syncs++;
			await sync();
			clearVectorCache();
		};
		const hits = await open(reader).search(rows[6], 1);
		assert.equal(hits[0].id, 'c6');
		assert.ok(syncs >= 2, `${syncs} syncs in between`);
	});
});
