import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { hostname } from 'node:os';

import { StorageError } from '../errors';

export interface LockOptions {
	/** Give up waiting after this long. */
	timeoutMs: number;
	/** A lock from another host (shared folder) counts as abandoned after this long. */
	foreignStaleMs: number;
}

interface Holder {
	pid: number;
	host: string;
	nonce: string;
}

const HOST = hostname();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pidAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
}

async function readHolder(lockPath: string): Promise<{ holder?: Holder; ino: bigint; ageMs: number } | undefined> {
	try {
		const [text, st] = await Promise.all([fs.readFile(lockPath, 'utf8'), fs.stat(lockPath, { bigint: true })]);
		let holder: Holder | undefined;
		try {
			holder = JSON.parse(text) as Holder;
		} catch {
			holder = undefined; // still being written, or its writer died mid-write
		}
		return { holder, ino: st.ino, ageMs: Date.now() - Number(st.mtimeMs) };
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
		throw error;
	}
}

/**
 * Removes the lock if its holder is gone: a dead process on this host, or a foreign lock older than
 * foreignStaleMs. The lock is renamed aside and its inode checked, so a fresh lock taken meanwhile by
 * someone else is put back rather than broken. Returns true when the caller should try again at once.
 */
async function breakIfStale(lockPath: string, options: LockOptions): Promise<boolean> {
	const seen = await readHolder(lockPath);
	if (!seen) return true;
	const { holder, ino, ageMs } = seen;
	const stale = holder
		? holder.host === HOST
			? !pidAlive(holder.pid)
			: ageMs > options.foreignStaleMs
		: ageMs > 5000;
	if (!stale) return false;
	const aside = `${lockPath}.stale-${randomUUID()}`;
	try {
		await fs.rename(lockPath, aside);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
		throw error;
	}
	const moved = await fs.stat(aside, { bigint: true });
	if (moved.ino !== ino) {
		await fs.link(aside, lockPath).catch(() => {}); // not the lock we judged: give it back
	}
	await fs.unlink(aside);
	return true;
}

/**
 * An exclusive lock file (O_EXCL) naming its holder. A crashed holder cannot wedge it:
 * waiters see the holder's process is gone and break the lock.
 */
export async function acquireFileLock(lockPath: string, what: string, options: LockOptions): Promise<() => Promise<void>> {
	const me: Holder = { pid: process.pid, host: HOST, nonce: randomUUID() };
	const deadline = Date.now() + options.timeoutMs;
	let delay = 1;
	for (;;) {
		try {
			const handle = await fs.open(lockPath, 'wx');
			try {
				await handle.writeFile(JSON.stringify(me));
			} finally {
				await handle.close();
			}
			return async () => {
				await fs.unlink(lockPath).catch(() => {});
			};
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
		}
		if (await breakIfStale(lockPath, options)) continue;
		if (Date.now() > deadline) {
			const seen = await readHolder(lockPath);
			const by = seen?.holder ? ` (held by process ${seen.holder.pid} on ${seen.holder.host})` : '';
			throw new StorageError(`Timed out after ${options.timeoutMs} ms waiting for the lock on ${what}${by}`);
		}
		await sleep(delay + Math.random() * delay);
		delay = Math.min(delay * 2, 25);
	}
}
