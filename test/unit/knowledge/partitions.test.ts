// A base laid out in partitions (one per user, one per conversation without a user): what a user's or a
// conversation's search reads is that partition's, whatever else the base holds; a partition of
// another owner is refused; a base from before partitions is read as it is while it is busy, and moved
// by the first search, capture or sync that finds it idle, with captures running meanwhile, losing
// nothing (and a version without the moved marker would lose a capture: shown below).
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';

import {
	acquireLease,
	clearAllCaches,
	LexicalIndex,
	LocalDiskStorage,
	MemoryBase,
	memoryBaseConfigKey,
	PartitionOwnerError,
	sessionLeaseKey,
	StorageError,
	SyncRunningError,
	lexicalPartFolder,
	lexicalPartsPrefix,
	userPart,
	vectorManifestKey,
	vectorPartsPrefix,
} from '../../../src/internal';
import type { MemoryStorage, StoredObject } from '../../../src/internal';
import { TestEmbedder } from '../../support/embeddings';
import { InstrumentedStorage, tempDir } from '../../support/storages';
import { expanded } from '../../support/stored-segments';
import { storedConfig, whileBusy as busy } from '../../support/wide-base';

const SINGLE_LEXICAL = 'memory_base/kb/lexical/manifest.json';

/** Counts reads and the bytes they returned; `holdPut` holds the first put of one key until released. */
class CountingStorage extends InstrumentedStorage {
	bytes = 0;
	/** The same, opened (gzip, segments in blocks): the same for the same chunks, whatever their IDs. */
	opened = 0;
	keys: string[] = [];
	held = false;
	private hold?: { key: string; release: Promise<void> };

	/** `process`: another process's view of the same storage (its own caches and write queues). */
	constructor(
		inner: MemoryStorage,
		private readonly process?: string,
	) {
		super(inner);
	}

	identity(): string {
		return this.process ?? super.describe();
	}

	holdPut(key: string): () => void {
		let release!: () => void;
		this.hold = { key, release: new Promise<void>((r) => (release = r)) };
		return release;
	}

	async get(key: string, options?: object): Promise<StoredObject | null> {
		const got = await super.get(key, options as never);
		this.keys.push(key);
		if (got && 'body' in got) {
			this.bytes += got.body.byteLength;
			this.opened += expanded(got.body).byteLength;
		}
		return got as StoredObject | null;
	}

	/** The next put of a key matching it fails (a crash of the writer at that point). */
	failPutOnce?: RegExp;

	async put(key: string, body: Uint8Array, options?: { ifVersion?: string | null }) {
		if (this.failPutOnce?.test(key)) {
			this.failPutOnce = undefined;
			throw new StorageError(`simulated outage writing "${key}"`, key);
		}
		const hold = this.hold;
		if (hold && key === hold.key) {
			this.hold = undefined;
			this.held = true;
			await hold.release;
		}
		return super.put(key, body, options);
	}
}

function setup(extra: { threshold?: number } = {}) {
	const root = tempDir('partitions');
	const storage = new CountingStorage(new LocalDiskStorage({ root }));
	const embedder = new TestEmbedder(32);
	const base = new MemoryBase({ storage, baseId: 'kb', embedder, threshold: 1_000_000, ...extra });
	return { root, storage, base, embedder };
}

let run = 0;
const say = (base: MemoryBase, sessionId: string, text: string, userId?: string) =>
	base.capture({ sessionId, userId, runId: `r${++run}`, messages: [{ text, role: 'user' }] });

const texts = (hits: Array<{ text: string }>) => hits.map((h) => h.text).sort();

/** A base as versions before partitions made it: a configuration without a layout, one word index. */
async function legacyBase(storage: MemoryStorage) {
	const now = new Date().toISOString();
	const config = {
		base_id: 'kb',
		kb_id: 'kb',
		threshold: 1_000_000,
		auto_capture: true,
		created_at: now,
		updated_at: now,
		lexical_since: now,
	};
	await storage.put(memoryBaseConfigKey('kb'), Buffer.from(JSON.stringify(config)));
	await new LexicalIndex(storage, 'kb', 'memory_base/kb/lexical/').ensure();
}

const whileBusy = <T>(storage: MemoryStorage, fn: () => Promise<T>) => busy(storage, 'kb', fn);
const configOf = (storage: MemoryStorage) => storedConfig(storage, 'kb');

afterEach(() => clearAllCaches());

describe('partitions: a search reads its own', () => {
	it("a user's search reads the same objects and bytes among 2 users or 40", async () => {
		const measure = async (users: number) => {
			const { base, storage } = setup();
			for (let u = 0; u < users; u++)
				for (let i = 0; i < 6; i++)
					// Run IDs of their own (they are stored with each chunk), the same in both bases.
					await base.capture({
						sessionId: `c${u}`,
						userId: `u${u}`,
						runId: `u${u}-${i}`,
						messages: [{ text: `user ${u} note ${i} about kayaks`, role: 'user' }],
					});
			await base.sync();
			clearAllCaches();
			const [reads, bytes] = [storage.calls.get, storage.opened];
			const hits = await base.search('kayaks note', { userId: 'u0', k: 10 });
			assert.equal(hits.length, 6);
			assert.ok(hits.every((h) => h.text.startsWith('user 0 ')));
			return {
				reads: storage.calls.get - reads,
				// Compressed sizes differ by a byte or two with the random message IDs: opened, they do not.
				bytes: storage.opened - bytes,
				lists: storage.calls.list,
			};
		};
		const small = await measure(2);
		const large = await measure(40);
		assert.equal(large.reads, small.reads, 'objects read');
		assert.equal(large.bytes, small.bytes, 'bytes read');
	});

	it("a conversation's search holds every user of it and nothing of their other conversations", async () => {
		const { base } = setup();
		await say(base, 'shared', 'alice brings the red lantern', 'alice');
		await say(base, 'shared', 'bob brings the blue lantern', 'bob');
		await say(base, 'shared', 'someone anonymous brings a lantern too');
		await say(base, 'alice-own', 'alice keeps a green lantern at home', 'alice');
		await base.sync();
		const inShared = await base.search('lantern', { sessionId: 'shared', k: 10 });
		assert.deepEqual(texts(inShared), [
			'alice brings the red lantern',
			'bob brings the blue lantern',
			'someone anonymous brings a lantern too',
		]);
		const alice = await base.search('lantern', { userId: 'alice', k: 10 });
		assert.deepEqual(texts(alice), [
			'alice brings the red lantern',
			'alice keeps a green lantern at home',
		]);
		const everyone = await base.search('lantern', { allUsers: true, k: 10 });
		assert.equal(everyone.length, 4);
	});

	it("a partition holding another owner's manifest is refused, never read as the user's", async () => {
		const { base, root } = setup();
		await say(base, 'a', 'alice secret pelican', 'alice');
		await say(base, 'b', 'bob likes herons', 'bob');
		const from = path.join(root, lexicalPartFolder('kb', { part: userPart('alice') }));
		const to = path.join(root, lexicalPartFolder('kb', { part: userPart('bob') }));
		rmSync(to, { recursive: true });
		mkdirSync(to, { recursive: true });
		cpSync(from, to, { recursive: true });
		clearAllCaches();
		await assert.rejects(
			base.search('pelican', { userId: 'bob', mode: 'lexical' }),
			PartitionOwnerError,
		);
		assert.equal(
			(await base.search('pelican', { userId: 'alice', mode: 'lexical' }))[0].text,
			'alice secret pelican',
		);
	});
});

describe('a base from before partitions', () => {
	it('is read and written as it is while busy; the first search that finds it idle moves it, nothing lost or doubled', async () => {
		const { base, root, storage } = setup();
		await legacyBase(storage);
		await whileBusy(storage, async () => {
			await say(base, 'a1', 'alice owns a kayak', 'alice');
			await say(base, 'b1', 'bob owns a canoe', 'bob');
			await say(base, 'n1', 'nobody owns the raft');
			assert.ok(existsSync(path.join(root, SINGLE_LEXICAL)));
			assert.ok(!existsSync(path.join(root, lexicalPartsPrefix('kb'))), 'no partition yet');
			assert.deepEqual(texts(await base.search('owns', { userId: 'alice', mode: 'lexical' })), [
				'alice owns a kayak',
			]);
			assert.equal((await configOf(storage)).layout, undefined, 'still one index');
		});
		// Idle now: this search moves it first, then answers from the partitions.
		assert.deepEqual(texts(await base.search('owns', { userId: 'alice', mode: 'lexical' })), [
			'alice owns a kayak',
		]);
		const config = await configOf(storage);
		assert.deepEqual([config.layout, config.wide?.state], ['partitioned', 'ready']);
		assert.ok(existsSync(path.join(root, lexicalPartsPrefix('kb'))));
		const single = JSON.parse(Buffer.from((await storage.get(SINGLE_LEXICAL))!.body).toString());
		assert.ok(single.moved_at, 'the old index is marked moved');
		assert.deepEqual([single.segments.length, single.tail.length], [0, 0], 'and emptied');
		await base.sync();
		assert.ok(existsSync(path.join(root, vectorPartsPrefix('kb'))));
		const vectors = await storage.get(vectorManifestKey('kb'));
		const vectorSegments = vectors ? JSON.parse(Buffer.from(vectors.body).toString()).segments : [];
		assert.deepEqual(vectorSegments, [], 'no vectors in the old index');
		assert.deepEqual(texts(await base.search('owns', { userId: 'alice', k: 10 })), [
			'alice owns a kayak',
		]);
		assert.deepEqual(texts(await base.search('owns', { allUsers: true, k: 10 })), [
			'alice owns a kayak',
			'bob owns a canoe',
			'nobody owns the raft',
		]);
		const status = await base.status();
		assert.equal(status.mismatch, false, status.mismatchReason ?? undefined);
		assert.equal(status.index?.vectors, 3);
		assert.equal(status.wide?.vectors, 3);
	});

	it('a base not yet moved is empty until a conversation is captured (its first page of them read)', async () => {
		const { base, storage } = setup();
		await legacyBase(storage);
		assert.equal(await base.isEmpty(), true);
		await whileBusy(storage, () => say(base, 'c1', 'user1 keeps a heron', 'user1'));
		assert.equal((await configOf(storage)).layout, undefined, 'not moved: a sync was running');
		assert.equal(await base.isEmpty(), false);
	});

	it('the first capture that finds it idle moves it too; searches of every conversation then read the base-wide index', async () => {
		const { base, storage } = setup();
		await legacyBase(storage);
		await whileBusy(storage, async () => {
			for (let u = 0; u < 4; u++) await say(base, `c${u}`, `user${u} keeps a heron`, `user${u}`);
		});
		assert.equal((await configOf(storage)).layout, undefined);
		await say(base, 'c9', 'user9 keeps a heron too', 'user9');
		assert.deepEqual((await configOf(storage)).wide?.state, 'ready');
		const { matches, coverage } = await base.searchReport('heron', {
			allUsers: true,
			k: 10,
			mode: 'lexical',
		});
		assert.equal(matches.length, 5);
		assert.equal(coverage?.source, 'base-wide index');
		assert.equal(coverage?.chunks, 5, 'the move folded every open log into it');
	});

	/**
	 * A capture that read the old layout, held just before it lists its new conversation in the old word
	 * index, and let go once the move is over: it must end up where searches read.
	 */
	async function lateCapture(breakMarker: boolean) {
		const { base, storage, root } = setup();
		await legacyBase(storage);
		await whileBusy(storage, async () => {
			for (let i = 0; i < 5; i++) await say(base, `a${i}`, `alice note ${i} on kayaks`, 'alice');
			await say(base, 'b0', 'bob note on kayaks', 'bob');
		});
		// The late capture runs in another process (n8n worker) on the same storage.
		const elsewhere = new CountingStorage(new LocalDiskStorage({ root }), 'worker 2');
		const worker = new MemoryBase({ storage: elsewhere, baseId: 'kb', threshold: 1_000_000 });
		const release = elsewhere.holdPut(SINGLE_LEXICAL);
		// Held before it writes (and before it would look for an upgrade itself).
		const late = say(worker, 'late', 'carol zebra kayaks', 'carol');
		while (!elsewhere.held) await new Promise((r) => setTimeout(r, 5));
		const original = LexicalIndex.prototype.markMoved;
		if (breakMarker)
			LexicalIndex.prototype.markMoved = async function (this: LexicalIndex) {
				return this.readManifest(); // a version that forgot to mark the old index moved
			};
		try {
			await base.sync(); // moves the base while the capture waits
		} finally {
			LexicalIndex.prototype.markMoved = original;
		}
		release();
		await late;
		clearAllCaches();
		return { base };
	}

	it('a capture racing the move lands in the partitions', async () => {
		const { base } = await lateCapture(false);
		assert.deepEqual(texts(await base.search('zebra', { userId: 'carol', mode: 'lexical' })), [
			'carol zebra kayaks',
		]);
		await base.sync();
		assert.deepEqual(texts(await base.search('zebra kayaks', { userId: 'carol', k: 5 })), [
			'carol zebra kayaks',
		]);
		assert.equal((await base.search('kayaks', { userId: 'alice', k: 20 })).length, 5);
		assert.equal((await base.status()).mismatch, false);
	});

	it('without the moved marker the same race loses the capture (what the marker is for)', async () => {
		const { base } = await lateCapture(true);
		assert.deepEqual(await base.search('zebra', { userId: 'carol', mode: 'lexical' }), []);
	});

	it('a conversation syncing keeps it as it is; this process then leaves it alone a while (no lock round per capture)', async () => {
		const { base, storage } = setup();
		await legacyBase(storage);
		await whileBusy(storage, async () => say(base, 'c1', 'user1 keeps a heron', 'user1'));
		// A sync of c1 in another process holds its conversation's lock.
		const lease = await acquireLease(
			storage,
			sessionLeaseKey('kb', 'c1'),
			{ ttlMs: 60_000, operation: 'sync' },
			() => new Error('held'),
		);
		await say(base, 'c2', 'user2 keeps a heron', 'user2');
		assert.equal((await configOf(storage)).layout, undefined, 'busy: used as it is');
		await lease.release();
		const puts = storage.calls.put;
		await say(base, 'c3', 'user3 keeps a heron', 'user3');
		assert.equal((await configOf(storage)).layout, undefined, 'not tried again at once');
		assert.ok(storage.calls.put - puts <= 3, 'this capture took no lock round');
		clearAllCaches(); // as later, or another process
		await say(base, 'c4', 'user4 keeps a heron', 'user4');
		assert.equal((await configOf(storage)).layout, 'partitioned');
		assert.equal(
			(await base.search('heron', { allUsers: true, k: 10, mode: 'lexical' })).length,
			4,
		);
	});

	it('many captures of many users while the first sync moves it: every message findable once', async () => {
		const { base, storage } = setup();
		await legacyBase(storage);
		const said: Array<[string, string]> = [];
		const speak = async (u: number, i: number) => {
			const text = `user${u} fact${i} about gliders`;
			said.push([`user${u}`, text]);
			await say(base, `c${u}-${i % 3}`, text, `user${u}`);
		};
		await whileBusy(storage, async () => {
			for (let i = 0; i < 4; i++) for (let u = 0; u < 6; u++) await speak(u, i);
		});
		// Whichever finds the base idle first moves it (a capture, or the sync); the sync waits its turn.
		const syncOnce = async (): Promise<void> => {
			try {
				await base.sync();
			} catch (error) {
				if (!(error instanceof SyncRunningError)) throw error;
				await new Promise((r) => setTimeout(r, 10));
				return syncOnce();
			}
		};
		await Promise.all([
			syncOnce(),
			...Array.from({ length: 6 }, async (_, u) => {
				for (let i = 4; i < 10; i++) await speak(u, i);
			}),
		]);
		await syncOnce();
		clearAllCaches();
		for (let u = 0; u < 6; u++) {
			const mine = said
				.filter(([who]) => who === `user${u}`)
				.map(([, t]) => t)
				.sort();
			assert.deepEqual(
				texts(await base.search('gliders', { userId: `user${u}`, k: 50, mode: 'lexical' })),
				mine,
			);
			assert.deepEqual(
				texts(await base.search('gliders', { userId: `user${u}`, k: 50, mode: 'vector' })),
				mine,
			);
		}
		assert.deepEqual(
			texts(await base.search('gliders', { allUsers: true, k: 100, mode: 'lexical' })),
			said.map(([, t]) => t).sort(),
		);
		const status = await base.status();
		assert.equal(status.mismatch, false, status.mismatchReason ?? undefined);
		assert.equal(status.index?.vectors, said.length);
		assert.equal(status.wide?.vectors, said.length);
	});

	it('a move cut short is read half-way, written to, and finished by the next sync or Regenerate', async () => {
		const { base, storage } = setup();
		await legacyBase(storage);
		await whileBusy(storage, async () => {
			for (let u = 0; u < 6; u++) await say(base, `c${u}`, `user${u} keeps bees`, `user${u}`);
		});
		// The move dies at its first write into a partition (a crash, an outage).
		storage.failPutOnce = /^memory_base\/kb\/parts\//;
		await assert.rejects(base.sync(), StorageError);
		const config = await configOf(storage);
		assert.deepEqual([config.layout, config.wide?.state], ['moving', 'building'], 'left half-way');
		clearAllCaches();
		await whileBusy(storage, async () => {
			for (let u = 0; u < 6; u++)
				assert.deepEqual(
					texts(await base.search('bees', { userId: `user${u}`, mode: 'lexical' })),
					[`user${u} keeps bees`],
				);
			assert.equal((await base.search('bees', { allUsers: true, k: 10 })).length, 6);
			await say(base, 'c6', 'user6 keeps bees', 'user6');
			assert.equal((await configOf(storage)).layout, 'moving', 'still half-way');
		});
		await base.sync(); // the next sync (or search, or capture) finishes the move
		const after = await configOf(storage);
		assert.deepEqual([after.layout, after.wide?.state], ['partitioned', 'ready']);
		assert.equal((await base.search('bees', { allUsers: true, k: 10 })).length, 7);
		await base.regenerate(); // and Regenerate rebuilds every partition from the logs
		clearAllCaches();
		for (let u = 0; u < 7; u++)
			assert.deepEqual(texts(await base.search('bees', { userId: `user${u}`, k: 5 })), [
				`user${u} keeps bees`,
			]);
		const status = await base.status();
		assert.equal(status.mismatch, false, status.mismatchReason ?? undefined);
		assert.equal(status.index?.vectors, 7);
	});
});
