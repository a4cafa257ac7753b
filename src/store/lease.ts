// Locks that expire, on any storage: a lease object taken by compare-and-swap, renewed while its
// holder works, and taken over once expired, so a crashed holder (a sync killed mid-way) never blocks
// the next one for longer than the lease's duration. Unlike file-lock.ts, they work on S3 too.
import { randomUUID } from 'node:crypto';

import { z } from 'zod';

import { ConflictError, CorruptDocumentError, LeaseLostError } from '../errors';
import { decodeJsonObject, encodeJson } from './codec';
import { parse } from './parse';
import type { MemoryStorage } from './storage';

/** A lease object (a Memory Base's `lease.json`): who holds the lock and until when. */
export interface Lease {
	holder: string;
	operation: string;
	acquired_at: string;
	expires_at: string;
}

const timestamp = z.iso.datetime({ offset: true });

const leaseSchema = z.looseObject({
	holder: z.string().min(1),
	operation: z.string(),
	acquired_at: timestamp,
	expires_at: timestamp,
});

export function decodeLease(key: string, bytes: Uint8Array): Lease {
	return parse(key, leaseSchema, decodeJsonObject(key, bytes));
}

/** A lease as stored, with the version a compare-and-swap must name to replace or delete it. */
export interface StoredLease {
	lease: Lease;
	version: string;
}

/** The lease at `key`, or null. An unreadable lease object reads as one that has expired (it is only a lock). */
export async function readLease(storage: MemoryStorage, key: string): Promise<StoredLease | null> {
	const got = await storage.get(key);
	if (!got) return null;
	try {
		return { lease: decodeLease(key, got.body), version: got.version };
	} catch (error) {
		if (!(error instanceof CorruptDocumentError)) throw error;
		const t = new Date(0).toISOString();
		return {
			lease: { holder: 'unreadable', operation: 'unknown', acquired_at: t, expires_at: t },
			version: got.version,
		};
	}
}

export function isFresh(lease: Lease, now = Date.now()): boolean {
	return Date.parse(lease.expires_at) > now;
}

export interface LeaseOptions {
	/** How long the lease lasts without renewal (renewed every third of it while held). */
	ttlMs: number;
	/** What the holder does (a Memory Base's "sync", "regenerate", "delete"), shown to whoever finds it held. */
	operation: string;
}

/** A held lease. Call release() when done (in `finally`); check() before writing what the lease guards. */
export class HeldLease {
	private lost = false;
	private released = false;
	private chain: Promise<void> = Promise.resolve();
	private timer: ReturnType<typeof setInterval> | undefined;

	constructor(
		private readonly storage: MemoryStorage,
		readonly key: string,
		private version: string,
		private lease: Lease,
		private readonly ttlMs: number,
	) {
		// Renewed in the background too, so a long embedding call does not let it expire; a crashed
		// process stops renewing and its lease expires.
		this.timer = setInterval(() => void this.renew().catch(() => {}), Math.max(50, ttlMs / 3));
		this.timer.unref?.();
	}

	get holder(): string {
		return this.lease.holder;
	}

	/** Extends the lease; LeaseLostError if another holder took it over (it had expired). */
	renew(): Promise<void> {
		const run = this.chain.then(async () => {
			if (this.released) return;
			if (this.lost) throw new LeaseLostError(this.key);
			const now = Date.now();
			const next: Lease = { ...this.lease, expires_at: new Date(now + this.ttlMs).toISOString() };
			try {
				const { version } = await this.storage.put(this.key, encodeJson(next), {
					ifVersion: this.version,
					contentType: 'application/json',
				});
				this.version = version;
				this.lease = next;
			} catch (error) {
				if (error instanceof ConflictError) {
					this.lost = true;
					throw new LeaseLostError(this.key);
				}
				throw error;
			}
		});
		this.chain = run.catch(() => {});
		return run;
	}

	/**
	 * Stops the renewals in the background (renew and confirm still work). A whole's lock takes its
	 * parts' leases to find their holders, then guards them by its own lease: renewing every part's
	 * would cost a write per part every third of the lease, the whole time.
	 */
	stopRenewing(): void {
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
	}

	/** Throws LeaseLostError when a renewal found the lease taken over. */
	check(): void {
		if (this.lost) throw new LeaseLostError(this.key);
	}

	/** Renews now and throws if the lease was lost: call it right before the write the lease guards. */
	async confirm(): Promise<void> {
		await this.renew();
	}

	/** Removes the lease if it is still this holder's (a taken-over lease is left to its new holder). */
	async release(): Promise<void> {
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
		await this.chain;
		if (this.released) return;
		this.released = true;
		if (this.lost) return;
		try {
			await this.storage.delete(this.key, { ifVersion: this.version });
		} catch (error) {
			if (!(error instanceof ConflictError)) throw error;
		}
	}
}

/**
 * Takes the lease at `key`: creates it (create-only), or replaces one that has expired (compare-and-swap
 * on the version read). A fresh lease of another holder, or losing either race, calls `held` with what
 * is there and throws the error it returns.
 */
export async function acquireLease(
	storage: MemoryStorage,
	key: string,
	options: LeaseOptions,
	held: (lease: Lease | undefined) => Error,
): Promise<HeldLease> {
	const current = await readLease(storage, key);
	const now = Date.now();
	if (current && isFresh(current.lease, now)) throw held(current.lease);
	const lease: Lease = {
		holder: randomUUID(),
		operation: options.operation,
		acquired_at: new Date(now).toISOString(),
		expires_at: new Date(now + options.ttlMs).toISOString(),
	};
	try {
		const { version } = await storage.put(key, encodeJson(lease), {
			ifVersion: current ? current.version : null,
			contentType: 'application/json',
		});
		return new HeldLease(storage, key, version, lease, options.ttlMs);
	} catch (error) {
		if (!(error instanceof ConflictError)) throw error;
		throw held((await readLease(storage, key))?.lease);
	}
}
