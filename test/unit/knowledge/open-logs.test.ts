// Flat capture and the lexical index: a capture writes its conversation's log and nothing else once
// the log is open; search reads the newest messages from the open logs the manifest lists (from any
// process, at once); folds put them into the manifest, close the logs and unlist them, and neither a
// failed fold, a Regenerate nor a Forget loses or leaves anything.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	captureLogKey,
	clearAllCaches,
	CorruptDocumentError,
	FOLD_BATCH,
	lexicalPartFolder,
	LocalDiskStorage,
	MemoryBase,
	OPEN_MAX,
	SEAL_AT,
	userPart,
	wideLexicalPrefix,
} from '../../../src/internal';
import type { LexicalManifest, SessionLog } from '../../../src/internal';
import { sleep } from '../../../src/common/sleep';
import { TestEmbedder } from '../../support/embeddings';
import { InstrumentedStorage, tempDir } from '../../support/storages';
import { expanded } from '../../support/stored-segments';

/** The word index of user "u" (every test's default user): its partition's manifest. */
const manifestOf = (user: string) =>
	`${lexicalPartFolder('kb', { part: userPart(user) })}manifest.json`;
const MANIFEST = manifestOf('u');

function setup() {
	const root = tempDir('open-logs');
	const storage = new InstrumentedStorage(new LocalDiskStorage({ root }));
	const base = new MemoryBase({ storage, baseId: 'kb', threshold: 1_000_000 });
	return { root, storage, base };
}

async function stored<T>(storage: InstrumentedStorage, key: string): Promise<T> {
	const got = await storage.inner.get(key);
	assert.ok(got, key);
	return JSON.parse(Buffer.from(got.body).toString()) as T;
}

const openOf = async (storage: InstrumentedStorage) =>
	((await stored<LexicalManifest>(storage, MANIFEST)).open ?? []).map((o) => o.session_id).sort();

let run = 0;
const say = (base: MemoryBase, sessionId: string, text: string, userId = 'u') =>
	base.capture({ sessionId, userId, runId: `run-${++run}`, texts: [text] });

/** The top hit's text of a lexical search, as a process that never saw the base finds it. */
async function topFresh(
	base: MemoryBase,
	query: string,
	scope: object,
): Promise<string | undefined> {
	clearAllCaches();
	return (await base.search(query, { k: 1, mode: 'lexical', ...scope }))[0]?.text;
}

function filesUnder(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const full = path.join(dir, name);
		return statSync(full).isDirectory() ? filesUnder(full) : [full];
	});
}

describe('flat capture: the lexical index reads open logs', () => {
	it('once its conversation is open, a capture writes its log and nothing else; another process finds it at once, in its scope only', async () => {
		const { base, storage } = setup();
		await say(base, 'c1', 'first words about a harbour');
		assert.deepEqual(await openOf(storage), ['c1'], 'listed before it was opened');
		for (let i = 0; i < 5; i++) {
			const before = storage.calls.put;
			await say(base, 'c1', `my locker code is zebra${i}`);
			assert.equal(storage.calls.put - before, 1, 'one write: the log');
			for (const scope of [{ userId: 'u' }, { sessionId: 'c1' }, { allUsers: true }])
				assert.equal(
					await topFresh(base, `zebra${i}`, scope),
					`my locker code is zebra${i}`,
					JSON.stringify(scope),
				);
			assert.equal(await topFresh(base, `zebra${i}`, { userId: 'someone-else' }), undefined);
		}
		// Another user in the same conversation is listed in that user's partition (its searches read
		// the log too); the first user's partition lists it for that user only.
		await say(base, 'c1', 'the parcel went to Ghent', 'v');
		assert.equal(await topFresh(base, 'Ghent', { userId: 'v' }), 'the parcel went to Ghent');
		const manifest = await stored<LexicalManifest>(storage, MANIFEST);
		assert.deepEqual(manifest.open?.[0].users, ['u']);
		assert.deepEqual(manifest.tail, [], 'nothing folded yet');
		const other = await stored<LexicalManifest>(storage, manifestOf('v'));
		assert.deepEqual(
			other.open?.map((o) => [o.session_id, o.users]),
			[['c1', ['v']]],
		);
	});

	it('a full log seals its inline messages into the manifest first; every message stays findable', async () => {
		const { base, storage } = setup();
		const n = 3 * SEAL_AT + 5;
		for (let i = 0; i < n; i++) await say(base, 's', `fact number${i} about topic${i}`);
		const log = await stored<SessionLog>(storage, captureLogKey('kb', 's'));
		assert.equal(log.lexical?.open, true);
		assert.equal(log.lexical?.through, log.sealed[log.sealed.length - 1].last);
		assert.ok(log.messages.every((m) => m.seq > (log.lexical?.through ?? 0)));
		const manifest = await stored<LexicalManifest>(storage, MANIFEST);
		const held = manifest.tail.length + manifest.segments.reduce((k, r) => k + r.count, 0);
		assert.equal(held, log.lexical?.through, 'the sealed ones, once each');
		for (const i of [0, SEAL_AT, n - 1])
			assert.equal(
				await topFresh(base, `number${i}`, { userId: 'u' }),
				`fact number${i} about topic${i}`,
			);
		assert.equal((await base.status()).lexical?.chunks, n);
	});

	for (const scope of [{ sessionId: 's' }, { userId: 'u' }])
		it(`a seal between any two of a search's reads never hides a message (${Object.keys(scope)[0]} scope)`, async () => {
			// After the k-th read of the log or the manifest, for every k the search makes, another
			// writer's capture seals the log: its inline messages go into the manifest, then out of the log.
			let seals = 0;
			for (let k = 1; ; k++) {
				const { base, storage } = setup();
				for (let i = 0; i < SEAL_AT; i++) await say(base, 's', `fact number${i} about topic${i}`);
				const other = new MemoryBase({ storage: storage.inner, baseId: 'kb', threshold: 1e6 });
				clearAllCaches();
				const get = storage.get.bind(storage) as typeof storage.get;
				let reads = 0;
				storage.get = (async (key: string, options?: object) => {
					const got = await get(key, options ?? {});
					if ((key === MANIFEST || key === captureLogKey('kb', 's')) && ++reads === k)
						await say(other, 's', 'the capture that seals');
					return got;
				}) as typeof storage.get;
				const hits = await base.search('number0', { k: 1, mode: 'lexical', ...scope });
				assert.equal(hits[0]?.text, 'fact number0 about topic0', `seal after read ${k}`);
				if (reads < k) break;
				seals++;
				const log = await stored<SessionLog>(storage, captureLogKey('kb', 's'));
				assert.equal(log.lexical?.through, SEAL_AT, 'the seal happened');
			}
			assert.ok(seals >= 2, `${seals} interleavings`);
		});

	it("a user's search reads the segments its manifest lists while it reads the open logs, not after them", async () => {
		const { storage } = setup();
		const base = new MemoryBase({
			storage,
			baseId: 'kb',
			threshold: 1_000_000,
			embedder: new TestEmbedder(8),
		});
		// More than the manifest's tail holds: the rest goes into segments.
		for (let i = 0; i < 80; i++) await say(base, 'old', `fact number${i} about topic${i}`);
		await base.sync();
		await say(base, 's', 'the newest fact about topic9');
		assert.deepEqual(await openOf(storage), ['s']);
		const get = storage.get.bind(storage) as typeof storage.get;
		for (const [query, expected] of [
			['number3', 'fact number3 about topic3'],
			['newest', 'the newest fact about topic9'],
		]) {
			clearAllCaches();
			// The open log is answered once a segment was asked for (or after a second): read one after
			// the other, the segment would only be asked for after the log's answer.
			let segmentAsked: () => void = () => {};
			const asked = new Promise<boolean>((r) => (segmentAsked = () => r(true)));
			let beside = false;
			storage.get = (async (key: string, options?: object) => {
				if (key.endsWith('.lex')) segmentAsked();
				if (key === captureLogKey('kb', 's'))
					beside = await Promise.race([asked, sleep(1000).then(() => false)]);
				return get(key, options ?? {});
			}) as typeof storage.get;
			try {
				const hits = await base.search(query, { k: 1, mode: 'lexical', userId: 'u' });
				assert.equal(hits[0]?.text, expected);
			} finally {
				storage.get = get;
			}
			assert.ok(beside, 'the segments were read only after the open log');
		}
	});

	it('past OPEN_MAX open logs, the capture that lists one more folds the longest listed: closed, unlisted, still findable, and open again at their next capture', async () => {
		const { base, storage } = setup();
		const n = OPEN_MAX + 1;
		for (let i = 0; i < n; i++) await say(base, `c${i}`, `conversation ${i} mentions token${i}`);
		const open = await openOf(storage);
		assert.equal(open.length, n - FOLD_BATCH);
		assert.ok(!open.includes('c0') && open.includes(`c${n - 1}`));
		const folded = await stored<SessionLog>(storage, captureLogKey('kb', 'c0'));
		assert.deepEqual([folded.lexical?.open, folded.lexical?.through], [false, 1]);
		const manifest = await stored<LexicalManifest>(storage, MANIFEST);
		assert.equal(manifest.tail.length, FOLD_BATCH);
		for (const i of [0, FOLD_BATCH - 1, FOLD_BATCH, n - 1])
			assert.equal(
				await topFresh(base, `token${i}`, { allUsers: true }),
				`conversation ${i} mentions token${i}`,
			);
		const status = await base.status();
		assert.deepEqual([status.lexical?.chunks, status.mismatch], [n, false]);
		await say(base, 'c0', 'back again with token-again');
		assert.ok((await openOf(storage)).includes('c0'));
		assert.equal(
			await topFresh(base, 'token-again', { userId: 'u' }),
			'back again with token-again',
		);
	});

	it('a fold that fails between its writes loses nothing; the next one finishes it', async () => {
		const { base, storage } = setup();
		for (let i = 0; i < OPEN_MAX; i++)
			await say(base, `c${i}`, `conversation ${i} mentions token${i}`);
		// The fold's manifest update goes through; closing the first log it folds fails.
		const put = storage.put.bind(storage);
		let failed = 0;
		storage.put = async (key, body, options) => {
			if (key === captureLogKey('kb', 'c0') && failed++ === 0)
				throw new Error('simulated crash after the manifest update');
			return put(key, body, options);
		};
		const r = await say(base, `c${OPEN_MAX}`, 'the one too many: token-last');
		assert.equal(r.captured, 1, 'the capture itself went through');
		assert.equal(failed, 1);
		assert.ok((await openOf(storage)).includes('c0'), 'its log is open: still listed');
		for (const i of [0, 1, OPEN_MAX - 1])
			assert.equal(
				await topFresh(base, `token${i}`, { userId: 'u' }),
				`conversation ${i} mentions token${i}`,
			);
		assert.equal(
			await topFresh(base, 'token-last', { allUsers: true }),
			'the one too many: token-last',
		);
		await say(base, 'later', 'one more conversation: token-later');
		assert.ok(!(await openOf(storage)).includes('c0'), 'folded by the next fold');
		const status = await base.status();
		assert.deepEqual([status.lexical?.chunks, status.mismatch], [OPEN_MAX + 2, false]);
	});

	for (const moment of ['before', 'after'] as const)
		it(`a capture into a log the fold folds, ${moment} the fold closes it: the log stays (or is again) open and listed, nothing newer is hidden`, async () => {
			const { base, storage } = setup();
			for (let i = 0; i < OPEN_MAX; i++)
				await say(base, `c${i}`, `conversation ${i} mentions token${i}`);
			const other = new MemoryBase({ storage: storage.inner, baseId: 'kb', threshold: 1_000_000 });
			const racer = () => say(other, 'c0', 'arrived during the fold: token-racer');
			const put = storage.put.bind(storage);
			let raced = false;
			storage.put = async (key, body, options) => {
				if (key !== captureLogKey('kb', 'c0') || raced) return put(key, body, options);
				raced = true; // the fold is closing c0: another writer captures into it just before or after
				if (moment === 'before') await racer();
				const out = await put(key, body, options);
				if (moment === 'after') await racer();
				return out;
			};
			await say(base, `c${OPEN_MAX}`, 'the one too many');
			assert.ok(raced);
			const log = await stored<SessionLog>(storage, captureLogKey('kb', 'c0'));
			assert.deepEqual([log.lexical?.open, log.next_seq], [true, 3]);
			assert.equal(log.lexical?.through, 1, 'the first message is in the manifest');
			assert.ok((await openOf(storage)).includes('c0'));
			assert.equal(
				await topFresh(base, 'token-racer', { userId: 'u' }),
				'arrived during the fold: token-racer',
			);
		});

	it('a whole-base sync folds every open log first: searches then read none, and find everything', async () => {
		const root = tempDir('open-logs');
		const storage = new InstrumentedStorage(new LocalDiskStorage({ root }));
		const base = new MemoryBase({
			storage,
			baseId: 'kb',
			embedder: new TestEmbedder(),
			threshold: 1e6,
		});
		for (let i = 0; i < 5; i++) await say(base, `c${i}`, `synced conversation token${i}`);
		assert.equal((await openOf(storage)).length, 5);
		await base.sync();
		assert.deepEqual(await openOf(storage), []);
		const log = await stored<SessionLog>(storage, captureLogKey('kb', 'c3'));
		assert.deepEqual([log.lexical?.open, log.lexical?.through, log.cursor], [false, 1, 1]);
		const get = storage.get.bind(storage) as typeof storage.get;
		const logReads: string[] = [];
		storage.get = ((key: string, options?: object) => {
			if (key.endsWith('/log.json')) logReads.push(key);
			return get(key, options ?? {});
		}) as typeof storage.get;
		clearAllCaches();
		const hits = await base.search('token3', { k: 1, mode: 'lexical', allUsers: true });
		assert.equal(hits[0]?.text, 'synced conversation token3');
		assert.deepEqual(logReads, [], 'no log read');
	});

	it('Regenerate folds the open logs and keeps every capture findable, those after it too', async () => {
		const { base, storage } = setup();
		for (let i = 0; i < 3; i++) await say(base, `c${i}`, `before regenerate token${i}`);
		await base.regenerate();
		assert.deepEqual(await openOf(storage), [], 'every log closed and unlisted');
		assert.equal((await stored<LexicalManifest>(storage, MANIFEST)).tail.length, 3);
		await say(base, 'c1', 'after regenerate token-after');
		for (const [q, t] of [
			['token0', 'before regenerate token0'],
			['token-after', 'after regenerate token-after'],
		])
			assert.equal(await topFresh(base, q, { userId: 'u' }), t);
		assert.equal((await base.status()).mismatch, false);
	});

	it('Forget unlists the conversation and leaves none of its text in any stored object', async () => {
		const { base, storage, root } = setup();
		for (let i = 0; i < SEAL_AT + 3; i++) await say(base, 'gone', `secret-gone-${i} words`);
		await say(base, 'kept', 'kept words stay');
		await base.forget('gone');
		assert.deepEqual(await openOf(storage), ['kept']);
		for (const file of filesUnder(root))
			assert.ok(!expanded(readFileSync(file)).toString('latin1').includes('secret-gone'), file);
		assert.equal(await topFresh(base, 'words', { userId: 'u' }), 'kept words stay');
	});

	// Forget runs in "another process" (its own caches and in-process queues: the disk storage itself).
	const racingForgets = {
		// The fold read c0's log; Forget runs to its end before the fold writes the manifest.
		'after a fold read the log': async (base: MemoryBase, storage: InstrumentedStorage) => {
			const other = new MemoryBase({ storage: storage.inner, baseId: 'kb', threshold: 1e6 });
			const get = storage.get.bind(storage) as typeof storage.get;
			let armed = true;
			storage.get = (async (key: string, options?: object) => {
				const got = await get(key, options ?? {});
				if (armed && key === captureLogKey('kb', 'c0')) {
					armed = false;
					await other.forget('c0');
				}
				return got;
			}) as typeof storage.get;
			await say(base, `c${OPEN_MAX}`, 'the one too many');
			assert.equal(armed, false);
		},
		// A capture seals c50's log (its manifest update goes first); Forget runs right before it.
		'before a seal writes the manifest': async (base: MemoryBase, storage: InstrumentedStorage) => {
			const other = new MemoryBase({ storage: storage.inner, baseId: 'kb', threshold: 1e6 });
			const put = storage.put.bind(storage);
			let armed = true;
			storage.put = async (key, body, options) => {
				if (armed && key === MANIFEST) {
					armed = false;
					await other.forget('c0');
				}
				return put(key, body, options);
			};
			const r = await say(base, 'c0', 'arrives during the forget');
			assert.equal(armed, false);
			assert.equal(r.total, 1, 'a new log');
		},
		// The fold read c0's log; Forget then cleans the index and pauses before deleting the log, while
		// the fold puts c0 back and closes its log (still there).
		'while a fold runs between its steps': async (
			base: MemoryBase,
			storage: InstrumentedStorage,
		) => {
			let reached!: () => void;
			let release!: () => void;
			const atDelete = new Promise<void>((r) => (reached = r));
			const paused = new Promise<void>((r) => (release = r));
			const hooked = new Proxy(storage.inner, {
				get(target, prop) {
					if (prop === 'delete')
						return async (key: string, options?: object) => {
							if (key === captureLogKey('kb', 'c0')) {
								reached();
								await paused;
							}
							return target.delete(key, options);
						};
					const value: unknown = Reflect.get(target, prop);
					return typeof value === 'function' ? value.bind(target) : value;
				},
			});
			const other = new MemoryBase({ storage: hooked, baseId: 'kb', threshold: 1e6 });
			const get = storage.get.bind(storage) as typeof storage.get;
			let forgetting: Promise<unknown> | undefined;
			storage.get = (async (key: string, options?: object) => {
				const got = await get(key, options ?? {});
				if (!forgetting && key === captureLogKey('kb', 'c0')) {
					forgetting = other.forget('c0');
					await atDelete;
				}
				return got;
			}) as typeof storage.get;
			await say(base, `c${OPEN_MAX}`, 'the one too many');
			assert.ok(forgetting);
			release();
			await forgetting;
		},
	};

	for (const [moment, race] of Object.entries(racingForgets))
		it(`Forget ${moment}: what the fold or seal put back of the conversation goes again, no text stays`, async () => {
			const { base, storage, root } = setup();
			const secret = 'forgotten-zero';
			for (let i = 0; i < OPEN_MAX; i++) await say(base, `c${i}`, `conversation ${i}`);
			for (let i = 1; i < SEAL_AT; i++) await say(base, 'c0', `more ${secret} words ${i}`);
			await race(base, storage);
			for (const file of filesUnder(root))
				assert.ok(!expanded(readFileSync(file)).toString('latin1').includes(secret), file);
			assert.equal(await topFresh(base, 'conversation', { sessionId: 'c2' }), 'conversation 2');
		});

	it('a manifest listing a bad conversation ID, or a log with messages past `through` outside it, is refused', async () => {
		const { base, storage, root } = setup();
		await say(base, 'c', 'some words');
		const manifest = await stored<LexicalManifest>(storage, MANIFEST);
		const bad = { ...manifest, open: [{ ...manifest.open?.[0], session_id: '../x' }] };
		writeFileSync(path.join(root, MANIFEST), JSON.stringify(bad));
		clearAllCaches();
		await assert.rejects(base.search('words', { userId: 'u' }), CorruptDocumentError);
		writeFileSync(path.join(root, MANIFEST), JSON.stringify(manifest));
		// The base-wide index's listing of it, for a search of every conversation.
		const wide = `${wideLexicalPrefix('kb')}manifest.json`;
		const wideManifest = await stored<LexicalManifest>(storage, wide);
		const badWide = { ...wideManifest, open: [{ ...wideManifest.open?.[0], session_id: '../x' }] };
		writeFileSync(path.join(root, wide), JSON.stringify(badWide));
		clearAllCaches();
		await assert.rejects(base.search('words', { allUsers: true }), CorruptDocumentError);
		writeFileSync(path.join(root, wide), JSON.stringify(wideManifest));
		const key = captureLogKey('kb', 'c');
		const log = await stored<SessionLog>(storage, key);
		const moved = { ...log, lexical: { ...log.lexical, through: log.next_seq } };
		writeFileSync(path.join(root, key), JSON.stringify(moved));
		await assert.rejects(base.search('words', { sessionId: 'c' }), CorruptDocumentError);
	});
});
