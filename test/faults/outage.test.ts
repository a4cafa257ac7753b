// Storage outage (issue 7): radosgw goes away in the middle of a conversation.
//   - stopped (connection refused): the turn's flush fails with an error naming the storage, a read
//     fails too (never an empty history), nothing partial is stored, and once radosgw is back on the
//     same data the next turn succeeds with every earlier turn intact;
//   - hung (SIGSTOP: connections are accepted, nothing answers): the flush gives up after the request
//     timeout instead of hanging, and when radosgw answers again the turn is stored at most once.
// This file starts its OWN Ceph cluster (scripts/rgw.sh up) and stops only its radosgw
// (scripts/rgw.sh stop-rgw / start-rgw; the mon and the memstore OSD keep the data), so the shared
// radosgw of scripts/test.sh is never disturbed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
	conversationMemoryKey,
	S3Storage,
	StorageError,
	TokenBufferMemory,
} from '../../src/internal';
import { assertTurnsOnce, idCounts, sleep, storedDocument, turnIds } from '../support/faults';
import { bucketStorage } from '../support/rgw';
import { tempDir } from '../support/storages';

const SCRIPT = path.resolve(__dirname, '../../scripts/rgw.sh');
/** Short, so a hung server costs seconds; the SDK still makes its 3 attempts. */
const REQUEST_TIMEOUT_MS = 1000;
/** How long a flush against a frozen radosgw may take: 3 attempts of REQUEST_TIMEOUT_MS plus backoff, with room. */
const HUNG_LIMIT_MS = 20_000;

let dir: string;
let endpoint: string;
const rgw = (cmd: 'up' | 'down' | 'stop-rgw' | 'start-rgw') =>
	execFileSync('bash', [SCRIPT, cmd, dir], {
		env: { ...process.env, RGW_LIFETIME_SECONDS: '900' },
		stdio: ['ignore', 'pipe', 'ignore'],
	})
		.toString()
		.trim();

/** The radosgw process itself (rgw.pid names the `timeout` wrapper that leads its process group). */
function radosgwPid(): number {
	const group = readFileSync(path.join(dir, 'rgw.pid'), 'utf8').trim();
	return Number(
		execFileSync('pgrep', ['-g', group, '-x', 'radosgw']).toString().trim().split('\n')[0],
	);
}

const outageStorage = (bucket: string) =>
	bucketStorage(endpoint, bucket, { requestTimeoutMs: REQUEST_TIMEOUT_MS });

/** One complete turn, as one n8n execution: fresh memory object, read, append, flush. */
async function turn(storage: S3Storage, conversationId: string, id: string): Promise<void> {
	const m = new TokenBufferMemory('wf', conversationId, { storage });
	await m.getHistoryPromptMessages();
	await m.addMessages({
		messageId: id,
		userContent: `question ${id}`,
		assistantContent: `answer ${id}`,
	});
	assert.equal((await m.flush()).written, true);
}

/** Retries a read until radosgw answers again (it may take a moment after SIGCONT or a restart). */
async function whenBack<T>(read: () => Promise<T>): Promise<T> {
	const deadline = Date.now() + 60_000;
	for (;;) {
		try {
			return await read();
		} catch (error) {
			if (Date.now() > deadline) throw error;
			await sleep(250);
		}
	}
}

const isStorageErrorNaming = (storage: S3Storage, key: string) => (e: unknown) => {
	assert.ok(e instanceof StorageError, `a StorageError, got ${String(e)}`);
	assert.ok(
		e.message.includes(storage.describe()),
		`names the storage ${storage.describe()}: ${e.message}`,
	);
	assert.ok(e.message.includes(key), `names the key ${key}: ${e.message}`);
	return true;
};

describe('storage outage: radosgw stops mid-conversation', () => {
	before(() => {
		dir = tempDir('rgw-outage');
		endpoint = rgw('up');
	});
	after(() => {
		rgw('down');
		rmSync(dir, { recursive: true, force: true });
	});

	it('stopped: the turn fails naming the storage, nothing partial is written, the next turn succeeds once it is back', async () => {
		const s3 = await outageStorage('outage-stop');
		const key = conversationMemoryKey('wf', 'outage');
		await turn(s3, 'outage', 't1');
		await turn(s3, 'outage', 't2');
		const stored = Buffer.from((await s3.get(key))!.body);

		// The next execution reads its history and calls the model; then storage goes away.
		const m = new TokenBufferMemory('wf', 'outage', { storage: s3 });
		assert.equal((await m.getHistoryPromptMessages()).turns, 2);
		rgw('stop-rgw');
		try {
			await m.addMessages({
				messageId: 't3',
				userContent: 'question t3',
				assistantContent: 'answer t3',
			});
			const t0 = Date.now();
			await assert.rejects(m.flush(), isStorageErrorNaming(s3, key));
			assert.ok(Date.now() - t0 < 15_000, `the failure took ${Date.now() - t0} ms`);
			// Unreadable is never empty: a read during the outage is an error too, not a blank history.
			await assert.rejects(
				new TokenBufferMemory('wf', 'outage', { storage: s3 }).getHistoryPromptMessages(),
				isStorageErrorNaming(s3, key),
			);
		} finally {
			rgw('start-rgw');
		}

		// Same data: the document is exactly what it was before the failed turn.
		const back = await whenBack(() => s3.get(key));
		assert.deepEqual(Buffer.from(back!.body), stored, 'nothing of the failed turn was written');

		// The next turn succeeds, on top of every earlier turn.
		await turn(s3, 'outage', 't4');
		let doc = (await storedDocument(s3, key))!;
		assert.deepEqual(turnIds(doc), ['t1', 't2', 't4']);
		assertTurnsOnce(doc, ['t1', 't2', 't4']);

		// The failed turn was kept pending: flushing it again now stores it, once.
		assert.equal((await m.flush()).written, true);
		doc = (await storedDocument(s3, key))!;
		assert.deepEqual(turnIds(doc), ['t1', 't2', 't4', 't3']);
		assertTurnsOnce(doc, ['t1', 't2', 't3', 't4']);
	});

	it('hung (SIGSTOP): the flush gives up after the request timeout; afterwards the turn is stored at most once', async () => {
		const s3 = await outageStorage('outage-hung');
		const key = conversationMemoryKey('wf', 'hung');
		await turn(s3, 'hung', 'h1');
		const m = new TokenBufferMemory('wf', 'hung', { storage: s3 });
		await m.getHistoryPromptMessages();
		await m.addMessages({
			messageId: 'h2',
			userContent: 'question h2',
			assistantContent: 'answer h2',
		});

		// Without a working request timeout the flush would hang as long as the server does; give it
		// HUNG_LIMIT_MS, then thaw radosgw so the test ends either way.
		const pid = radosgwPid();
		process.kill(pid, 'SIGSTOP');
		const t0 = Date.now();
		const flushing = m.flush().then(
			() => 'resolved' as const,
			(e: unknown) => e,
		);
		let outcome: unknown;
		let ms: number;
		try {
			outcome = await Promise.race([
				flushing,
				sleep(HUNG_LIMIT_MS).then(() => 'still pending' as const),
			]);
			ms = Date.now() - t0;
		} finally {
			process.kill(pid, 'SIGCONT');
			await flushing;
		}
		assert.notEqual(
			outcome,
			'still pending',
			`flush() still pending after ${HUNG_LIMIT_MS} ms against a hung server: requestTimeoutMs ${REQUEST_TIMEOUT_MS} did not fire`,
		);
		assert.notEqual(outcome, 'resolved', 'flush() cannot have succeeded against a frozen server');
		isStorageErrorNaming(s3, key)(outcome);
		assert.ok(ms >= REQUEST_TIMEOUT_MS, `gave up after ${ms} ms, before the request timeout`);

		// radosgw may still carry out a PUT it had received before it froze (the client could not know):
		// the document is whole either way, with h2 absent or complete, never torn or doubled.
		const settled = (await whenBack(() => storedDocument(s3, key)))!;
		assert.ok([0, 1].includes(idCounts(settled).get('h2') ?? 0));
		assertTurnsOnce(settled, ['h1']);

		// Retrying the flush stores h2 exactly once, whatever the frozen PUT did.
		await m.flush();
		const doc = (await storedDocument(s3, key))!;
		assert.deepEqual(turnIds(doc), ['h1', 'h2']);
		assertTurnsOnce(doc, ['h1', 'h2']);
	});
});
