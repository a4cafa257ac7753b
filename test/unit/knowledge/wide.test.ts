// The base-wide index: a search of every conversation reads it (and the logs it lists as open), never
// every partition, and answers exactly what a search over every partition answers; it is kept by every
// write, forgets what Forget User and Expire After take, is rebuilt by Regenerate and built for bases
// from before it by their first use; requests per search stay put as the base grows, at most 16 run
// at once, each manifest is read once per search, and a user's lost partition is said, never empty.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, utimesSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';

import {
	clearAllCaches,
	EncryptedStorage,
	forgetUser,
	IndexMismatchError,
	lexicalPartFolder,
	LocalDiskStorage,
	MemoryBase,
	OPEN_MAX,
	parseEncryptionKey,
	setCandidateLimits,
	StorageError,
	userPart,
	vectorPartFolder,
	WIDE_SEGMENT_BYTES,
	wideLexicalPrefix,
	wideVectorPrefix,
} from '../../../src/internal';
import type { MemoryStorage, SearchOptions } from '../../../src/internal';
import { TestEmbedder } from '../../support/embeddings';
import { storageHolds, storedObjects } from '../../support/forget-plant';
import { tempDir } from '../../support/storages';
import {
	editConfig,
	manyUsers,
	MeteredStorage,
	storedConfig,
	whileBusy,
} from '../../support/wide-base';

afterEach(() => clearAllCaches());

/** The same searches, as the base answers them now. */
async function answers(base: MemoryBase, queries: string[], variants: SearchOptions[]) {
	const out = [];
	for (const q of queries)
		for (const v of variants) out.push(await base.search(q, { allUsers: true, ...v }));
	return out;
}

/** Every object of the base-wide index, as it is read through `storage`. */
const wideObjects = async (storage: MemoryStorage) => [
	...(await storedObjects(storage, wideLexicalPrefix('kb'))),
	...(await storedObjects(storage, wideVectorPrefix('kb'))),
];

/** The base as it was before the base-wide index (busy meanwhile, so no search builds it again). */
async function withoutWide(storage: MemoryStorage, root: string): Promise<void> {
	await whileBusy(storage, 'kb', async () => {
		await editConfig(storage, 'kb', (c) => {
			const rest = { ...c };
			delete rest.wide;
			return rest;
		});
		rmSync(path.join(root, wideLexicalPrefix('kb')), { recursive: true });
		rmSync(path.join(root, wideVectorPrefix('kb')), { recursive: true });
	});
}

/**
 * The same searches, the base searched the other way: every partition (its base-wide index set aside,
 * the base busy so that no search builds it again meanwhile).
 */
async function viaPartitions(
	storage: MemoryStorage,
	base: MemoryBase,
	queries: string[],
	variants: SearchOptions[],
) {
	return whileBusy(storage, 'kb', async () => {
		await editConfig(storage, 'kb', (c) => ({
			...c,
			wide: { ...(c.wide as object), state: 'building' },
		}));
		clearAllCaches();
		const parts = await answers(base, queries, variants);
		const { coverage } = await base.searchReport(queries[0], { allUsers: true });
		assert.equal(coverage?.source, 'partitions');
		return parts;
	});
}

describe('a search of every conversation reads the base-wide index', () => {
	it('answers exactly what a search over every partition answers (words, vectors, fused; ties, neighbours, names, time filters)', async () => {
		const { base, storage } = await manyUsers({ users: 14, turns: 7 });
		// A conversation of two users and one without a user; repeated words in other conversations
		// (ties); a learned fact; words captured but not yet folded (read from the logs).
		for (const [sessionId, userId, text] of [
			['shared', 'user-1', 'we agreed on the pricing plan for the kayak fleet'],
			['shared', 'user-2', 'the pricing plan for the kayak fleet is final'],
			['anon', undefined, 'someone asks about heron sighting and pricing'],
			['dup-a', 'user-3', 'the same words in two places'],
			['dup-b', 'user-4', 'the same words in two places'],
		] as const)
			await base.capture({ sessionId, userId, runId: `x-${sessionId}-${userId}`, texts: [text] });
		await base.capture({
			sessionId: 'chat-5-0',
			userId: 'user-5',
			runId: 'fact-1',
			messages: [{ role: 'fact', text: 'user 5 prefers the canoe pricing plan' }],
		});
		await base.sync({ sessionId: 'shared' });
		const queries = ['pricing plan', 'heron', 'kayak fleet pricing', 'same words', 'answer user 3'];
		const variants: SearchOptions[] = [
			{ k: 5 },
			{ k: 50, mode: 'lexical' },
			{ k: 12, mode: 'vector' },
			{ k: 8, halfLifeDays: 30, now: new Date() }, // one "now" for both: recency is weighed by it
			{ k: 5, since: new Date(Date.now() - 60_000), mode: 'lexical' },
		];
		const { matches, coverage } = await base.searchReport('pricing plan', {
			allUsers: true,
		});
		assert.ok(matches.length > 0);
		assert.equal(coverage?.source, 'base-wide index');
		const wide = await answers(base, queries, variants);
		assert.deepEqual(wide, await viaPartitions(storage, base, queries, variants));
		assert.ok(
			wide.flat().some((m) => m.context),
			'a neighbour came in beside a match',
		);
		assert.ok(wide.flat().some((m) => m.sessionId === 'anon'));
	});

	it('the same answers whether the best are scored from the notes of the statistics pass or every segment is read again', async () => {
		const { base, storage } = await manyUsers({ users: 12, turns: 6 });
		await base.capture({
			sessionId: 'dup-a',
			userId: 'user-3',
			runId: 'd-a',
			texts: ['same words here'],
		});
		await base.capture({
			sessionId: 'dup-b',
			userId: 'user-4',
			runId: 'd-b',
			texts: ['same words here'],
		});
		const queries = ['pricing plan', 'heron answer', 'user 7 asks', 'same words'];
		const variants: SearchOptions[] = [
			{ k: 3, mode: 'lexical' },
			{ k: 30, mode: 'lexical' },
			{ k: 5 },
			{ k: 8, halfLifeDays: 30, now: new Date() },
		];
		const run = async (limits: Parameters<typeof setCandidateLimits>[0]) => {
			const before = setCandidateLimits(limits);
			try {
				return await answers(base, queries, variants);
			} finally {
				setCandidateLimits(before);
			}
		};
		const noted = await run({});
		assert.deepEqual(await run({ bytes: 0 }), noted);
		assert.deepEqual(await run({ chunkBytes: 0 }), noted);
		assert.deepEqual(noted, await viaPartitions(storage, base, queries, variants));
	});

	it('lifts the same neighbours in a long conversation, past notes, reading only near the matches', async () => {
		const { base, storage } = await manyUsers({ users: 3, turns: 3 });
		const texts = Array.from({ length: 300 }, (_, i) => `filler line ${i} about the weather`);
		texts[40] = 'the zebra crossing near the old mill';
		texts[46] = 'it was painted blue last spring';
		texts[250] = 'zebra stripes on the mill again';
		texts[299] = 'the zebra went home, painted';
		const messages = texts.map((text, i) => ({
			role: i > 40 && i < 46 ? 'fact' : 'user',
			text: i > 40 && i < 46 ? `a note ${i} on the mill` : text,
		}));
		await base.capture({ sessionId: 'long', userId: 'user-1', runId: 'long-1', messages });
		await base.sync({ sessionId: 'long' });
		const queries = ['zebra', 'zebra mill', 'painted'];
		const variants: SearchOptions[] = [{ k: 3, mode: 'lexical' }, { k: 6 }];
		const wide = await answers(base, queries, variants);
		const lifted = wide
			.flat()
			.filter((m) => m.context)
			.map((m) => m.text);
		assert.ok(lifted.includes('it was painted blue last spring'), lifted.join(' | '));
		assert.deepEqual(wide, await viaPartitions(storage, base, queries, variants));
	});

	it('finds what was captured a moment ago, reading at most the 64 logs the index lists as open', async () => {
		const { base, storage } = await manyUsers({ users: 2, turns: 2, threshold: 1000 });
		for (let c = 0; c < 120; c++)
			await base.capture({
				sessionId: `new-${c}`,
				userId: `walker-${c}`,
				runId: `n-${c}`,
				texts: [`walker ${c} saw a kingfisher${c} by the weir`],
			});
		const manifest = JSON.parse(
			Buffer.from((await storage.get(`${wideLexicalPrefix('kb')}manifest.json`))!.body).toString(),
		);
		assert.ok(manifest.open.length <= OPEN_MAX, `${manifest.open.length} logs listed`);
		for (const c of [0, 63, 64, 119]) {
			storage.take();
			const { matches, coverage } = await base.searchReport(`kingfisher${c}`, {
				allUsers: true,
				k: 3,
			});
			assert.equal(matches[0]?.sessionId, `new-${c}`, `conversation ${c} found at once`);
			const logs = [...storage.take().gets.keys()].filter((k) => k.endsWith('/log.json'));
			assert.ok(logs.length <= OPEN_MAX, `${logs.length} logs read`);
			assert.ok((coverage?.recentConversations ?? 99) <= OPEN_MAX);
		}
	});

	it('reports what it covers: chunks, the newest capture, vectors and the last sync, the logs read', async () => {
		const { base } = await manyUsers({ users: 3, turns: 4, threshold: 2 });
		await base.capture({ sessionId: 'late', userId: 'u9', runId: 'l', texts: ['a late pelican'] });
		const { coverage } = await base.searchReport('pelican', { allUsers: true });
		const status = await base.status();
		assert.equal(coverage?.state, 'ready');
		assert.ok((coverage?.chunks ?? 0) >= 24, JSON.stringify(coverage));
		assert.equal(coverage?.vectors, status.index?.vectors, 'every embedded chunk is in it');
		assert.ok(coverage?.newestCapture && coverage.lastSync);
		assert.ok((coverage?.recentConversations ?? 0) >= 1, 'the late capture is read from its log');
		assert.deepEqual(status.wide, coverage);
		const one = await base.searchReport('pelican', { userId: 'u9' });
		assert.equal(one.coverage, undefined, 'a search of one user reads its partition only');
	});
});

describe('bounded reads', () => {
	it("requests per search of every conversation are the base-wide index's, never a partition's (6 → 60 users): each listed segment read once, warm searches flat, at most 16 at once", async () => {
		const listedIn = async (storage: MemoryStorage, key: string) => {
			const got = await storage.get(key);
			return got
				? (JSON.parse(Buffer.from(got.body).toString('utf8')).segments.length as number)
				: 0;
		};
		const measure = async (users: number) => {
			const { base, storage } = await manyUsers({ users, turns: 4 });
			await base.sync();
			const words = await listedIn(storage.inner, `${wideLexicalPrefix('kb')}manifest.json`);
			const vectors = await listedIn(storage.inner, `${wideVectorPrefix('kb')}manifest.json`);
			const cold: number[] = [];
			const warm: number[] = [];
			for (const q of ['pricing plan', 'heron nest', 'lantern repair']) {
				clearAllCaches();
				storage.take();
				storage.peak = 0;
				await base.search(q, { allUsers: true, k: 5 });
				const read = storage.take();
				for (const [key, n] of read.gets) {
					assert.ok(!key.includes('/parts/'), `a partition read: ${key}`);
					assert.equal(n, 1, `${key} read ${n} times`);
				}
				cold.push(read.requests);
				await base.search(q, { allUsers: true, k: 5 });
				warm.push(storage.take().requests);
				assert.ok(storage.peak <= 16, `${storage.peak} requests at once`);
			}
			return { cold: Math.max(...cold), warm: Math.max(...warm), words, vectors };
		};
		const small = await measure(6);
		const large = await measure(60);
		// The configuration, the model's metadata, the two manifests and the segments they list.
		for (const m of [small, large]) assert.ok(m.cold <= 4 + m.words + m.vectors, JSON.stringify(m));
		// Vector segments merged as they come: a few, not one per sync (4 rows each) up to 16.
		assert.ok(large.vectors <= 3, JSON.stringify(large));
		assert.ok(large.warm <= small.warm * 1.2, `warm: ${small.warm} → ${large.warm}`);
	});

	it('base-wide vector segments stay under their byte cap with large vectors, merged as they come', async () => {
		// 4,096 dimensions: 16 KiB a row, so 480 messages are about twice the cap.
		const dims = 4096;
		const { base, storage } = await manyUsers({ users: 40, turns: 6, dimensions: dims });
		await base.sync();
		const folder = wideVectorPrefix('kb');
		const manifest = JSON.parse(
			Buffer.from((await storage.inner.get(`${folder}manifest.json`))!.body).toString('utf8'),
		) as { segments: Array<{ bytes: number; count: number }> };
		const refs = manifest.segments;
		assert.equal(
			refs.reduce((n, r) => n + r.count, 0),
			480,
		);
		const row = 4 * dims + 1024;
		assert.ok(
			refs.every((r) => r.bytes <= WIDE_SEGMENT_BYTES + row),
			refs.map((r) => r.bytes).join(' '),
		);
		const matches = await base.search('user 17 asks about', { allUsers: true, k: 3 });
		assert.ok(matches.length > 0);
	});

	it('one read of each manifest per search (a user’s, and every conversation)', async () => {
		const { base, storage } = await manyUsers({ users: 5, turns: 5 });
		for (const options of [{ userId: 'user-2' }, { allUsers: true as const }])
			for (const fresh of [true, false]) {
				if (fresh) clearAllCaches();
				storage.take();
				await base.search('pricing answer', { ...options, k: 5 });
				const { gets } = storage.take();
				for (const [key, n] of gets)
					if (key.endsWith('manifest.json')) assert.equal(n, 1, `${key} read ${n} times`);
			}
	});

	it('Status, Regenerate, Forget User and an upgrade run at most 16 requests at once', async () => {
		const { base, storage } = await manyUsers({ users: 40, turns: 2 });
		for (const run of [
			() => base.status(),
			() => base.regenerate(),
			() => forgetUser(storage, { userId: 'user-3' }),
			async () => {
				await whileBusy(storage, 'kb', () =>
					editConfig(storage, 'kb', (c) => {
						const rest = { ...c };
						delete rest.wide;
						return rest;
					}),
				);
				return base.upgrade();
			},
		]) {
			storage.peak = 0;
			await run();
			assert.ok(storage.peak <= 16, `${storage.peak} requests at once`);
		}
		assert.equal((await storedConfig(storage, 'kb')).wide.state, 'ready');
	});
});

describe('kept with the partitions', () => {
	it('a user whose partition is gone gets an error naming it, a new user an empty answer', async () => {
		const { base, root } = await manyUsers({ users: 3, turns: 4, threshold: 2 });
		rmSync(path.join(root, lexicalPartFolder('kb', { part: userPart('user-1') })), {
			recursive: true,
		});
		clearAllCaches();
		await assert.rejects(
			base.search('pricing', { userId: 'user-1', mode: 'lexical' }),
			(e: unknown) =>
				e instanceof IndexMismatchError && /word index partition of user "user-1"/.test(e.message),
		);
		assert.deepEqual(await base.search('pricing', { userId: 'nobody-yet' }), []);
		rmSync(path.join(root, vectorPartFolder('kb', { part: userPart('user-2') })), {
			recursive: true,
		});
		clearAllCaches();
		await assert.rejects(
			base.search('pricing', { userId: 'user-2', mode: 'vector' }),
			/vector index partition of user "user-2"/,
		);
		await base.regenerate();
		assert.ok((await base.search('pricing', { userId: 'user-1', k: 3 })).length > 0);
	});

	for (const encrypted of [false, true])
		it(`Forget User leaves no byte of the user in the base-wide index (${encrypted ? 'encrypted' : 'plain'})`, async () => {
			const root = tempDir('wide-forget');
			const disk = new LocalDiskStorage({ root });
			const storage: MemoryStorage = encrypted
				? new EncryptedStorage(disk, {
						current: parseEncryptionKey(randomBytes(32).toString('hex')),
					})
				: disk;
			const base = new MemoryBase({
				storage,
				baseId: 'kb',
				embedder: new TestEmbedder(32),
				threshold: 2,
			});
			const secret = 'zanzibar-7731-quokka';
			for (let i = 0; i < 5; i++) {
				await base.capture({
					sessionId: `alice-${i % 2}`,
					userId: 'alice-the-user',
					runId: `a${i}`,
					texts: [`my code is ${secret} and my number ${i}`],
				});
				await base.capture({
					sessionId: `bob-${i % 2}`,
					userId: 'bob',
					runId: `b${i}`,
					texts: [`bob talks about kayaks ${i}`],
				});
			}
			// Alice speaks in one of Bob's conversations too (it goes with hers), and a log stays open.
			await base.capture({
				sessionId: 'bob-0',
				userId: 'alice-the-user',
				runId: 'a-in-b',
				texts: [`psst ${secret}`],
			});
			assert.equal(
				(await base.search(secret, { allUsers: true, k: 3 }))[0].userId,
				'alice-the-user',
			);
			await forgetUser(storage, { userId: 'alice-the-user' });
			const wide = await wideObjects(storage);
			assert.ok(
				wide.some((b) => b.includes('kayaks')),
				'the scan reads what is stored',
			);
			for (const bytes of wide) {
				assert.ok(!bytes.includes(secret), 'no byte of what she said');
				assert.ok(!bytes.includes('alice-the-user'), 'nor her ID');
			}
			assert.ok(!(await storageHolds(disk, secret)), 'nowhere in the storage');
			assert.ok(
				!(await storedObjects(storage, '')).some((b) => b.includes(secret)),
				'not even unzipped',
			);
			const left = await base.search('kayaks', { allUsers: true, k: 10 });
			assert.deepEqual([...new Set(left.map((m) => m.sessionId))], ['bob-1'], 'Bob’s own stays');
			assert.deepEqual(await base.search(secret, { allUsers: true, k: 3, mode: 'lexical' }), []);
		});

	it('Forget User sweeps what killed writers left in the base-wide indexes, once per base, with its last conversation', async () => {
		const root = tempDir('wide-forget-orphans');
		const disk = new LocalDiskStorage({ root });
		const listed: string[] = [];
		const storage = new (class extends MeteredStorage {
			list(prefix: string) {
				listed.push(prefix);
				return super.list(prefix);
			}
		})(disk);
		const base = new MemoryBase({
			storage,
			baseId: 'kb',
			embedder: new TestEmbedder(32),
			threshold: 2,
		});
		for (let i = 0; i < 6; i++)
			await base.capture({
				sessionId: `alice-${i % 3}`,
				userId: 'alice',
				runId: `a${i}`,
				texts: [`alice note ${i} about the harbour`],
			});
		await base.sync();
		const secret = 'killed-writer-secret-5521';
		const orphans = [
			`${wideLexicalPrefix('kb')}segments/0123456789abcdef01234567.lex`,
			`${wideVectorPrefix('kb')}segments/0123456789abcdef01234567.vec`,
		];
		const old = new Date(Date.now() - 10 * 60_000);
		for (const key of orphans) {
			await disk.put(key, Buffer.from(`a killed writer's ${secret}`));
			utimesSync(path.join(root, ...key.split('/')), old, old);
		}
		listed.length = 0;
		storage.paged.length = 0;
		const report = await forgetUser(storage, { userId: 'alice' });
		for (const key of orphans) assert.ok(report.deleted.includes(key), key);
		assert.ok(!(await storageHolds(disk, secret)), 'nowhere in the storage');
		// Three conversations forgotten: each base-wide index listed once (whole or by pages), not three times.
		const lists = [...listed, ...storage.paged];
		for (const prefix of [wideLexicalPrefix('kb'), wideVectorPrefix('kb')])
			assert.equal(lists.filter((p) => p === `${prefix}segments/`).length, 1, prefix);
	});

	it('Expire After reaches it: an expired conversation leaves nothing in it', async () => {
		let now = new Date('2026-01-01T00:00:00Z');
		const root = tempDir('wide-expire');
		const storage = new MeteredStorage(new LocalDiskStorage({ root }));
		const base = new MemoryBase({
			storage,
			baseId: 'kb',
			embedder: new TestEmbedder(32),
			threshold: 1,
			now: () => now,
		});
		await base.capture({
			sessionId: 'short',
			userId: 'u1',
			runId: 'r1',
			texts: ['the ephemeral walrus'],
			expireAfterDays: 1,
		});
		await base.capture({
			sessionId: 'long',
			userId: 'u2',
			runId: 'r2',
			texts: ['a lasting walrus'],
		});
		now = new Date('2026-01-03T00:00:00Z');
		assert.deepEqual(
			(await base.search('walrus', { allUsers: true })).map((m) => m.sessionId),
			['long'],
			'left out of search at once',
		);
		assert.equal((await base.expire('short')).expired, true);
		const wide = await wideObjects(storage);
		assert.ok(wide.some((b) => b.includes('lasting')));
		for (const bytes of wide) assert.ok(!bytes.includes('ephemeral'));
	});

	it('a base from before the base-wide index is read through its partitions while busy, and built by its first idle search', async () => {
		const { base, storage, root } = await manyUsers({ users: 6, turns: 3 });
		await base.sync();
		const before = await answers(base, ['pricing plan', 'heron'], [{ k: 6 }]);
		await withoutWide(storage, root);
		clearAllCaches();
		await whileBusy(storage, 'kb', async () =>
			assert.deepEqual(await answers(base, ['pricing plan', 'heron'], [{ k: 6 }]), before),
		);
		const { coverage } = await base.searchReport('pricing plan', { allUsers: true });
		assert.equal(coverage?.source, 'base-wide index', 'built by this search');
		assert.equal((await storedConfig(storage, 'kb')).wide.state, 'ready');
		assert.deepEqual(await answers(base, ['pricing plan', 'heron'], [{ k: 6 }]), before);
		const status = await base.status();
		assert.equal(status.mismatch, false, status.mismatchReason ?? undefined);
	});

	it('a build of the base-wide index cut short is read through the partitions, and finished by the next use', async () => {
		const { base, storage, root } = await manyUsers({ users: 8, turns: 3 });
		await base.sync();
		const before = await answers(base, ['pricing plan'], [{ k: 8 }]);
		await withoutWide(storage, root);
		// The build dies at its first write of a base-wide vector segment (a crash, an outage).
		const put = storage.put.bind(storage);
		let failed = false;
		storage.put = async (key, body, options) => {
			if (!failed && key.includes('/wide/index/segments/')) {
				failed = true;
				throw new StorageError(`simulated outage writing "${key}"`, key);
			}
			return put(key, body, options);
		};
		await assert.rejects(base.search('pricing plan', { allUsers: true, k: 8 }), StorageError);
		storage.put = put;
		assert.equal((await storedConfig(storage, 'kb')).wide.state, 'building', 'left half-way');
		await whileBusy(storage, 'kb', async () => {
			const { coverage } = await base.searchReport('pricing plan', { allUsers: true });
			assert.equal(coverage?.source, 'partitions');
			assert.deepEqual(await answers(base, ['pricing plan'], [{ k: 8 }]), before);
		});
		assert.deepEqual(
			await answers(base, ['pricing plan'], [{ k: 8 }]),
			before,
			'built, same answers',
		);
		assert.equal((await storedConfig(storage, 'kb')).wide.state, 'ready');
		const status = await base.status();
		assert.equal(status.mismatch, false, status.mismatchReason ?? undefined);
		assert.equal(status.wide?.vectors, status.index?.vectors, 'each vector once');
	});

	it('a base-wide segment lost: Status says so, the search refuses, Regenerate rebuilds it', async () => {
		const { base, root } = await manyUsers({ users: 30, turns: 4 });
		await base.sync();
		// A segment the manifest lists (a replaced one may still be kept a while, listed as retired).
		const manifest = JSON.parse(
			readFileSync(path.join(root, `${wideVectorPrefix('kb')}manifest.json`), 'utf8'),
		) as { segments: Array<{ key: string }> };
		rmSync(path.join(root, manifest.segments[0].key));
		clearAllCaches();
		const status = await base.status();
		assert.equal(status.mismatch, true);
		assert.match(status.mismatchReason ?? '', /base-wide vector index lost 1 of its/);
		await assert.rejects(base.search('pricing', { allUsers: true, mode: 'vector' }), /Regenerate/);
		await base.regenerate();
		assert.equal((await base.status()).mismatch, false);
		assert.ok((await base.search('pricing', { allUsers: true, mode: 'vector' })).length > 0);
	});
});
