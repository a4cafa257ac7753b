// The Memory Base engine on local disk: capture, threshold, sync, search, status, regenerate, delete, and
// each reliability rule of the issue (cursor last, idempotent chunks, range fixed at the start, threshold
// changes at the next capture, one sync per session with an expiring lock, hidden knowledge base).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	captureLogKey,
	chunkId,
	DimensionMismatchError,
	EmbeddingError,
	forgetUser,
	InvalidIdError,
	IndexMismatchError,
	InvalidInputError,
	KnowledgeBaseInUseError,
	listKnowledgeBases,
	clearAllCaches,
	LocalDiskStorage,
	MemoryBase,
	MemoryBaseDeletingError,
	memoryBaseLeaseKey,
	SEAL_AT,
	sessionLeaseKey,
	sessionPart,
	SyncCancelledError,
	SyncRunningError,
	vectorIndexPrefix,
	vectorManifestKey,
	vectorPartFolder,
	vectorPartsPrefix,
	wideLexicalPrefix,
	wideVectorPrefix,
} from '../../../src/internal';
import type {
	ExternalVectorStore,
	GetOptions,
	MemoryBaseOptions,
	MemoryStorage,
	SessionLog,
} from '../../../src/internal';
import { InstrumentedStorage, tempDir } from '../../support/storages';
import { expanded } from '../../support/stored-segments';
import {
	PgVectorLikeStore,
	QdrantLikeStore,
	TestEmbedder,
	TestVectorStore,
} from '../../support/embeddings';

function setup(extra: Partial<MemoryBaseOptions> = {}) {
	const root = tempDir('memory-base');
	const disk = new LocalDiskStorage({ root });
	const storage = new InstrumentedStorage(disk);
	const embedder = new TestEmbedder();
	const base = new MemoryBase({ storage, baseId: 'wf1', embedder, threshold: 4, ...extra });
	return { root, disk, storage, embedder, base };
}

let run = 0;
/** One chat turn's output captured as a stride of its own run. */
const turn = (base: MemoryBase, sessionId: string, ...texts: string[]) =>
	base.capture({ sessionId, runId: `run-${++run}`, texts });

async function logOf(
	storage: MemoryStorage,
	sessionId: string,
	baseId = 'wf1',
): Promise<SessionLog> {
	const got = await storage.get(captureLogKey(baseId, sessionId));
	assert.ok(got, `no log for ${sessionId}`);
	return JSON.parse(Buffer.from(got.body).toString('utf8'));
}

const FACTS = [
	'My favourite colour is teal',
	'I live in Lisbon near the river',
	'The project deadline is in March',
	'Please remind me about the dentist',
];

describe('Memory Base: capture and threshold', () => {
	it('three turns stay pending under threshold 4; the fourth ingests; counts follow', async () => {
		const { base, embedder } = setup();
		for (let i = 0; i < 3; i++) {
			const r = await turn(base, 's1', FACTS[i]);
			assert.equal(r.captured, 1);
			assert.equal(r.pending, i + 1);
			assert.equal(r.processed, 0);
			assert.equal(r.sync, undefined);
		}
		assert.equal(embedder.calls.length, 0, 'nothing embedded below the threshold');
		const fourth = await turn(base, 's1', FACTS[3]);
		assert.equal(fourth.sync?.messages, 4);
		assert.equal(fourth.pending, 0);
		assert.equal(fourth.processed, 4);
		assert.deepEqual(embedder.embedded(), FACTS);
		const status = await base.status();
		assert.equal(status.sessions[0].cursor, 4);
		assert.equal(status.sessions[0].totalProcessed, 4);
		assert.ok(status.sessions[0].lastSyncAt);
		assert.equal(status.mismatch, false);
		assert.equal(status.index?.vectors, 4);
	});

	it('a stride is one run: several outputs of one execution are captured together, empty ones skipped', async () => {
		const { base, storage } = setup({ threshold: 100 });
		const r = await base.capture({
			sessionId: 's',
			runId: 'exec-7',
			texts: ['one', '', '  ', 'two'],
		});
		assert.equal(r.captured, 2);
		const log = await logOf(storage, 's');
		assert.deepEqual(
			log.messages.map((m) => [m.seq, m.run_id, m.text]),
			[
				[1, 'exec-7', 'one'],
				[2, 'exec-7', 'two'],
			],
		);
		// The same run captured again (a retried execution) is not added twice.
		const again = await base.capture({ sessionId: 's', runId: 'exec-7', texts: ['one', 'two'] });
		assert.equal(again.captured, 0);
		assert.equal(again.total, 2);
	});

	it('auto capture off: pending grows past the threshold, nothing is ingested until Sync Now', async () => {
		const { base, embedder } = setup({ autoCapture: false, threshold: 2 });
		for (const f of FACTS) await turn(base, 's1', f);
		assert.equal(embedder.calls.length, 0);
		assert.equal((await base.status()).sessions[0].pending, 4);
		const synced = await base.sync({ sessionId: 's1' });
		assert.equal(synced.messages, 4);
		assert.equal((await base.status()).sessions[0].pending, 0);
	});

	it('a threshold change while messages are pending takes effect at the next capture only', async () => {
		const { base, embedder } = setup({ threshold: 10 });
		for (let i = 0; i < 3; i++) await turn(base, 's1', FACTS[i]);
		// Lowering the threshold below the pending count ingests nothing by itself.
		await base.configure({ threshold: 2 });
		const status = await base.status();
		assert.equal(status.threshold, 2);
		assert.equal(status.sessions[0].pending, 3);
		assert.equal(embedder.calls.length, 0);
		// The next capture compares the pending count with the new threshold.
		const next = await base.capture(
			{ sessionId: 's1', runId: 'r-next', texts: [FACTS[3]] },
			{ threshold: 2 },
		);
		assert.equal(next.sync?.messages, 4);
		assert.equal(next.pending, 0);
	});

	it('a threshold change during a running sync: the sync keeps its range; the new threshold counts at the next capture', async () => {
		const { base, embedder } = setup({ threshold: 2, autoCapture: false });
		await turn(base, 's1', FACTS[0]);
		await turn(base, 's1', FACTS[1]);
		embedder.hold();
		const syncing = base.sync({ sessionId: 's1' });
		await embedder.held();
		await base.configure({ threshold: 1, autoCapture: true });
		await turn(base, 's1', FACTS[2]); // its auto sync finds the running one: skipped, stays pending
		embedder.release();
		const done = await syncing;
		assert.equal(done.sessions[0].messages, 2);
		assert.equal(done.sessions[0].cursor, 2);
		assert.equal(done.sessions[0].pending, 1);
		const next = await turn(base, 's1', FACTS[3]);
		assert.equal(
			next.sync?.messages,
			2,
			'the next capture ingests what waited, under the new threshold',
		);
	});
});

describe('Memory Base: search', () => {
	it('finds an early fact by lexical overlap; the session filter leaves other sessions out', async () => {
		const { base } = setup();
		for (const f of FACTS) await turn(base, 'alice', f);
		for (const f of [
			'My favourite colour is orange',
			'I work as a baker',
			'I own a cat',
			'I like jazz',
		])
			await turn(base, 'bob', f);
		const mine = await base.search('what is my favourite colour?', { k: 2, sessionId: 'alice' });
		assert.equal(mine[0].text, 'My favourite colour is teal');
		assert.ok(mine.every((m) => m.sessionId === 'alice'));
		assert.ok(mine[0].score > 0.5 && mine[0].score <= 1);
		assert.match(mine[0].runId, /^run-/);
		assert.equal(mine[0].seq, 1);
		assert.ok(!Number.isNaN(Date.parse(mine[0].capturedAt)));
		const all = await base.search('what is my favourite colour?', { k: 2, allUsers: true });
		assert.deepEqual(all.map((m) => m.sessionId).sort(), ['alice', 'bob']);
	});

	it('long outputs are chunked (1,000 characters, 100 overlap) and chunk IDs derive from message IDs', async () => {
		const { base, storage } = setup({ threshold: 1 });
		const long = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
		const r = await turn(base, 's', long);
		assert.ok((r.sync?.chunks ?? 0) >= 3);
		const log = await logOf(storage, 's');
		const hits = await base.search('word399', { k: 1, allUsers: true });
		assert.equal(hits[0].messageId, log.messages[0].id);
		assert.ok(hits[0].chunkIndex >= 2);
		assert.equal(
			chunkId('wf1', 's', log.messages[0].id, 0),
			chunkId('wf1', 's', log.messages[0].id, 0),
		);
		assert.match(
			chunkId('wf1', 's', 'm', 0),
			/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
		);
		assert.notEqual(chunkId('wf1', 's', 'm', 0), chunkId('wf1', 's', 'm', 1));
	});

	it('refuses an empty query and a bad top K; needs an embedding model', async () => {
		const { base, storage } = setup();
		await assert.rejects(base.search('  ', { allUsers: true }), InvalidInputError);
		await assert.rejects(base.search('x', { k: 0, allUsers: true }), InvalidInputError);
		await assert.rejects(
			new MemoryBase({ storage, baseId: 'wf1' }).search('x', { allUsers: true, mode: 'vector' }),
			/Vector search needs an embedding model/,
		);
	});
});

describe('Memory Base: reliability rules', () => {
	it('an embedding failure mid-sync leaves the cursor unchanged; the next sync completes without duplicates', async () => {
		const { base, embedder, storage } = setup({ threshold: 100, embeddingBatchSize: 2 });
		for (const f of FACTS) await turn(base, 's1', f);
		embedder.failAt.add(1); // the second batch (facts 3 and 4)
		await assert.rejects(base.sync({ sessionId: 's1' }), /embedding call 1 failed/);
		let log = await logOf(storage, 's1');
		assert.equal(log.cursor, 0, 'cursor unchanged');
		assert.equal(log.total_processed, 0);
		assert.equal((await base.status()).index?.vectors, 2, 'the first batch was kept in the index');
		const again = await base.sync({ sessionId: 's1' });
		assert.equal(again.messages, 4);
		log = await logOf(storage, 's1');
		assert.equal(log.cursor, 4);
		const status = await base.status();
		assert.equal(
			status.index?.vectors,
			4,
			'each chunk once, though the first batch was written twice',
		);
		const hits = await base.search('favourite colour teal', { k: 10, allUsers: true });
		assert.equal(new Set(hits.map((h) => h.messageId)).size, hits.length, 'no duplicate results');
		assert.equal(hits.length, 4);
	});

	it('the cursor is the last write, after the index confirmed every chunk', async () => {
		const { base, storage } = setup({ threshold: 100, embeddingBatchSize: 1 });
		for (const f of FACTS) await turn(base, 's1', f);
		const writes: string[] = [];
		const put = storage.put.bind(storage);
		storage.put = async (key, body, options) => {
			writes.push(key);
			return put(key, body, options);
		};
		await base.sync({ sessionId: 's1' });
		const logWrites = writes
			.map((k, i) => [k, i] as const)
			.filter(([k]) => k.endsWith('/log.json'));
		assert.equal(logWrites.length, 1, JSON.stringify(writes));
		const lastIndexWrite = writes
			.map((k, i) => [k, i] as const)
			.filter(([k]) => k.includes('/index/'))
			.at(-1)!;
		assert.ok(logWrites[0][1] > lastIndexWrite[1], JSON.stringify(writes));
		assert.ok(
			writes.slice(logWrites[0][1] + 1).every((k) => k.endsWith('lease.json')),
			'only the lock after it',
		);
	});

	it('a failed index write (storage outage) leaves the cursor unchanged; the retry resumes from it', async () => {
		const { base, storage } = setup({ threshold: 100 });
		for (const f of FACTS) await turn(base, 's1', f);
		const put = storage.put.bind(storage);
		let fail = true;
		storage.put = async (key, body, options) => {
			if (fail && key.endsWith('manifest.json')) throw new Error('simulated outage');
			return put(key, body, options);
		};
		await assert.rejects(base.sync({ sessionId: 's1' }), /simulated outage/);
		assert.equal((await logOf(storage, 's1')).cursor, 0);
		fail = false;
		assert.equal((await base.sync({ sessionId: 's1' })).messages, 4);
		assert.equal((await logOf(storage, 's1')).cursor, 4);
	});

	it('a sync takes its range at its start: messages captured during it wait for the next one', async () => {
		const { base, embedder, storage } = setup({ threshold: 100 });
		await turn(base, 's1', FACTS[0]);
		await turn(base, 's1', FACTS[1]);
		embedder.hold();
		const syncing = base.sync({ sessionId: 's1' });
		await embedder.held();
		await turn(base, 's1', FACTS[2]);
		embedder.release();
		const done = await syncing;
		assert.equal(done.sessions[0].messages, 2);
		const log = await logOf(storage, 's1');
		assert.equal(log.cursor, 2);
		assert.equal(log.next_seq, 4);
		assert.deepEqual(embedder.embedded(), FACTS.slice(0, 2));
		assert.equal((await base.sync({ sessionId: 's1' })).messages, 1);
		assert.deepEqual(embedder.embedded(), FACTS.slice(0, 3));
	});

	it('two concurrent Sync Now of one session: one runs, the other gets "sync already running" and changes nothing', async () => {
		const { base, embedder, storage, root } = setup({ threshold: 100 });
		for (const f of FACTS) await turn(base, 's1', f);
		embedder.hold();
		const first = base.sync({ sessionId: 's1' });
		await embedder.held();
		const before = snapshot(root);
		const second = await base.sync({ sessionId: 's1' }).then(
			() => undefined,
			(e: unknown) => e,
		);
		assert.ok(second instanceof SyncRunningError, String(second));
		assert.match(
			second.message,
			/^Sync already running: sync of memory base "wf1" \(session "s1"\)/,
		);
		assert.match(second.message, /Nothing was changed/);
		assert.deepEqual(snapshot(root), before, 'the refused sync wrote nothing');
		// A whole-base sync conflicts with it too, and so does a session sync with a whole-base one.
		await assert.rejects(base.sync(), SyncRunningError);
		embedder.release();
		assert.equal((await first).messages, 4);
		assert.equal((await logOf(storage, 's1')).cursor, 4);
		await turn(base, 's2', 'x');
		embedder.hold();
		const whole = base.sync();
		await embedder.held();
		const conflict = await base.sync({ sessionId: 's2' }).catch((e: unknown) => e);
		assert.ok(conflict instanceof SyncRunningError);
		embedder.release();
		await whole;
	});

	it('a crashed sync does not block forever: its lock expires and the next sync takes it over', async () => {
		const { base, disk, storage } = setup({ threshold: 100, leaseMs: 300 });
		for (const f of FACTS) await turn(base, 's1', f);
		// What a sync killed mid-way leaves behind: its lock, not yet expired.
		const leaseKey = sessionLeaseKey('wf1', 's1');
		const lease = {
			holder: 'crashed-process',
			operation: 'sync',
			acquired_at: new Date().toISOString(),
			expires_at: new Date(Date.now() + 300).toISOString(),
		};
		await disk.put(leaseKey, Buffer.from(JSON.stringify(lease)));
		await assert.rejects(base.sync({ sessionId: 's1' }), SyncRunningError);
		await new Promise((r) => setTimeout(r, 350));
		assert.equal((await base.sync({ sessionId: 's1' })).messages, 4);
		assert.equal(await storage.get(leaseKey), null, 'the lock is released after the sync');
	});

	it('a sync that lost its lock (it stalled past the lock duration) stops without moving the cursor', async () => {
		const { base, embedder, storage, disk } = setup({ threshold: 100, leaseMs: 200 });
		for (const f of FACTS) await turn(base, 's1', f);
		embedder.hold();
		const stalled = base.sync({ sessionId: 's1' }).catch((e: unknown) => e);
		await embedder.held();
		// Another process takes the lock over (as if it had expired while this one stalled).
		const key = sessionLeaseKey('wf1', 's1');
		const other = {
			holder: 'other',
			operation: 'sync',
			acquired_at: new Date().toISOString(),
			expires_at: new Date(Date.now() + 60_000).toISOString(),
		};
		await disk.put(key, Buffer.from(JSON.stringify(other)));
		await new Promise((r) => setTimeout(r, 150)); // a renewal finds it taken
		embedder.release();
		const error = await stalled;
		assert.match(String(error), /lost its lock/);
		assert.equal((await logOf(storage, 's1')).cursor, 0);
		assert.equal(
			JSON.parse(Buffer.from((await disk.get(key))!.body).toString()).holder,
			'other',
			'the new holder keeps its lock',
		);
	});
});

describe('Memory Base: status, mismatch and regenerate', () => {
	it('index deleted behind the base’s back: Status flags the mismatch, Regenerate restores search', async () => {
		const { base, root, embedder } = setup();
		for (const f of FACTS) await turn(base, 's1', f);
		await turn(base, 's2', 'only in s2');
		// Every vector partition of the base (one per conversation here: no users), and its base-wide copy.
		rmSync(path.join(root, vectorPartsPrefix('wf1')), { recursive: true });
		rmSync(path.join(root, wideVectorPrefix('wf1')), { recursive: true });
		const status = await base.status();
		assert.equal(status.mismatch, true);
		assert.match(
			status.mismatchReason ?? '',
			/4 message\(s\) were processed, but the vector index is missing/,
		);
		assert.equal(status.sessions.find((s) => s.sessionId === 's1')?.mismatch, true);
		assert.equal(
			status.sessions.find((s) => s.sessionId === 's2')?.mismatch,
			false,
			'nothing processed there',
		);
		// Searching now would answer from part of what was captured: refused, naming Regenerate.
		await assert.rejects(
			base.search('favourite colour', { k: 3, allUsers: true }),
			(e: unknown) => e instanceof IndexMismatchError && /vector index is missing/.test(e.message),
		);
		const calls = embedder.calls.length;
		const regenerated = await base.regenerate();
		assert.equal(regenerated.messages, 5);
		assert.ok(embedder.calls.length > calls);
		const after = await base.status();
		assert.equal(after.mismatch, false);
		assert.equal(after.index?.vectors, 5);
		assert.equal(after.sessions.find((s) => s.sessionId === 's1')?.cursor, 4);
		assert.equal(
			(await base.search('favourite colour', { k: 1, allUsers: true }))[0].text,
			FACTS[0],
		);
	});

	it('one segment lost: Status names it; search refuses with "run Regenerate"; Regenerate repairs', async () => {
		const { base, root } = setup({ threshold: 1 });
		await turn(base, 's1', FACTS[0]);
		await turn(base, 's1', FACTS[1]);
		const dir = path.join(root, vectorPartFolder('wf1', { part: sessionPart('s1') }), 'segments');
		// The two syncs' segments were merged as they came: one segment holds both.
		assert.equal(readdirSync(dir).length, 1);
		rmSync(path.join(dir, readdirSync(dir)[0]));
		const status = await base.status();
		assert.equal(status.mismatch, true);
		assert.match(status.mismatchReason ?? '', /lost 1 of its 1 segment/);
		clearAllCaches(); // as a process that never read it (this one keeps what it wrote)
		await assert.rejects(base.search('teal colour', { sessionId: 's1' }), /Run Regenerate/);
		// The base-wide index keeps its own copies: a search of every conversation still answers.
		assert.equal((await base.search('teal colour', { k: 1, allUsers: true }))[0].text, FACTS[0]);
		await base.regenerate();
		assert.equal((await base.status()).mismatch, false);
		assert.equal((await base.search('teal colour', { k: 1, allUsers: true }))[0].text, FACTS[0]);
	});

	it('status of an unknown base: nothing, no mismatch', async () => {
		const { base } = setup();
		const status = await base.status();
		assert.deepEqual(
			[status.exists, status.sessions, status.mismatch, status.index?.exists],
			[false, [], false, false],
		);
	});

	it('regenerate resets every cursor and re-ingests from the capture log, sealed blocks included', async () => {
		const { base, storage, embedder } = setup({ threshold: 1000, embeddingBatchSize: 50 });
		const texts = Array.from(
			{ length: SEAL_AT + 10 },
			(_, i) => `note number ${i} about topic${i}`,
		);
		for (const t of texts) await turn(base, 's1', t);
		await base.sync({ sessionId: 's1' });
		const log = await logOf(storage, 's1');
		assert.equal(log.sealed.length, 1, 'processed messages moved out of the log');
		assert.equal(log.messages.length, 0);
		assert.equal(log.cursor, texts.length);
		const regenerated = await base.regenerate();
		assert.equal(regenerated.messages, texts.length);
		assert.deepEqual(embedder.embedded().slice(-texts.length), texts);
		const after = await logOf(storage, 's1');
		assert.equal(after.epoch, 1);
		assert.equal(after.cursor, texts.length);
		assert.equal((await base.status()).index?.vectors, texts.length);
		assert.equal(
			(await base.search('note number 3 about topic3', { k: 1, allUsers: true }))[0].text,
			texts[3],
		);
	});

	it('a different embedding model is refused with a clear error; Regenerate switches to it', async () => {
		const { base, storage } = setup({ threshold: 1 });
		await turn(base, 's1', FACTS[0]);
		const other = new MemoryBase({
			storage,
			baseId: 'wf1',
			embedder: new TestEmbedder(32),
			threshold: 1,
		});
		const r = await other.capture({ sessionId: 's1', runId: 'x', texts: [FACTS[1]] });
		assert.ok(r.syncError instanceof DimensionMismatchError, String(r.syncError));
		assert.match(
			r.syncError.message,
			/holds 256-dimensional vectors, but the embedding model returned 32/,
		);
		await other.regenerate();
		assert.equal((await other.search('teal', { k: 1, allUsers: true }))[0].text, FACTS[0]);
	});

	it('an embedding model answering the wrong number of vectors is an EmbeddingError; nothing moves', async () => {
		const { base, storage, embedder } = setup({ threshold: 100 });
		await turn(base, 's1', FACTS[0]);
		embedder.embedDocuments = async () => [];
		await assert.rejects(base.sync({ sessionId: 's1' }), EmbeddingError);
		assert.equal((await logOf(storage, 's1')).cursor, 0);
	});
});

describe('Memory Base: delete', () => {
	it('deletes everything of the base: configuration, logs, cursors, knowledge base and index', async () => {
		const { base, root, storage } = setup();
		for (const f of FACTS) await turn(base, 's1', f);
		await turn(base, 's2', 'x');
		// Another base on the same storage is left alone.
		const other = new MemoryBase({
			storage,
			baseId: 'wf2',
			embedder: new TestEmbedder(),
			threshold: 1,
		});
		await other.capture({ sessionId: 's1', runId: 'r', texts: ['keep me'] });
		const stored = [
			...filesUnder(root, 'memory_base/wf1'),
			...filesUnder(root, 'knowledge_base/wf1'),
		];
		assert.ok(stored.length >= 6, stored.join(', '));
		const result = await base.delete();
		// Every object counted once (not listed: a base of many conversations deletes millions), and the
		// lease the delete held.
		assert.equal(result.deleted, stored.length + 1);
		assert.deepEqual(filesUnder(root, 'memory_base/wf1'), []);
		assert.deepEqual(filesUnder(root, 'knowledge_base/wf1'), []);
		assert.ok(filesUnder(root, 'memory_base/wf2').length > 0);
		assert.equal((await other.search('keep', { k: 1, allUsers: true }))[0].text, 'keep me');
		assert.equal((await base.status()).exists, false);
	});

	it('cancels a running sync at its next batch, then deletes; the sync reports the cancellation', async () => {
		const { base, embedder, root } = setup({ threshold: 100, embeddingBatchSize: 1 });
		for (const f of FACTS) await turn(base, 's1', f);
		embedder.hold();
		const syncing = base.sync({ sessionId: 's1' }).catch((e: unknown) => e);
		await embedder.held();
		const deleting = base.delete({ mode: 'cancel', timeoutMs: 5000 });
		await new Promise((r) => setTimeout(r, 50));
		await assert.rejects(turn(base, 's1', 'during the delete'), MemoryBaseDeletingError);
		embedder.release();
		const error = await syncing;
		assert.ok(error instanceof SyncCancelledError, String(error));
		const result = await deleting;
		assert.equal(result.waitedFor, 1);
		assert.deepEqual(filesUnder(root, 'memory_base/wf1'), []);
		assert.equal(embedder.calls.length, 1, 'the sync stopped after its current batch');
	});

	it('waits for a running sync to finish (mode "wait"), then deletes', async () => {
		const { base, embedder, root } = setup({ threshold: 100, embeddingBatchSize: 1 });
		for (const f of FACTS) await turn(base, 's1', f);
		embedder.hold();
		const syncing = base.sync({ sessionId: 's1' });
		await embedder.held();
		const deleting = base.delete({ mode: 'wait', timeoutMs: 5000 });
		setTimeout(() => embedder.release(), 100);
		assert.equal((await syncing).messages, 4, 'the sync finished');
		await deleting;
		assert.deepEqual(filesUnder(root, 'memory_base/wf1'), []);
	});

	it("while it waits, reads again only the leases it found held, not every conversation's", async () => {
		const { base, embedder, storage, root } = setup({ threshold: 100, embeddingBatchSize: 1 });
		for (let s = 0; s < 24; s++) await turn(base, `s${s}`, `conversation ${s} says hello`);
		for (const f of FACTS) await turn(base, 's1', f);
		const leaseReads = new Map<string, number>();
		const get = storage.get.bind(storage) as MemoryStorage['get'];
		storage.get = ((key: string, options?: GetOptions) => {
			if (key.endsWith('/lease.json')) leaseReads.set(key, (leaseReads.get(key) ?? 0) + 1);
			return get(key, options ?? {});
		}) as MemoryStorage['get'];
		embedder.hold();
		const syncing = base.sync({ sessionId: 's1' });
		await embedder.held();
		const deleting = base.delete({ mode: 'wait', timeoutMs: 10_000 });
		// Several tries of 250 ms while s1's sync runs.
		setTimeout(() => embedder.release(), 1200);
		assert.equal((await syncing).messages, 5);
		assert.equal((await deleting).waitedFor, 1);
		assert.deepEqual(filesUnder(root, 'memory_base/wf1'), []);
		const held = leaseReads.get(sessionLeaseKey('wf1', 's1')) ?? 0;
		const other = leaseReads.get(sessionLeaseKey('wf1', 's7')) ?? 0;
		assert.ok(held >= 4, `the running sync's lease read ${held} times`);
		// Once when first looked at, once (or twice: taken and released) when the base's lock is taken.
		assert.ok(other <= 3, `another conversation's lease read ${other} times`);
	});

	it('a sync that took its lock just after the first look is waited for too (every lease read again)', async () => {
		const { base, embedder, storage, disk, root } = setup({
			threshold: 100,
			embeddingBatchSize: 1,
		});
		for (let s = 0; s < 8; s++) await turn(base, `s${s}`, `conversation ${s} says hello`);
		for (const f of FACTS) await turn(base, 's1', f);
		// Another process's sync of s5, which read the base before it was marked, takes s5's lock right
		// after the delete first read it free.
		const late = sessionLeaseKey('wf1', 's5');
		let slipped = false;
		let freedAt = Infinity;
		const get = storage.get.bind(storage) as MemoryStorage['get'];
		storage.get = (async (key: string, options?: GetOptions) => {
			const got = await get(key, options ?? {});
			if (key === late && !slipped) {
				slipped = true;
				const at = Date.now();
				const lease = {
					holder: 'another-process',
					operation: 'sync',
					acquired_at: new Date(at).toISOString(),
					expires_at: new Date(at + 8000).toISOString(),
				};
				await disk.put(late, Buffer.from(JSON.stringify(lease)));
				setTimeout(() => {
					freedAt = Date.now();
					void disk.delete(late);
				}, 1500);
			}
			return got;
		}) as MemoryStorage['get'];
		const put = storage.put.bind(storage);
		let takes = 0;
		storage.put = (key, body, options) => {
			if (key === sessionLeaseKey('wf1', 's7')) takes++;
			return put(key, body, options);
		};
		embedder.hold();
		const syncing = base.sync({ sessionId: 's1' });
		await embedder.held();
		const deleting = base.delete({ mode: 'wait', timeoutMs: 10_000 });
		setTimeout(() => embedder.release(), 300);
		await syncing;
		await deleting;
		assert.ok(slipped, 'the late lock was taken');
		assert.ok(Date.now() >= freedAt, 'the delete ended after the late sync let go');
		// The base's lock tried at most once before s5 was seen (refused by it), then taken once s5 was
		// seen free: not once per wait.
		assert.ok(takes >= 1 && takes <= 2, `every lease taken ${takes} times`);
		assert.deepEqual(filesUnder(root, 'memory_base/wf1'), []);
	});

	it("a crashed sync's lock (never released) is waited for until it expires, then the base is deleted", async () => {
		const { base, disk, root } = setup({ threshold: 100, leaseMs: 600 });
		for (let s = 0; s < 6; s++) await turn(base, `s${s}`, `conversation ${s} says hello`);
		// What a sync killed mid-way leaves behind: its lock, not yet expired, renewed by no one.
		const lease = {
			holder: 'crashed-process',
			operation: 'sync',
			acquired_at: new Date().toISOString(),
			expires_at: new Date(Date.now() + 600).toISOString(),
		};
		await disk.put(sessionLeaseKey('wf1', 's3'), Buffer.from(JSON.stringify(lease)));
		const started = Date.now();
		const result = await base.delete({ mode: 'wait', timeoutMs: 5000 });
		assert.equal(result.waitedFor, 1);
		assert.ok(Date.now() - started >= 500, 'waited for the lock to expire');
		assert.deepEqual(filesUnder(root, 'memory_base/wf1'), []);
	});

	it('a sync still running after the timeout: "sync already running", and the base is left as it was', async () => {
		const { base, embedder } = setup({ threshold: 100 });
		for (const f of FACTS) await turn(base, 's1', f);
		embedder.hold();
		const syncing = base.sync({ sessionId: 's1' });
		await embedder.held();
		await assert.rejects(base.delete({ mode: 'wait', timeoutMs: 100 }), SyncRunningError);
		assert.equal((await base.config())?.deleting, undefined, 'no longer marked for deletion');
		embedder.release();
		assert.equal((await syncing).messages, 4);
		await turn(base, 's1', 'still captured');
	});
});

describe('Memory Base: knowledge base, keys and inputs', () => {
	it('its knowledge base is flagged is_memory_base and hidden from retrieval listings', async () => {
		const { base, disk, storage } = setup();
		await turn(base, 's1', 'x');
		const meta = JSON.parse(
			Buffer.from((await disk.get('knowledge_base/wf1/embedding_metadata.json'))!.body).toString(),
		);
		assert.equal(meta.is_memory_base, true);
		assert.equal(meta.memory_base_id, 'wf1');
		// A knowledge base that is not a memory base's (written as another feature would).
		await disk.put(
			'knowledge_base/docs/embedding_metadata.json',
			Buffer.from(
				JSON.stringify({
					...meta,
					kb_id: 'docs',
					is_memory_base: false,
					memory_base_id: undefined,
				}),
			),
		);
		assert.deepEqual(
			(await listKnowledgeBases(storage)).map((k) => k.kb_id),
			['docs'],
		);
		assert.deepEqual(
			(await listKnowledgeBases(storage, { purpose: 'all' })).map((k) => k.kb_id),
			['docs', 'wf1'],
		);
		// The base's own search reads it all the same.
		await turn(base, 's1', 'y');
		await base.sync();
		assert.equal((await base.search('x', { k: 1, allUsers: true }))[0].text, 'x');
		// A base cannot take over a knowledge base that is not its own.
		const thief = new MemoryBase({
			storage,
			baseId: 'wf9',
			knowledgeBaseId: 'docs',
			embedder: new TestEmbedder(),
		});
		await assert.rejects(turn(thief, 's', 'z'), KnowledgeBaseInUseError);
	});

	it('keys: memory_base/{base}/… and knowledge_base/{kb}/…, every ID checked', async () => {
		const { base, root } = setup({ keyPrefix: 'tenant-a' });
		await turn(base, 's1', 'x');
		assert.ok(existsSync(path.join(root, 'tenant-a/memory_base/wf1/config.json')));
		assert.ok(existsSync(path.join(root, 'tenant-a/memory_base/wf1/sessions/s1/log.json')));
		assert.ok(existsSync(path.join(root, 'tenant-a/knowledge_base/wf1/embedding_metadata.json')));
		assert.equal(memoryBaseLeaseKey('b'), 'memory_base/b/lease.json');
		assert.equal(vectorManifestKey('b'), 'knowledge_base/b/index/manifest.json');
		for (const bad of ['', '../x', 'a/b', 'a\u0000'])
			await assert.rejects(turn(base, bad, 'x'), InvalidIdError);
		assert.throws(() => new MemoryBase({ storage: base.storage, baseId: '..' }), InvalidIdError);
		await assert.rejects(base.capture({ sessionId: 's', runId: '', texts: ['x'] }), InvalidIdError);
		await assert.rejects(
			base.capture({ sessionId: 's', runId: 'r', texts: [1 as unknown as string] }),
			InvalidInputError,
		);
	});

	it('a whole-base Sync Now syncs every session', async () => {
		const { base } = setup({ autoCapture: false });
		await turn(base, 'a', 'one');
		await turn(base, 'b', 'two');
		await turn(base, 'b', 'three');
		const result = await base.sync();
		assert.deepEqual(
			result.sessions.map((s) => [s.sessionId, s.messages, s.cursor]),
			[
				['a', 1, 1],
				['b', 2, 2],
			],
		);
		assert.deepEqual([result.conversations, result.messages], [2, 3]);
		assert.deepEqual(await base.sessions(), ['a', 'b']);
	});
});

// Forget Conversation: the right to be forgotten. Nothing of the conversation may stay anywhere in
// storage (capture log, sealed blocks, chunk texts in index segments), and other conversations stay whole.
describe('Memory Base: forget a conversation', () => {
	const SECRET = 'my secret is 1234';
	/** Every stored file whose bytes contain `text` (segments and gzip opened: plain JSON inside). */
	const holding = (root: string, text: string) =>
		walk(root).filter((f) => expanded(readFileSync(path.join(root, f))).includes(text));

	async function twoUsers(extra: Partial<MemoryBaseOptions> = {}) {
		const ctx = setup({ threshold: 1000, autoCapture: false, ...extra });
		const { base } = ctx;
		await turn(base, 'alice', SECRET);
		// Past SEAL_AT, so the sync seals alice's processed messages into a block.
		for (let i = 0; i < SEAL_AT + 6; i++) await turn(base, 'alice', `alice note ${i}`);
		for (const f of FACTS) await turn(base, 'bob', f);
		await base.sync(); // one whole-base sync: segments holding both users
		await turn(base, 'alice', 'alice after the first sync');
		await base.sync({ sessionId: 'alice' });
		return ctx;
	}

	it('removes the conversation’s log, sealed blocks and index rows; other conversations stay searchable', async () => {
		const { base, root } = await twoUsers();
		assert.ok(
			holding(root, SECRET).some((f) => f.endsWith('.vec')),
			'the secret is indexed',
		);
		assert.ok(
			walk(root).some((f) => f.includes('alice') && !f.endsWith('log.json')),
			'sealed',
		);
		const before = await base.status();
		const bobVectors = (await base.status({ sessionId: 'bob' })).sessions[0];
		const result = await base.forget('alice');
		assert.equal(result.messages, SEAL_AT + 8);
		assert.equal(result.vectors, SEAL_AT + 8);
		assert.deepEqual(holding(root, SECRET), [], 'no copy of the conversation is left');
		assert.deepEqual(holding(root, 'alice note'), []);
		assert.deepEqual(filesUnder(root, 'memory_base/wf1/sessions/alice'), []);
		assert.deepEqual(await base.search('secret 1234', { k: 10, sessionId: 'alice' }), []);
		const all = await base.search('favourite colour teal', { k: 100, allUsers: true });
		assert.ok(all.length > 0 && all.every((m) => m.sessionId === 'bob'));
		assert.equal(all.length, FACTS.length);
		const after = await base.status();
		assert.equal(after.mismatch, false, String(after.mismatchReason));
		assert.deepEqual(await base.sessions(), ['bob']);
		assert.deepEqual((await base.status({ sessionId: 'bob' })).sessions[0], bobVectors);
		assert.ok(before.sessions.length === 2 && after.sessions.length === 1);
		// The conversation may start again: a new log, from 1.
		const again = await turn(base, 'alice', 'hello again');
		assert.equal(again.total, 1);
		// Forgetting what is not there (again, or never captured) removes nothing and is no error.
		await base.forget('alice');
		const none = await base.forget('carol');
		assert.deepEqual([none.messages, none.vectors, none.deleted], [0, 0, []]);
	});

	it('refuses while a sync of the conversation runs, changing nothing; a bad ID is an error', async () => {
		const { base, embedder, root } = setup({ threshold: 100 });
		for (const f of FACTS) await turn(base, 's1', f);
		embedder.hold();
		const running = base.sync({ sessionId: 's1' });
		await embedder.held();
		const before = snapshot(root);
		await assert.rejects(base.forget('s1'), SyncRunningError);
		assert.deepEqual(snapshot(root), before);
		embedder.release();
		await running;
		await assert.rejects(base.forget({ user: 'alice' } as unknown as string), InvalidIdError);
		await assert.rejects(base.forget('../wf2'), InvalidIdError);
		assert.equal((await base.forget('s1')).vectors, 4);
	});

	it('a segment compacted away while forgetting: the forget starts over on the new manifest and misses nothing', async () => {
		const { base, root, disk } = await twoUsers();
		// The partition of alice's conversation (captured without a user).
		const manifestKey = `${vectorPartFolder('wf1', { part: sessionPart('alice') })}manifest.json`;
		const storage = new (class extends InstrumentedStorage {
			raced = false;
			async put(key: string, body: Uint8Array, options?: { ifVersion?: string | null }) {
				if (key === manifestKey && !this.raced) {
					this.raced = true;
					// What a compaction elsewhere does: the first segment copied under a new key and swapped in.
					const m = JSON.parse(Buffer.from((await disk.get(key))!.body).toString('utf8'));
					const first = m.segments[0];
					const copy = first.key.replace(/[0-9a-f]+\.vec$/, 'c0ffee000000000000000000.vec');
					await disk.put(copy, (await disk.get(first.key))!.body);
					m.segments[0] = { ...first, key: copy };
					const cur = await disk.get(key);
					await disk.put(key, Buffer.from(JSON.stringify(m)), { ifVersion: cur!.version });
					await disk.delete(first.key);
				}
				return super.put(key, body, options);
			}
		})(disk);
		const racing = new MemoryBase({ storage, baseId: 'wf1', embedder: new TestEmbedder() });
		const result = await racing.forget('alice');
		assert.equal(storage.raced, true);
		assert.equal(result.vectors, SEAL_AT + 8);
		assert.deepEqual(holding(root, SECRET), []);
		assert.equal((await base.status()).mismatch, false);
		assert.equal(
			(await base.search('favourite colour', { k: 100, allUsers: true })).length,
			FACTS.length,
		);
	});

	it('segments a killed writer left unlisted are swept once they are older than the lock duration', async () => {
		const { base, root, disk } = await twoUsers({ leaseMs: 200 });
		const orphans = [
			`${vectorIndexPrefix('wf1')}segments/0123456789abcdef01234567.vec`,
			`memory_base/wf1/lexical/segments/0123456789abcdef01234567.lex`,
			`${wideLexicalPrefix('wf1')}segments/0123456789abcdef01234568.lex`,
			`${wideLexicalPrefix('wf1')}segments/terms-0123456789abcdef01-0.trm`,
		];
		for (const o of orphans) await disk.put(o, Buffer.from(`a killed writer's ${SECRET}`));
		await new Promise((r) => setTimeout(r, 250));
		// A young orphan (a writer still about to list it) is kept, and so is a tier's bucket for an hour.
		const young = `memory_base/wf1/lexical/segments/0123456789abcdef01234569.lex`;
		await disk.put(young, Buffer.from('about to be listed'));
		const result = await base.forget('alice');
		for (const o of orphans.slice(0, 3))
			assert.ok(result.deleted.includes(o), `${o}: ${JSON.stringify(result.deleted)}`);
		assert.ok(await disk.get(young), 'the young segment is kept');
		assert.deepEqual(holding(root, SECRET), [orphans[3]]);
		assert.equal((await base.status()).mismatch, false);
	});

	it('a connected store: its chunks are deleted by ID; a store that cannot delete is an error that keeps the log', async () => {
		const store = new TestVectorStore();
		const { base } = setup({ vectorStore: store });
		for (const f of FACTS) await turn(base, 'alice', f);
		for (const f of FACTS) await turn(base, 'bob', f);
		assert.equal(store.memoryVectors.length, 8);
		assert.equal((await base.forget('alice')).vectors, 4);
		assert.deepEqual(
			[...new Set(store.memoryVectors.map((v) => v.metadata.session_id ?? v.metadata.sessionId))],
			['bob'],
		);
		// A store with neither delete() nor LangChain's in-memory list (append-only).
		const rigid: ExternalVectorStore = {
			rows: 0,
			async addVectors(vectors: number[][]) {
				(this as { rows: number }).rows += vectors.length;
			},
			async similaritySearchVectorWithScore() {
				return [];
			},
		} as ExternalVectorStore;
		const other = setup({ vectorStore: rigid });
		for (const f of FACTS) await turn(other.base, 'alice', f);
		await assert.rejects(other.base.forget('alice'), /cannot delete by ID/);
		assert.equal((await logOf(other.storage, 'alice')).cursor, 4, 'the log is kept');
	});
});

describe('Memory Base with an external vector store', () => {
	it('ingests into the store, searches it with the session filter, replaces re-ingested chunks', async () => {
		const store = new TestVectorStore();
		const { base, embedder, storage } = setup({ vectorStore: store, embeddingBatchSize: 2 });
		for (const f of FACTS) await turn(base, 'alice', f);
		for (const f of ['My favourite colour is orange', 'b', 'c', 'd']) await turn(base, 'bob', f);
		assert.equal(store.memoryVectors.length, 8);
		const mine = await base.search('favourite colour', { k: 1, sessionId: 'alice' });
		assert.equal(mine[0].text, FACTS[0]);
		const any = await base.search('favourite colour', { k: 2, allUsers: true });
		assert.deepEqual(any.map((m) => m.sessionId).sort(), ['alice', 'bob']);
		// A failure after the first batch, then a retry: no chunk is in the store twice.
		for (const f of ['e', 'f', 'g'])
			await base.capture(
				{ sessionId: 'alice', runId: f, texts: [`extra ${f}`] },
				{ autoCapture: false },
			);
		embedder.failAt.add(embedder.calls.length + 1);
		await assert.rejects(base.sync({ sessionId: 'alice' }));
		assert.equal((await logOf(storage, 'alice')).cursor, 4);
		await base.sync({ sessionId: 'alice' });
		const ids = store.memoryVectors.map((v) => v.id);
		assert.equal(new Set(ids).size, ids.length);
		assert.equal(ids.length, 11);
		// The store emptied behind the base's back: mismatch; Regenerate restores.
		store.memoryVectors = [];
		const status = await base.status();
		assert.equal(status.mismatch, true);
		assert.match(status.mismatchReason ?? '', /vector store holds none of this base/);
		await base.regenerate();
		assert.equal(store.memoryVectors.length, 11);
		assert.equal((await base.status()).mismatch, false);
		await base.delete();
		assert.equal(store.memoryVectors.length, 0, 'its vectors are deleted with it');
		assert.deepEqual(filesUnder((storage.inner as LocalDiskStorage).root, 'memory_base/wf1'), []);
	});
});

describe('Memory Base with a PGVector-like store (distances, metadata filters, delete by ID)', () => {
	/** A cosine to 6 decimals (Float32 rows in the embedded index, Float64 in the store). */
	const six = (x: number | undefined) => Number((x ?? NaN).toFixed(6)) + 0;
	const COLOURS = [
		'My favourite colour is orange',
		'I work as a baker',
		'I own a bike',
		'I like jazz',
	];
	/** Alice's and Bob's facts, each with a user ID, into `base`. */
	async function twoUsers(base: MemoryBase) {
		for (const f of FACTS)
			await base.capture({ sessionId: 'alice', userId: 'u-alice', runId: `a-${f}`, texts: [f] });
		for (const f of COLOURS)
			await base.capture({ sessionId: 'bob', userId: 'u-bob', runId: `b-${f}`, texts: [f] });
	}

	for (const strategy of ['cosine', 'innerProduct', 'euclidean'] as const)
		it(`${strategy}: the same ranking and similarities as the embedded index, per user too; unit vectors stored`, async () => {
			const store = new PgVectorLikeStore(strategy);
			const external = setup({ vectorStore: store });
			const embedded = setup();
			await twoUsers(external.base);
			await twoUsers(embedded.base);
			assert.equal(store.rows.size, 8);
			for (const r of store.rows.values())
				assert.ok(Math.abs(Math.hypot(...r.embedding) - 1) < 1e-9, 'handed over at unit length');
			const scopes = [{ allUsers: true as const }, { userId: 'u-bob' }, { sessionId: 'alice' }];
			for (const scope of scopes) {
				const want = await embedded.base.search('what is my favourite colour?', {
					k: 4,
					mode: 'vector',
					...scope,
				});
				const got = await external.base.search('what is my favourite colour?', {
					k: 4,
					mode: 'vector',
					...scope,
				});
				assert.ok(got.length > 0, JSON.stringify(scope));
				assert.deepEqual(
					got.map((m) => [m.text, six(m.similarity), m.userId]),
					want.map((m) => [m.text, six(m.similarity), m.userId]),
					JSON.stringify(scope),
				);
			}
			const bob = await external.base.search('favourite colour', { k: 8, userId: 'u-bob' });
			assert.equal(bob[0].text, COLOURS[0]);
			assert.ok(bob.every((m) => m.userId === 'u-bob' && m.sessionId === 'bob'));
		});

	it('a Qdrant store gets Qdrant’s own filter (must conditions on metadata keys) and finds what the embedded index finds', async () => {
		const store = new QdrantLikeStore();
		const external = setup({ vectorStore: store });
		const embedded = setup();
		await twoUsers(external.base);
		await twoUsers(embedded.base);
		for (const scope of [
			{ allUsers: true as const },
			{ userId: 'u-bob' },
			{ sessionId: 'alice' },
		]) {
			const query = 'what is my favourite colour?';
			const got = await external.base.search(query, { k: 4, mode: 'vector', ...scope });
			const want = await embedded.base.search(query, { k: 4, mode: 'vector', ...scope });
			assert.deepEqual(
				got.map((m) => [m.text, six(m.similarity)]),
				want.map((m) => [m.text, six(m.similarity)]),
			);
		}
		assert.deepEqual(store.filters.at(-1), {
			must: [
				{ key: 'metadata.memory_base_id', match: { value: 'wf1' } },
				{ key: 'metadata.session_id', match: { value: 'alice' } },
			],
		});
		assert.equal((await external.base.status()).mismatch, false);
		assert.equal((await external.base.forget('alice')).vectors, 4);
		assert.equal(store.points.size, 4);
	});

	it('rows of one conversation deleted behind the base’s back: Status and its search report the mismatch; Regenerate restores them', async () => {
		const store = new PgVectorLikeStore();
		const { base } = setup({ vectorStore: store });
		await twoUsers(base);
		for (const id of store.ofSession('alice')) store.rows.delete(id);
		const status = await base.status();
		assert.equal(status.mismatch, true);
		assert.match(status.mismatchReason ?? '', /"alice"/);
		assert.deepEqual(
			status.sessions.map((s) => [s.sessionId, s.mismatch]),
			[
				['alice', true],
				['bob', false],
			],
		);
		await assert.rejects(
			base.search('favourite colour', { sessionId: 'alice' }),
			(e: Error) =>
				e instanceof IndexMismatchError && /connected vector store holds none/.test(e.message),
		);
		assert.equal((await base.search('favourite colour', { sessionId: 'bob' }))[0].text, COLOURS[0]);
		await base.regenerate();
		assert.equal(store.ofSession('alice').length, 4);
		assert.equal(store.rows.size, 8);
		assert.equal((await base.status()).mismatch, false);
	});

	it('a base keeps its vectors where it first embedded them: the other place is refused until Regenerate moves them', async () => {
		const store = new PgVectorLikeStore();
		const { base, storage, embedder } = setup({ vectorStore: store });
		await twoUsers(base);
		// Long-Term Memory of LLM with Memory has no Vector Store input: with an embedding model it
		// would embed into the embedded index and split the base.
		const bare = new MemoryBase({ storage, baseId: 'wf1', embedder });
		const captured = await bare.capture(
			{ sessionId: 'carol', runId: 'c-1', texts: ['I sail'] },
			{ threshold: 1 },
		);
		assert.match(
			captured.syncError?.message ?? '',
			/keeps its vectors in a connected vector store/,
		);
		await assert.rejects(bare.sync({ sessionId: 'carol' }), /keeps its vectors in a connected/);
		await assert.rejects(
			bare.search('favourite colour', { sessionId: 'alice' }),
			/none is connected here/,
		);
		// Words only still work without the store.
		const words = await bare.search('favourite colour', { sessionId: 'alice', mode: 'lexical' });
		assert.equal(words[0].text, FACTS[0]);
		assert.equal(store.rows.size, 8, 'nothing was embedded elsewhere, nothing lost');
		assert.equal((await base.sync({ sessionId: 'carol' })).messages, 1);
		// Regenerate without the store moves the vectors into the embedded index.
		await bare.regenerate();
		assert.equal((await bare.status()).index?.vectors, 9);
		await assert.rejects(
			base.search('favourite colour', { sessionId: 'alice' }),
			/keeps its vectors in its embedded index/,
		);
	});

	it('Forget: a store whose delete fails is an error with its reason and nothing goes; Forget User deletes the rows with the store, refuses another store and none', async () => {
		const store = new PgVectorLikeStore();
		const { base, storage } = setup({ vectorStore: store });
		await twoUsers(base);
		store.failDelete = new Error('permission denied for table n8n_vectors');
		await assert.rejects(base.forget('alice'), /failed to delete: permission denied/);
		assert.equal(store.ofSession('alice').length, 4, 'the rows are kept');
		assert.equal((await logOf(storage, 'alice')).cursor, 4, 'the log is kept');
		store.failDelete = undefined;
		await assert.rejects(
			forgetUser(storage, { userId: 'u-alice' }),
			/keeps its vectors in a connected vector store.*Forget User/,
		);
		await assert.rejects(
			forgetUser(storage, { userId: 'u-alice' }, { vectorStore: new PgVectorLikeStore() }),
			/holds none of conversation "alice"/,
		);
		assert.equal(store.ofSession('alice').length, 4);
		const forgot = await forgetUser(storage, { userId: 'u-alice' }, { vectorStore: store });
		assert.deepEqual(forgot.conversationIds, ['alice']);
		assert.deepEqual(store.ofSession('alice'), []);
		assert.equal(store.ofSession('bob').length, 4, 'another user’s rows stay');
		assert.equal(await storage.get(captureLogKey('wf1', 'alice')), null);
	});
});

/** Every file under a folder (relative), for "nothing was written" and "nothing left" checks. */
function walk(root: string, dir = ''): string[] {
	const out: string[] = [];
	for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
		const rel = path.join(dir, e.name);
		if (e.isDirectory()) out.push(...walk(root, rel));
		else out.push(rel);
	}
	return out;
}

/** Files left under a folder of the storage root (deleting keys leaves empty folders on disk). */
function filesUnder(root: string, dir: string): string[] {
	return existsSync(path.join(root, dir)) ? walk(path.join(root, dir)) : [];
}

function snapshot(root: string): Record<string, string> {
	return Object.fromEntries(walk(root).map((f) => [f, readFileSync(path.join(root, f), 'base64')]));
}
