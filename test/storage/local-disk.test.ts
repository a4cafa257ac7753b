import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
	existsSync,
	promises as fsPromises,
	mkdirSync,
	readdirSync,
	unlinkSync,
	utimesSync,
	writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { forEachListed, LocalDiskStorage, sortFolders, StorageError } from '../../src/internal';
import { tempDir } from '../support/storages';

const KEY = 'node_memory/wf/conv/node.json';

function lockFor(root: string, content: object | string, ageSeconds = 0): string {
	const file = path.join(root, ...KEY.split('/'));
	mkdirSync(path.dirname(file), { recursive: true });
	const lock = `${file}.lock`;
	writeFileSync(lock, typeof content === 'string' ? content : JSON.stringify(content));
	if (ageSeconds) utimesSync(lock, Date.now() / 1000 - ageSeconds, Date.now() / 1000 - ageSeconds);
	return lock;
}

async function deadPid(): Promise<number> {
	const child = spawn(process.execPath, ['-e', '0']);
	await new Promise((r) => child.on('exit', r));
	return child.pid as number;
}

describe('LocalDiskStorage locks and files', () => {
	it('breaks a lock left by a crashed process on this host', async () => {
		const root = tempDir();
		const lock = lockFor(root, { pid: await deadPid(), host: hostname(), nonce: 'x' });
		const s = new LocalDiskStorage({ root, lockTimeoutMs: 2000 });
		const t = Date.now();
		await s.put(KEY, Buffer.from('ok'));
		assert.ok(Date.now() - t < 1000, 'no waiting for a dead holder');
		assert.equal(existsSync(lock), false);
	});

	it('waits for a live holder and then fails clearly', async () => {
		const root = tempDir();
		const holder = spawn('sleep', ['30']);
		try {
			lockFor(root, { pid: holder.pid, host: hostname(), nonce: 'x' });
			const s = new LocalDiskStorage({ root, lockTimeoutMs: 300 });
			await assert.rejects(s.put(KEY, Buffer.from('x')), (e: unknown) => {
				assert.ok(e instanceof StorageError);
				assert.match(
					e.message,
					new RegExp(
						`Timed out after 300 ms waiting for the lock on "${KEY}" \\(held by process ${holder.pid}`,
					),
				);
				return true;
			});
			assert.equal(await s.get(KEY), null);
		} finally {
			holder.kill('SIGKILL');
		}
	});

	it('proceeds as soon as a live holder releases', async () => {
		const root = tempDir();
		const lock = lockFor(root, { pid: process.ppid, host: hostname(), nonce: 'x' });
		const s = new LocalDiskStorage({ root, lockTimeoutMs: 5000 });
		setTimeout(() => unlinkSync(lock), 200);
		const t = Date.now();
		await s.put(KEY, Buffer.from('after release'));
		assert.ok(Date.now() - t >= 150);
	});

	it('a foreign host’s lock counts as abandoned only after foreignStaleLockMs', async () => {
		const fresh = tempDir();
		lockFor(fresh, { pid: 1, host: 'other-host', nonce: 'x' });
		await assert.rejects(
			new LocalDiskStorage({ root: fresh, lockTimeoutMs: 200 }).put(KEY, Buffer.from('x')),
			/held by process 1 on other-host/,
		);
		const old = tempDir();
		lockFor(old, { pid: 1, host: 'other-host', nonce: 'x' }, 120);
		await new LocalDiskStorage({ root: old, lockTimeoutMs: 200, foreignStaleLockMs: 60_000 }).put(
			KEY,
			Buffer.from('x'),
		);
	});

	it('an unreadable lock (writer died mid-write) is broken once it is old', async () => {
		const root = tempDir();
		lockFor(root, '{"pid":', 10);
		await new LocalDiskStorage({ root, lockTimeoutMs: 500 }).put(KEY, Buffer.from('x'));
		const young = tempDir();
		lockFor(young, '');
		await assert.rejects(
			new LocalDiskStorage({ root: young, lockTimeoutMs: 200 }).put(KEY, Buffer.from('x')),
			/Timed out/,
		);
	});

	it('leaves no temp or lock files behind and hides them from list()', async () => {
		const root = tempDir();
		const s = new LocalDiskStorage({ root });
		await Promise.all(Array.from({ length: 20 }, (_, i) => s.put(KEY, Buffer.from(`w${i}`))));
		const dir = path.join(root, 'node_memory/wf/conv');
		assert.deepEqual(readdirSync(dir), ['node.json']);
		writeFileSync(path.join(dir, '.node.json.123.abc.tmp'), 'partial');
		writeFileSync(path.join(dir, 'node.json.lock'), '{}');
		// Breakers' turns (file-lock.ts), and what one killed while taking or clearing a turn leaves.
		for (const name of [
			'node.json.lock.break',
			'node.json.lock.break.new-0a1b',
			'node.json.lock.break.stale-1f-2e',
		])
			writeFileSync(path.join(dir, name), '{}');
		assert.deepEqual(
			(await s.list('node_memory/')).map((o) => o.key),
			[KEY],
		);
		// Nor are they among the keys listed alone, nor among the pages in any order.
		const keys: string[] = [];
		for await (const page of s.listKeys('node_memory/')) keys.push(...page);
		assert.deepEqual(keys, [KEY]);
		const loose: string[] = [];
		await forEachListed(s, 'node_memory/', (o) => void loose.push(o.key), { anyOrder: true });
		assert.deepEqual(loose, [KEY]);
		// Housekeeping removes them once old, and nothing else.
		const old = Date.now() / 1000 - 3600;
		for (const name of readdirSync(dir)) utimesSync(path.join(dir, name), old, old);
		const swept = await s.sweep('node_memory/', 60_000);
		assert.equal(swept.length, 4, swept.join(', '));
		assert.deepEqual(readdirSync(dir).sort(), ['node.json', 'node.json.lock']);
	});

	it('refuses keys that collide with its reserved file names', async () => {
		const s = new LocalDiskStorage({ root: tempDir() });
		await assert.rejects(s.put('a/b.lock', Buffer.from('x')), /reserved suffix/);
		await assert.rejects(s.put('a/b.tmp', Buffer.from('x')), /reserved suffix/);
		await assert.rejects(s.put('a/b.lock.break', Buffer.from('x')), /reserved suffix/);
	});

	it('a read error is a StorageError, never "missing"', async () => {
		const root = tempDir();
		const file = path.join(root, ...KEY.split('/'));
		mkdirSync(file, { recursive: true }); // a folder where the document should be
		await assert.rejects(
			new LocalDiskStorage({ root }).get(KEY),
			(e: unknown) => e instanceof StorageError && /EISDIR/.test((e as Error).message),
		);
	});
});

describe('LocalDiskStorage folders of many conversations', () => {
	/** Folders read whole (fs.promises.readdir) while `run` runs, by path. */
	async function readWhole(run: () => Promise<unknown>): Promise<string[]> {
		const read: string[] = [];
		const original = fsPromises.readdir;
		// The storage reads through the same promises object: a whole read of a folder passes here.
		fsPromises.readdir = ((dir: string, ...rest: unknown[]) => {
			read.push(String(dir));
			return (original as (...a: unknown[]) => unknown)(dir, ...rest);
		}) as typeof fsPromises.readdir;
		try {
			await run();
		} finally {
			fsPromises.readdir = original;
		}
		return read;
	}

	it('a page of folders reads the folder as it goes, never whole, and pages match the whole listing', async () => {
		const root = tempDir();
		const s = new LocalDiskStorage({ root });
		const names = Array.from({ length: 3000 }, (_, i) => `c-${(i * 7919) % 3000}`);
		for (const n of names) mkdirSync(path.join(root, 'base', 'sessions', n), { recursive: true });
		for (const n of names)
			if (!n.endsWith('7')) writeFileSync(path.join(root, 'base', 'sessions', n, 'log.json'), '{}');
		// Folders holding no object (a capture that stopped before its write) are passed over.
		const held = sortFolders(names.filter((n) => !n.endsWith('7')));
		const whole = await s.listFolders('base/sessions/');
		assert.deepEqual(whole, held);
		const big = path.join(root, 'base', 'sessions');
		for (const limit of [1, 7, 100, 1001]) {
			const seen: string[] = [];
			const read = await readWhole(async () => {
				let after: string | undefined;
				for (;;) {
					const page = await s.listFolders('base/sessions/', { after, limit });
					assert.ok(page.length <= limit);
					seen.push(...page);
					if (page.length < limit) break;
					after = page[page.length - 1];
				}
			});
			assert.deepEqual(seen, held, `pages of ${limit}`);
			assert.ok(!read.includes(big), `pages of ${limit} read the folder of conversations whole`);
		}
		// A page after a name that is not a folder, and after the last.
		assert.deepEqual(
			await s.listFolders('base/sessions/', { after: 'c-1', limit: 2 }),
			held.slice(held.indexOf('c-10'), held.indexOf('c-10') + 2),
		);
		assert.deepEqual(await s.listFolders('base/sessions/', { after: held.at(-1), limit: 5 }), []);
	});

	it('pages of folders while another writer adds and deletes conversations: every one there throughout comes once, in order', async () => {
		const root = tempDir();
		const s = new LocalDiskStorage({ root });
		const kept = Array.from({ length: 400 }, (_, i) => `k-${i}`);
		for (const n of kept) await s.put(`b/sessions/${n}/log.json`, Buffer.from('{}'));
		let i = 0;
		let writing = true;
		// Another writer: a new conversation and the removal of the one before, over and over.
		const writer = (async () => {
			for (; writing; i++) {
				await s.put(`b/sessions/new-${i}/log.json`, Buffer.from('{}'));
				if (i > 0) await s.delete(`b/sessions/new-${i - 1}/log.json`);
			}
		})();
		const seen: string[] = [];
		try {
			for (let after: string | undefined, round = 0; round < 3; round++, after = undefined)
				for (;;) {
					const page = await s.listFolders('b/sessions/', { after, limit: 37 });
					seen.push(...page.filter((n) => n.startsWith('k-')));
					if (page.length < 37) break;
					after = page[page.length - 1];
				}
		} finally {
			writing = false;
			await writer;
		}
		assert.ok(i > 3, `the other writer wrote ${i} times meanwhile`);
		assert.deepEqual(seen, [...sortFolders(kept), ...sortFolders(kept), ...sortFolders(kept)]);
	});

	it('the keys of a folder of conversations, in no order, read it as they go', async () => {
		const root = tempDir();
		const s = new LocalDiskStorage({ root });
		for (let i = 0; i < 500; i++) {
			mkdirSync(path.join(root, 'b', 'sessions', `c-${i}`), { recursive: true });
			writeFileSync(path.join(root, 'b', 'sessions', `c-${i}`, 'log.json'), '{}');
		}
		const keys: string[] = [];
		const read = await readWhole(async () => {
			for await (const page of s.listKeys('b/sessions/')) keys.push(...page);
		});
		assert.equal(keys.length, 500);
		assert.equal(new Set(keys).size, 500);
		assert.ok(!read.includes(path.join(root, 'b', 'sessions')));
		// Each conversation's own folder is small: read whole.
		assert.equal(read.length, 500);
	});
});
