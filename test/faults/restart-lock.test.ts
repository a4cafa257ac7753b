// Restart with the same PID (issue 7, defect 1). In Docker or Kubernetes n8n usually comes back with the
// same PID and hostname, so a lock file left by the killed container names a process that is alive again.
// Such a lock is from an earlier life: the next write must break it at once, not wait for it.
// The lock files are written here as an earlier life would have left them, in the older format
// {pid, host, nonce} and in the newer one that adds the boot ID and the holder's start time; their mtime
// is an hour ago, before this process (or the other live process they name) started.
// The control at the end keeps the other half honest: a lock really held by a live writer is respected.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import {
	existsSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	utimesSync,
	writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';

import {
	conversationMemoryKey,
	LocalDiskStorage,
	StorageError,
	TokenBufferMemory,
} from '../../src/internal';
import { freezeMidWrite, killWriter, startWriter, storedDocument } from '../support/faults';
import { tempDir } from '../support/storages';

const KEY = conversationMemoryKey('wf', 'restart');
const BOOT_ID = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
/** Long enough that a wrongly respected lock fails the test clearly, short enough to fail fast. */
const LOCK_TIMEOUT_MS = 3000;

type LockForm =
	'older format {pid, host, nonce}' | 'newer format with bootId and a startTime of another life';

/** Writes the lock an earlier life of `pid` would have left on KEY, dated an hour ago. */
function leaveEarlierLifeLock(root: string, pid: number, form: LockForm): string {
	const lock = path.join(root, ...KEY.split('/')) + '.lock';
	mkdirSync(path.dirname(lock), { recursive: true });
	const holder = { pid, host: hostname(), nonce: 'nonce-of-an-earlier-life' };
	writeFileSync(
		lock,
		JSON.stringify(
			form.startsWith('older') ? holder : { ...holder, bootId: BOOT_ID, startTime: 1 },
		),
	);
	const anHourAgo = Date.now() / 1000 - 3600;
	utimesSync(lock, anHourAgo, anHourAgo);
	return lock;
}

/** One turn written normally, so there is a document to append to, as in a conversation under way. */
async function conversationUnderWay(root: string) {
	const m = new TokenBufferMemory('wf', 'restart', { storage: new LocalDiskStorage({ root }) });
	await m.addMessages({
		messageId: 'before-restart',
		userContent: 'hello',
		assistantContent: 'hi',
	});
	await m.flush();
}

/** The next turn after the restart: how long its flush takes; it must be stored. */
async function nextTurn(root: string): Promise<number> {
	const storage = new LocalDiskStorage({ root, lockTimeoutMs: LOCK_TIMEOUT_MS });
	const m = new TokenBufferMemory('wf', 'restart', { storage });
	await m.getHistoryPromptMessages();
	await m.addMessages({
		messageId: 'after-restart',
		userContent: 'still there?',
		assistantContent: 'yes',
	});
	const t0 = performance.now();
	assert.equal((await m.flush()).written, true);
	const ms = performance.now() - t0;
	const doc = (await storedDocument(storage, KEY))!;
	assert.deepEqual(
		doc.messages.map((x) => x.message_id),
		['before-restart:user', 'before-restart', 'after-restart:user', 'after-restart'],
	);
	return ms;
}

const children: ChildProcess[] = [];
afterEach(() => {
	for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** A live process started now, i.e. after the lock it is named in was written. */
function liveProcess(): number {
	const child = spawn('sleep', ['30'], { stdio: 'ignore' });
	children.push(child);
	return child.pid as number;
}

describe('restart with the same PID: a lock from an earlier life does not block', () => {
	for (const form of [
		'older format {pid, host, nonce}',
		'newer format with bootId and a startTime of another life',
	] as const) {
		it(`names this very process (pid ${process.pid}), ${form}`, async () => {
			const root = tempDir();
			await conversationUnderWay(root);
			const lock = leaveEarlierLifeLock(root, process.pid, form);
			const ms = await nextTurn(root);
			assert.ok(
				ms < 1000,
				`the write took ${ms.toFixed(0)} ms: the earlier life's lock was respected`,
			);
			assert.equal(existsSync(lock), false, 'the stale lock is gone');
		});

		it(`names another live process that started after the lock was written, ${form}`, async () => {
			const root = tempDir();
			await conversationUnderWay(root);
			const pid = liveProcess();
			const lock = leaveEarlierLifeLock(root, pid, form);
			const ms = await nextTurn(root);
			assert.ok(
				ms < 1000,
				`the write took ${ms.toFixed(0)} ms: a recycled PID's lock was respected`,
			);
			assert.equal(existsSync(lock), false, 'the stale lock is gone');
		});
	}

	it('control: a lock held right now by a live writer (stopped mid-flush) is respected until it dies', async () => {
		const root = tempDir();
		await conversationUnderWay(root);
		const dir = path.dirname(path.join(root, ...KEY.split('/')));
		const w = startWriter({
			backend: 'disk',
			root,
			conversationId: 'restart',
			tag: 'holder',
			bigBytes: 1_000_000,
		});
		children.push(w.child);
		await w.ready;
		// Freeze the writer while its temp file exists: it is inside put(), holding the lock.
		const frozen = await freezeMidWrite(w.child, dir);
		assert.ok(frozen, 'caught the writer holding the lock');
		assert.ok(readdirSync(dir).includes('restart.json.lock'));

		const storage = new LocalDiskStorage({ root, lockTimeoutMs: 300 });
		// As the frozen writer left it: on a busy machine it may have stored a turn of its own before
		// it was caught inside a later write.
		const before = readFileSync(path.join(root, ...KEY.split('/')));
		assert.ok((await storedDocument(storage, KEY))!.messages.length >= 2);
		await assert.rejects(
			storage.put(KEY, Buffer.from('{}')),
			(e: unknown) => e instanceof StorageError && /Timed out/.test((e as Error).message),
		);
		assert.deepEqual(
			readFileSync(path.join(root, ...KEY.split('/'))),
			before,
			'nothing written past the live lock',
		);

		await killWriter(w); // now the holder is dead: its lock must not block
		const ms = await nextTurn(root);
		assert.ok(ms < 1000, `the write after the holder died took ${ms.toFixed(0)} ms`);
	});
});
