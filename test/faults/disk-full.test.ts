// Disk full and read-only folder (issue 7), on local disk. Each case: a turn fails with a clear error (a
// StorageError naming the key and the errno code), the previous document is byte-identical, no temporary
// or lock file is left behind, and once space is freed (or the folder writable again) the turn goes through
// at once.
//
// The memory folder is a real file system: a 2 MiB tmpfs mounted for each test, filled with a filler file,
// and remounted read-only (chmod would not do: these tests run as root, which ignores permissions).
// Where mounting is not permitted (an unprivileged container), the same cases run on a plain folder with
// the errors injected into node:fs (ENOSPC on writes over the space left, EROFS on every change); the test
// names say which. FAULTS_NO_MOUNT=1 forces the injected variant.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fsSync from 'node:fs';
import {
	closeSync,
	openSync,
	readFileSync,
	rmSync,
	statSync,
	truncateSync,
	unlinkSync,
	writeSync,
} from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';

import {
	conversationMemoryKey,
	decodeDocument,
	LocalDiskStorage,
	StorageError,
	TokenBufferMemory,
} from '../../src/internal';
import { turnIds, walkTree } from '../support/faults';
import { tempDir } from '../support/storages';

const KEY = conversationMemoryKey('wf', 'full');
const SIZE = 2 * 1024 * 1024;

/** A small memory folder that can be filled up and made read-only. */
interface SmallDisk {
	readonly root: string;
	/** Leaves only `bytes` free. */
	fill(bytes: number): void;
	free(): void;
	readOnly(on: boolean): void;
	close(): void;
}

const errnoError = (code: 'ENOSPC' | 'EROFS', syscall: string, file?: string) =>
	Object.assign(
		new Error(
			`${code}: ${code === 'ENOSPC' ? 'no space left on device' : 'read-only file system'}, ${syscall}${file ? ` '${file}'` : ''}`,
		),
		{
			code,
			errno: code === 'ENOSPC' ? -28 : -30,
			syscall,
			...(file ? { path: file } : {}),
		},
	);

/** A 2 MiB tmpfs: filled with a real filler file, remounted read-only. */
class TmpfsDisk implements SmallDisk {
	readonly root = tempDir('small-disk');
	private readonly filler = path.join(this.root, 'filler');
	constructor() {
		execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${SIZE}`, 'tmpfs', this.root], {
			stdio: 'pipe',
		});
	}
	fill(bytes: number) {
		const fd = openSync(this.filler, 'w');
		const chunk = Buffer.alloc(64 * 1024);
		try {
			for (;;) writeSync(fd, chunk);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
		} finally {
			closeSync(fd);
		}
		if (bytes > 0) truncateSync(this.filler, Math.max(0, statSync(this.filler).size - bytes));
	}
	free() {
		unlinkSync(this.filler);
	}
	readOnly(on: boolean) {
		execFileSync('mount', ['-o', `remount,${on ? 'ro' : 'rw'}`, this.root], { stdio: 'pipe' });
	}
	close() {
		try {
			execFileSync('umount', [this.root], { stdio: 'pipe' });
		} catch {
			execFileSync('umount', ['-l', this.root], { stdio: 'pipe' });
		}
		rmSync(this.root, { recursive: true, force: true });
	}
}

/**
 * Fallback where mounting is not permitted: a plain folder, with node:fs (which LocalDiskStorage uses)
 * patched so that writes under it fail as a full or read-only file system would.
 */
class InjectedDisk implements SmallDisk {
	readonly root = tempDir('small-disk');
	private spaceLeft = Infinity;
	private ro = false;
	private readonly saved = new Map<string, unknown>();
	constructor() {
		const fsp = fsSync.promises as unknown as Record<string, (...args: any[]) => Promise<any>>;
		const under = (p: unknown) =>
			typeof p === 'string' && path.resolve(p).startsWith(this.root + path.sep);
		const patch = (
			name: string,
			wrap: (real: (...args: any[]) => Promise<any>) => (...args: any[]) => Promise<any>,
		) => {
			this.saved.set(name, fsp[name]);
			fsp[name] = wrap(fsp[name]);
		};
		for (const name of [
			'mkdir',
			'rename',
			'unlink',
			'link',
			'utimes',
			'writeFile',
			'copyFile',
			'symlink',
		])
			patch(name, (real) => async (...args) => {
				if (under(args[0]) && this.ro) throw errnoError('EROFS', name, args[0]);
				if (under(args[0]) && name === 'writeFile' && Buffer.byteLength(args[1]) > this.spaceLeft)
					throw errnoError('ENOSPC', 'write');
				return real(...args);
			});
		patch('open', (real) => async (file, flags = 'r', ...rest) => {
			const writing =
				typeof flags === 'string' ? /[wax+]/.test(flags) : flags !== fsSync.constants.O_RDONLY;
			if (!under(file) || !writing) return real(file, flags, ...rest);
			if (this.ro) throw errnoError('EROFS', 'open', file);
			const handle = await real(file, flags, ...rest);
			const realWriteFile = handle.writeFile.bind(handle);
			handle.writeFile = async (data: string | Uint8Array, ...more: unknown[]) => {
				if (Buffer.byteLength(data) > this.spaceLeft) throw errnoError('ENOSPC', 'write');
				return realWriteFile(data, ...more);
			};
			return handle;
		});
	}
	fill(bytes: number) {
		this.spaceLeft = bytes;
	}
	free() {
		this.spaceLeft = Infinity;
	}
	readOnly(on: boolean) {
		this.ro = on;
	}
	close() {
		const fsp = fsSync.promises as unknown as Record<string, unknown>;
		for (const [name, real] of this.saved) fsp[name] = real;
		rmSync(this.root, { recursive: true, force: true });
	}
}

/** Whether this machine lets us mount a tmpfs (root in a privileged enough container). */
function canMount(): boolean {
	if (process.env.FAULTS_NO_MOUNT === '1') return false;
	try {
		new TmpfsDisk().close();
		return true;
	} catch {
		return false;
	}
}

const MOUNT = canMount();
const HOW = MOUNT ? 'tmpfs' : 'injected errors: mounting is not permitted here';

/** Temporary, lock and broken-lock files anywhere under the root. */
const leftovers = (root: string) =>
	walkTree(root).filter((f) => /\.tmp$|\.lock$|\.lock\.stale-/.test(f));

describe(`disk full and read-only memory folder (${HOW})`, () => {
	let disk: SmallDisk;
	let storage: LocalDiskStorage;
	let stored: Buffer;
	const file = () => path.join(disk.root, ...KEY.split('/'));

	beforeEach(async () => {
		disk = MOUNT ? new TmpfsDisk() : new InjectedDisk();
		storage = new LocalDiskStorage({ root: disk.root, lockTimeoutMs: 3000 });
		const m = new TokenBufferMemory('wf', 'full', { storage });
		await m.addMessages({
			messageId: 't1',
			userContent: 'question 1',
			assistantContent: 'answer 1',
		});
		await m.flush();
		stored = readFileSync(file());
	});
	afterEach(() => disk.close());

	/** The next turn, read before the fault: its memory object keeps the turn pending when the flush fails. */
	async function nextTurn(answerBytes: number) {
		const m = new TokenBufferMemory('wf', 'full', { storage });
		await m.getHistoryPromptMessages();
		await m.addMessages({
			messageId: 't2',
			userContent: 'question 2',
			assistantContent: 'a'.repeat(answerBytes),
		});
		return m;
	}

	const failsWith = (code: string) => (e: unknown) => {
		assert.ok(e instanceof StorageError, `a StorageError, got ${String(e)}`);
		assert.equal(e.key, KEY);
		assert.ok(e.message.includes(KEY), `names the key: ${e.message}`);
		assert.ok(e.message.includes(code), `names ${code}: ${e.message}`);
		return true;
	};

	/** The previous document is untouched, nothing is left behind, and the retried turn goes through at once. */
	async function assertIntactThenRecovers(m: TokenBufferMemory, recover: () => void) {
		assert.deepEqual(readFileSync(file()), stored, 'the previous document is byte-identical');
		assert.deepEqual(leftovers(disk.root), [], 'no temporary or lock file left');
		recover();
		const t0 = performance.now();
		assert.equal((await m.flush()).written, true);
		const ms = performance.now() - t0;
		assert.ok(ms < 1000, `the retried turn took ${ms.toFixed(0)} ms`);
		assert.deepEqual(turnIds(decodeDocument(KEY, readFileSync(file()))), ['t1', 't2']);
		assert.deepEqual(leftovers(disk.root), []);
	}

	it('full while the document is written (the lock still fits): ENOSPC', async () => {
		const m = await nextTurn(256 * 1024);
		disk.fill(16 * 1024);
		await assert.rejects(m.flush(), failsWith('ENOSPC'));
		await assertIntactThenRecovers(m, () => disk.free());
	});

	it('completely full (not even the lock file fits): ENOSPC, and no empty lock wedges the next writer', async () => {
		const m = await nextTurn(100);
		disk.fill(0);
		await assert.rejects(m.flush(), failsWith('ENOSPC'));
		await assertIntactThenRecovers(m, () => disk.free());
	});

	it('read-only memory folder: EROFS; reading still works', async () => {
		const m = await nextTurn(100);
		disk.readOnly(true);
		await assert.rejects(m.flush(), failsWith('EROFS'));
		assert.equal(
			(await new TokenBufferMemory('wf', 'full', { storage }).getHistoryPromptMessages()).turns,
			1,
			'history is still readable',
		);
		await assertIntactThenRecovers(m, () => disk.readOnly(false));
	});
});
