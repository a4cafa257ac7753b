import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, promises as fs } from 'node:fs';
import { hostname } from 'node:os';

import { errnoCode } from '../common/errno';
import { sleep } from '../common/sleep';
import { StorageError } from '../errors';

export interface LockOptions {
	/** Give up waiting after this long. */
	timeoutMs: number;
	/** A lock from another host (shared folder) counts as abandoned after this long. */
	foreignStaleMs: number;
}

/**
 * Who holds a lock. A PID alone is not an identity: after a container restart n8n usually comes back
 * with the same PID and hostname, so a lock left by the killed container would name a live process.
 * The boot ID and the process start time (both from /proc) tell one life of a PID from another, and the
 * nonce tells this process's own locks from one an earlier life of the same PID left behind.
 */
export interface LockHolder {
	pid: number;
	host: string;
	nonce: string;
	bootId?: string;
	/** Start time of the holder process, in clock ticks since boot (/proc/<pid>/stat field 22). */
	startTime?: number;
}

const HOST = hostname();

function readProc(path: string): string | undefined {
	try {
		return readFileSync(path, 'utf8');
	} catch {
		return undefined; // not Linux, or the process is gone
	}
}

/** Start time of a process in clock ticks since boot, or undefined when it cannot be read. */
export function processStartTime(pid: number): number | undefined {
	const stat = readProc(`/proc/${pid}/stat`);
	if (!stat) return undefined;
	// Fields after the command name (which may contain spaces and parentheses): state is field 3.
	const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	const ticks = Number(fields[22 - 3]);
	return Number.isFinite(ticks) ? ticks : undefined;
}

/** Wall-clock start of a process in ms, from boot time + start ticks (assumes USER_HZ = 100). */
function processStartMs(pid: number): number | undefined {
	const ticks = processStartTime(pid);
	const btime = /^btime (\d+)$/m.exec(readProc('/proc/stat') ?? '')?.[1];
	return ticks === undefined || btime === undefined ? undefined : Number(btime) * 1000 + ticks * 10;
}

const BOOT_ID = readProc('/proc/sys/kernel/random/boot_id')?.trim();
const OWN_START = processStartTime(process.pid);
/** Nonces of the locks this process holds right now. */
const held = new Set<string>();

function pidAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return errnoCode(error) === 'EPERM';
	}
}

/** Whether the holder named in a lock file (written at `writtenMs`) is gone, on this host. */
function localHolderGone(holder: LockHolder, writtenMs: number): boolean {
	if (holder.bootId && BOOT_ID && holder.bootId !== BOOT_ID) return true; // the machine rebooted
	if (holder.pid === process.pid) return !held.has(holder.nonce); // an earlier life of our own PID
	if (!pidAlive(holder.pid)) return true;
	if (holder.startTime !== undefined) {
		const now = processStartTime(holder.pid);
		return now !== undefined && now !== holder.startTime; // the PID was recycled
	}
	// A lock without a start time (older format): a process cannot hold a lock written before it began.
	const started = processStartMs(holder.pid);
	return started !== undefined && writtenMs < started - 1000;
}

async function readHolder(
	lockPath: string,
): Promise<{ holder?: LockHolder; ino: bigint; mtimeMs: number } | undefined> {
	try {
		const [text, st] = await Promise.all([
			fs.readFile(lockPath, 'utf8'),
			fs.stat(lockPath, { bigint: true }),
		]);
		let holder: LockHolder | undefined;
		try {
			const parsed = JSON.parse(text) as LockHolder;
			holder =
				typeof parsed?.pid === 'number' && typeof parsed.host === 'string' ? parsed : undefined;
		} catch {
			holder = undefined; // still being written, or its writer died mid-write
		}
		return { holder, ino: st.ino, mtimeMs: Number(st.mtimeMs) };
	} catch (error) {
		if (errnoCode(error) === 'ENOENT') return undefined;
		throw error;
	}
}

/** Whether a lock, as read, is abandoned: its holder gone (this host), or too old (another host, or no holder). */
function abandoned(seen: { holder?: LockHolder; mtimeMs: number }, options: LockOptions): boolean {
	const ageMs = Date.now() - seen.mtimeMs;
	if (!seen.holder) return ageMs > 5000;
	return seen.holder.host === HOST
		? localHolderGone(seen.holder, seen.mtimeMs)
		: ageMs > options.foreignStaleMs;
}

/**
 * Moves the file at `lockPath` aside and deletes it, if it is still the inode `ino` once moved; another
 * file found there is put back. Safe only where nobody else may replace the file meanwhile (see
 * breakIfStale): a rename moves whatever is there, and another process could take the path between
 * the rename and the putting back.
 */
async function removeIfSame(lockPath: string, ino: bigint): Promise<void> {
	const aside = `${lockPath}.stale-${randomUUID()}`;
	try {
		await fs.rename(lockPath, aside);
	} catch (error) {
		if (errnoCode(error) === 'ENOENT') return;
		throw error;
	}
	const moved = await fs.stat(aside, { bigint: true });
	if (moved.ino !== ino) await fs.link(aside, lockPath).catch(() => {}); // not the one judged: give it back
	await fs.unlink(aside);
}

/** The file beside a lock that its breakers take turns with. */
const breakerOf = (lockPath: string) => `${lockPath}.break`;

/**
 * Removes the lock if its holder is gone. Breakers take turns (a lock file of their own beside it,
 * taken as the lock is), and the one whose turn it is judges the lock again and removes it only if it
 * is still the file judged. Without turns, two waiters that both judged a dead holder's lock could
 * interleave so that one moved aside the fresh lock the other had just taken, and a third took the
 * path before it was put back: two holders, and a lost write. Returns true when the caller should try
 * again at once.
 */
async function breakIfStale(lockPath: string, options: LockOptions): Promise<boolean> {
	const seen = await readHolder(lockPath);
	if (!seen) return true;
	if (!abandoned(seen, options)) return false;
	const breaker = breakerOf(lockPath);
	const turn = await take(breaker);
	if (!turn) {
		// Another breaker's turn, or what a breaker killed in its turn left (it never holds it long).
		const other = await readHolder(breaker);
		if (other && abandoned(other, options)) await removeIfSame(breaker, other.ino);
		return false;
	}
	try {
		const again = await readHolder(lockPath);
		if (!again) return true;
		// While the turn is held nobody else moves the lock, and nobody takes it while it is there.
		if (again.ino === seen.ino && abandoned(again, options))
			await removeIfSame(lockPath, again.ino);
		return true;
	} finally {
		await turn.release();
	}
}

/** This process as a lock's holder (a new nonce for each lock). */
const newHolder = (): LockHolder => ({
	pid: process.pid,
	host: HOST,
	nonce: randomUUID(),
	bootId: BOOT_ID,
	startTime: OWN_START,
});

/**
 * Takes the lock file at `lockPath` if nobody holds it (undefined if somebody does). The file appears
 * with its holder already written (temp file, then link): a process killed while taking it can never
 * leave an empty lock that others would have to wait out.
 */
async function take(lockPath: string): Promise<{ release: () => Promise<void> } | undefined> {
	const me = newHolder();
	const tmp = `${lockPath}.new-${randomBytes(6).toString('hex')}`;
	let ino: bigint | undefined;
	try {
		await fs.writeFile(tmp, JSON.stringify(me), { flag: 'wx' });
		await fs.link(tmp, lockPath);
		held.add(me.nonce);
		ino = (await fs.stat(lockPath, { bigint: true })).ino;
	} catch (error) {
		held.delete(me.nonce);
		if (errnoCode(error) !== 'EEXIST') throw error;
	} finally {
		await fs.unlink(tmp).catch(() => {});
	}
	if (ino === undefined) return undefined;
	const mine = ino;
	return {
		release: async () => {
			held.delete(me.nonce);
			// Only our own lock file: if it was judged stale and re-taken, the new one is not ours to remove.
			const st = await fs.stat(lockPath, { bigint: true }).catch(() => undefined);
			if (st?.ino === mine) await fs.unlink(lockPath).catch(() => {});
		},
	};
}

/**
 * An exclusive lock file (O_EXCL) naming its holder. A crashed holder cannot wedge it: waiters see the
 * holder is gone (dead, recycled PID, or an earlier life of a restarted container) and break the lock.
 */
export async function acquireFileLock(
	lockPath: string,
	what: string,
	options: LockOptions,
): Promise<() => Promise<void>> {
	const deadline = Date.now() + options.timeoutMs;
	let delay = 1;
	for (;;) {
		const lock = await take(lockPath);
		if (lock) return lock.release;
		if (await breakIfStale(lockPath, options)) continue;
		if (Date.now() > deadline) {
			const seen = await readHolder(lockPath);
			const by = seen?.holder ? ` (held by process ${seen.holder.pid} on ${seen.holder.host})` : '';
			throw new StorageError(
				`Timed out after ${options.timeoutMs} ms waiting for the lock on ${what}${by}`,
			);
		}
		await sleep(delay + Math.random() * delay);
		delay = Math.min(delay * 2, 25);
	}
}
