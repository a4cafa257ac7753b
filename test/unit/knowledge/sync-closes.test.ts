// A conversation's sync closes its log when nothing came during it (in the cursor swap, still its last
// write), and the base-wide index unlists it with this process's next write of it: a search of every
// conversation then reads only the logs that hold something the manifests lack. Nothing captured
// during or after the sync is hidden, whatever runs between.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';

import {
	captureLogKey,
	clearAllCaches,
	IDLE_FOLD_AT,
	IDLE_FOLD_MS,
	LocalDiskStorage,
	MemoryBase,
	wideLexicalPrefix,
} from '../../../src/internal';
import type { LexicalManifest, MemoryStorage, PutOptions, SessionLog } from '../../../src/internal';
import { TestEmbedder } from '../../support/embeddings';
import { tempDir } from '../../support/storages';

const WIDE = `${wideLexicalPrefix('wf')}manifest.json`;

/** Disk storage that counts reads of capture logs and may run something before a write. */
class Watched extends LocalDiskStorage {
	logReads = 0;
	beforePut?: (key: string) => Promise<void>;

	override async get(key: string, options?: object) {
		if (key.endsWith('/log.json')) this.logReads++;
		return super.get(key, options as never) as never;
	}

	override async put(key: string, body: Uint8Array, options?: PutOptions) {
		const hook = this.beforePut;
		if (hook) await hook(key);
		return super.put(key, body, options);
	}
}

const WORKER = path.resolve(__dirname, '../../support/memory-base-worker.ts');

/** Another process captures one message into `sessionId` (its text: "x stride 0 about topicx0"). */
async function captureElsewhere(root: string, sessionId: string, userId: string): Promise<void> {
	const config = { backend: 'disk', root, action: 'capture', sessions: [sessionId], strides: 1 };
	const { stdout } = await promisify(execFile)(
		process.execPath,
		['--import', 'tsx', WORKER, JSON.stringify({ ...config, tag: 'x', userId, threshold: 1000 })],
		{ env: { ...process.env, NODE_NO_WARNINGS: '1' } },
	);
	assert.equal(JSON.parse(stdout).captured, 1, stdout);
}

const open = (storage: MemoryStorage) =>
	new MemoryBase({ storage, baseId: 'wf', threshold: 1_000_000, embedder: new TestEmbedder() });

function setup() {
	const root = tempDir('sync-closes');
	const storage = new Watched({ root });
	return { root, storage, base: open(storage) };
}

async function stored<T>(storage: MemoryStorage, key: string): Promise<T> {
	const got = await storage.get(key);
	assert.ok(got, key);
	return JSON.parse(Buffer.from(got.body).toString()) as T;
}

const wideListed = async (storage: MemoryStorage) =>
	((await stored<LexicalManifest>(storage, WIDE)).open ?? []).map((o) => o.session_id).sort();

const logOf = (storage: MemoryStorage, sessionId: string) =>
	stored<SessionLog>(storage, captureLogKey('wf', sessionId));

let run = 0;
const say = (base: MemoryBase, sessionId: string, text: string, userId: string) =>
	base.capture({ sessionId, userId, runId: `run-${++run}`, texts: [text] });

/** Texts an all-users word search finds, as a process that never saw the base; and the logs it read. */
async function everyone(base: MemoryBase, storage: Watched, query: string) {
	clearAllCaches();
	const before = storage.logReads;
	const hits = await base.search(query, { k: 10, mode: 'lexical', allUsers: true });
	return { texts: hits.map((h) => h.text).sort(), logReads: storage.logReads - before };
}

describe('a sync closes its log; the base-wide index unlists it', () => {
	it('closed in the cursor swap, unlisted by the next write of the base-wide index; then no log is read and everything is found', async () => {
		const { storage, base } = setup();
		await say(base, 'c1', 'the harbour crane is orange', 'ann');
		await say(base, 'c2', 'the harbour ferry is blue', 'bob');
		assert.deepEqual(await wideListed(storage), ['c1', 'c2']);
		await base.sync({ sessionId: 'c1' });
		assert.equal((await logOf(storage, 'c1')).lexical?.open, false, 'closed by the sync');
		assert.deepEqual(await wideListed(storage), ['c1', 'c2'], 'no write after the cursor');
		await base.sync({ sessionId: 'c2' });
		assert.deepEqual(await wideListed(storage), ['c2'], "c2's sync unlisted c1");
		await say(base, 'c3', 'the harbour tug is green', 'cy');
		assert.deepEqual(await wideListed(storage), ['c3'], "c3's listing unlisted c2");
		const found = await everyone(base, storage, 'harbour');
		assert.deepEqual(found.texts, [
			'the harbour crane is orange',
			'the harbour ferry is blue',
			'the harbour tug is green',
		]);
		assert.equal(found.logReads, 1, 'only the open log, c3');
	});

	it('a closed conversation captured into again is listed at once (a newer opening), even by the write that unlists its old one', async () => {
		const { storage, base } = setup();
		await say(base, 'c1', 'my locker word is marigold', 'ann');
		await base.sync({ sessionId: 'c1' });
		const closedGen = (await logOf(storage, 'c1')).lexical!.gen;
		await say(base, 'c1', 'my locker word is sunflower', 'ann');
		const log = await logOf(storage, 'c1');
		assert.equal(log.lexical?.open, true);
		assert.ok(log.lexical!.gen > closedGen);
		assert.deepEqual(await wideListed(storage), ['c1']);
		for (const word of ['marigold', 'sunflower'])
			assert.ok((await everyone(base, storage, word)).texts.includes(`my locker word is ${word}`));
		for (const scope of [{ userId: 'ann' }, { sessionId: 'c1' }]) {
			clearAllCaches();
			const hits = await base.search('sunflower', { k: 1, mode: 'lexical', ...scope });
			assert.equal(hits[0]?.text, 'my locker word is sunflower', JSON.stringify(scope));
		}
	});

	for (const moment of [
		'after the sync wrote the index',
		'between the read and the write of its cursor swap',
	]) {
		it(`a capture by another process ${moment} keeps the log open and listed, and its message is found at once`, async () => {
			const { root, storage, base } = setup();
			await say(base, 'c1', 'the first note about lanterns', 'ann');
			let done = false;
			const logKey = captureLogKey('wf', 'c1');
			storage.beforePut = async (key) => {
				const cue = moment.startsWith('after') ? key.includes('/index/') : key === logKey;
				if (done || !cue) return;
				done = true;
				await captureElsewhere(root, 'c1', 'ann');
			};
			await base.sync({ sessionId: 'c1' });
			storage.beforePut = undefined;
			assert.ok(done, 'the capture ran inside the sync');
			const log = await logOf(storage, 'c1');
			assert.equal(log.cursor, 1, 'the sync took what it found at its start');
			assert.equal(log.lexical?.open, true, 'a message came after what the sync took');
			await say(base, 'c2', 'an unrelated word', 'bob'); // a later write of the base-wide index
			assert.deepEqual(await wideListed(storage), ['c1', 'c2']);
			assert.ok(
				(await everyone(base, storage, 'topicx0')).texts.includes('x stride 0 about topicx0'),
			);
			assert.ok(
				(await everyone(base, storage, 'lanterns')).texts.includes('the first note about lanterns'),
			);
		});
	}

	it('a process that ends before unlisting leaves the closed log listed: searches read it for nothing, find everything, and a whole-base sync unlists it', async () => {
		const { storage, base } = setup();
		await say(base, 'c1', 'the orchard has pears', 'ann');
		await say(base, 'c2', 'the orchard has plums', 'bob');
		await base.sync({ sessionId: 'c1' });
		clearAllCaches(); // the process ends: what it meant to unlist is gone with it
		await base.sync({ sessionId: 'c2' });
		assert.deepEqual(await wideListed(storage), ['c1', 'c2'], 'c1 still listed, closed');
		const found = await everyone(base, storage, 'orchard');
		assert.deepEqual(found.texts, ['the orchard has pears', 'the orchard has plums']);
		assert.equal(found.logReads, 2);
		await base.sync();
		assert.deepEqual(await wideListed(storage), []);
		assert.equal((await everyone(base, storage, 'orchard')).logReads, 0);
	});

	it('a conversation forgotten while its unlisting waits: the next write unlists nothing else, and nothing of it is found', async () => {
		const { storage, base } = setup();
		await say(base, 'c1', 'the vault word is marigold', 'ann');
		await say(base, 'c2', 'the vault is downstairs', 'bob');
		await base.sync({ sessionId: 'c1' });
		await base.forget('c1');
		await say(base, 'c3', 'the vault has a new lock', 'cy');
		assert.deepEqual(await wideListed(storage), ['c2', 'c3']);
		const found = await everyone(base, storage, 'vault');
		assert.deepEqual(found.texts, ['the vault has a new lock', 'the vault is downstairs']);
	});
});

describe('logs listed long are folded', () => {
	/** Sets every listing of the base-wide word index back by an hour (as if listed then). */
	async function age(storage: MemoryStorage): Promise<void> {
		const got = await storage.get(WIDE);
		assert.ok(got);
		const m = JSON.parse(Buffer.from(got.body).toString()) as LexicalManifest;
		const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
		m.open = (m.open ?? []).map((o) => ({ ...o, at: hourAgo }));
		await storage.put(WIDE, Buffer.from(JSON.stringify(m)), { ifVersion: got.version });
	}

	it(`once ${IDLE_FOLD_AT} were listed over ${IDLE_FOLD_MS / 60_000} minutes, the capture that lists one more folds them; everything stays found`, async () => {
		const { storage, base } = setup();
		const ids = Array.from({ length: IDLE_FOLD_AT }, (_, i) => `c${i}`);
		for (const [i, id] of ids.entries())
			await say(base, id, `pending note ${i} about kites`, `u${i}`);
		await say(base, ids[0], 'one more note about kites', 'u0');
		await age(storage);
		await say(base, 'fresh', 'a fresh note about kites', 'v'); // lists one: folds the eight
		assert.deepEqual(await wideListed(storage), ['fresh']);
		for (const id of ids) assert.equal((await logOf(storage, id)).lexical?.open, false, id);
		const found = await everyone(base, storage, 'kites');
		assert.equal(found.texts.length, IDLE_FOLD_AT + 2);
		assert.equal(found.logReads, 1);
		// A folded conversation captured into again is listed again and found at once.
		await say(base, ids[0], 'a late note about kites', 'u0');
		assert.deepEqual(await wideListed(storage), ['c0', 'fresh']);
		assert.ok((await everyone(base, storage, 'late')).texts.includes('a late note about kites'));
	});

	it(`fewer than ${IDLE_FOLD_AT} listed long, or many listed lately: nothing is folded`, async () => {
		const { storage, base } = setup();
		const ids = Array.from({ length: IDLE_FOLD_AT + 2 }, (_, i) => `c${i}`);
		for (const [i, id] of ids.entries()) await say(base, id, `note ${i} about owls`, `u${i}`);
		await say(base, 'fresh', 'a fresh note about owls', 'v');
		assert.equal((await wideListed(storage)).length, IDLE_FOLD_AT + 3, 'listed lately');
		const { storage: s2, base: b2 } = setup();
		for (const id of ids.slice(0, IDLE_FOLD_AT - 1)) await say(b2, id, 'an old note', 'u');
		await age(s2);
		await say(b2, 'fresh', 'a fresh note', 'v');
		assert.equal(
			(await wideListed(s2)).length,
			IDLE_FOLD_AT,
			'seven listed long, and the fresh one',
		);
	});
});
