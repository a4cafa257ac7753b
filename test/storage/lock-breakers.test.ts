// Breaking a dead holder's lock while other waiters race for it: at most one holder at any time.
// The interleaving is forced by pausing the breaker's rename of the lock (fs.promises, as the lock
// module calls it) and, where the lock is put back, letting a third waiter in first.
import assert from 'node:assert/strict';
import { promises as fsp, mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';

import { acquireFileLock } from '../../src/store/file-lock';
import { tempDir } from '../support/storages';

const OPTIONS = { timeoutMs: 5000, foreignStaleMs: 60_000 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const realRename = fsp.rename;
const realLink = fsp.link;
after(() => {
	fsp.rename = realRename;
	fsp.link = realLink;
});

describe('lock breakers', () => {
	it('two waiters breaking one dead lock never leave two holders', async () => {
		const dir = path.join(tempDir(), 'locks');
		mkdirSync(dir, { recursive: true });
		const lockPath = path.join(dir, 'doc.json.lock');
		// An earlier life of this process's PID left it: abandoned (its nonce is not held).
		writeFileSync(lockPath, JSON.stringify({ pid: process.pid, host: hostname(), nonce: 'gone' }));

		let holders = 0;
		let most = 0;
		const order: string[] = [];
		const hold = async (name: string, ms: number) => {
			const release = await acquireFileLock(lockPath, name, OPTIONS);
			most = Math.max(most, ++holders);
			order.push(name);
			await sleep(ms);
			holders--;
			await release();
		};

		// The first rename of a lock aside waits until the second waiter had its chance.
		let arrived!: () => void;
		const atRename = new Promise<void>((r) => (arrived = r));
		let open!: () => void;
		const gate = new Promise<void>((r) => (open = r));
		let paused = false;
		fsp.rename = (async (
			from: Parameters<typeof realRename>[0],
			to: Parameters<typeof realRename>[1],
		) => {
			if (!paused && String(from) === lockPath) {
				paused = true;
				arrived();
				await gate;
			}
			return realRename(from, to);
		}) as typeof fsp.rename;
		// Putting a lock back: a third waiter takes the path first, if it can.
		let third: Promise<void> | undefined;
		fsp.link = (async (
			from: Parameters<typeof realLink>[0],
			to: Parameters<typeof realLink>[1],
		) => {
			if (String(from).includes('.stale-') && String(to) === lockPath && !third) {
				third = hold('third', 100);
				await sleep(100);
			}
			return realLink(from, to);
		}) as typeof fsp.link;

		const first = hold('first', 100);
		await atRename;
		const second = hold('second', 300);
		await sleep(200);
		open();
		await Promise.all([first, second]);
		await third;
		assert.equal(
			most,
			1,
			`holders at once: ${most} (in the order they took it: ${order.join(', ')})`,
		);
		assert.ok(order.includes('first') && order.includes('second'), order.join(', '));
	});
});
